// Package memorytest holds doubles for tests of what memory keeps and
// shows: an in-memory [memory.Store], a cheap model that finds given facts
// in every message, and [Shown], what memory shows in a conversation.
package memorytest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/memory"
)

// Store is an in-memory memory.Store. Its zero value is ready to use.
type Store struct {
	mu sync.Mutex
	m  map[string]memory.Record
}

// WriteMemories stores put and deletes del.
func (s *Store) WriteMemories(_ context.Context, put []memory.Record, del []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]memory.Record{}
	}
	for _, id := range del {
		delete(s.m, id)
	}
	for _, r := range put {
		s.m[r.ID] = r
	}
	return nil
}

// ScanMemories calls fn with every record.
func (s *Store) ScanMemories(_ context.Context, fn func(memory.Record) error) error {
	s.mu.Lock()
	recs := make([]memory.Record, 0, len(s.m))
	for _, r := range s.m {
		recs = append(recs, r)
	}
	s.mu.Unlock()
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// AboutAuthor is a cheap model that finds the same facts, each a profile
// line about the message's author, in every message it is shown; it
// answers a reconcile with no operations (each fact then changes nothing).
type AboutAuthor []string

// Chat answers an extraction with the facts.
func (m AboutAuthor) Chat(context.Context, llm.ChatRequest) (*llm.ChatResult, error) {
	type fact struct {
		Text  string `json:"text"`
		Kind  string `json:"kind"`
		About string `json:"about"`
	}
	var out struct {
		Facts []fact `json:"facts"`
	}
	for _, f := range m {
		out.Facts = append(out.Facts, fact{f, "profile", "user"})
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("memorytest: %w", err)
	}
	return &llm.ChatResult{Message: llm.AssistantMessage(string(raw)), FinishReason: llm.FinishStop}, nil
}

// Shown returns what memory shows the author of in, in in's conversation,
// for query: the turn's page fault (profile and memories, as the system
// block gets them) and memory_recall's answer.
func Shown(t testing.TB, c *memory.Cortex, in core.Inbound, query string) string {
	t.Helper()
	ctx := context.Background()
	rec, err := c.Fault(ctx, in, query)
	if err != nil {
		t.Fatalf("Fault = %v", err)
	}
	tool, err := c.RecallTool(core.WithTurn(ctx, &core.Turn{Inbound: in}), query)
	if err != nil {
		t.Fatalf("RecallTool = %v", err)
	}
	return fmt.Sprintf("profile: %s\nmemories: %q\nmemory_recall: %s", rec.Profile, rec.Memories, tool)
}
