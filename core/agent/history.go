package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// Archive is the part of a transcript that compaction set aside
// (*store.DB).
type Archive interface {
	// Archived returns the thread's archived entries, oldest first.
	Archived(ctx context.Context, t core.Thread) ([]core.Entry, error)
}

// History searches the archive of the running turn's thread. It backs the
// history_search tool: a summary is bounded, so an identifier or a detail
// it had no room for is still one search away, never lost.
type History struct {
	archive Archive
}

// NewHistory returns a History over archive.
func NewHistory(archive Archive) *History { return &History{archive: archive} }

// Limits of one search's answer.
const (
	historyHits    = 8
	historyExcerpt = 600 // bytes around the first match
)

// ErrNoQuery is a history search without anything to look for.
var ErrNoQuery = errors.New("agent: history search needs a query")

// Search returns the archived messages of the turn's thread that contain
// every word of query (case-insensitively), newest first, each as an
// excerpt around its first match; "" when none does. ctx must carry the
// turn (core.WithTurn), whose thread is the only one searched.
func (h *History) Search(ctx context.Context, query string) (string, error) {
	t, ok := core.TurnFrom(ctx)
	if !ok {
		return "", errors.New("agent: history search outside a turn")
	}
	terms := strings.Fields(strings.ToLower(query))
	if len(terms) == 0 {
		return "", ErrNoQuery
	}
	entries, err := h.archive.Archived(ctx, t.Inbound.Thread)
	if err != nil {
		return "", fmt.Errorf("agent: read the archive of %s: %w", t.Inbound.Thread, err)
	}
	var b strings.Builder
	hits := 0
	for i := len(entries) - 1; i >= 0 && hits < historyHits; i-- {
		var r record
		if err := json.Unmarshal(entries[i].Data, &r); err != nil || r.Msg == nil {
			continue // an entry this version cannot read is skipped, not fatal
		}
		text := messageText(*r.Msg)
		at := matchAll(strings.ToLower(text), terms)
		if at < 0 {
			continue
		}
		hits++
		fmt.Fprintf(&b, "[%s] %s\n", roleLabel(*r.Msg), excerpt(text, at, historyExcerpt))
	}
	return b.String(), nil
}

// messageText is what a message said: its content and its tool calls.
func messageText(m llm.Message) string {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, tc := range m.ToolCalls {
		b.WriteString("\n-> " + tc.Function.Name + " " + tc.Function.Arguments)
	}
	return b.String()
}

func roleLabel(m llm.Message) string {
	if m.Role == llm.RoleTool && m.Name != "" {
		return "tool " + m.Name
	}
	return m.Role
}

// matchAll returns where the first of terms occurs in text when every
// term occurs, else -1.
func matchAll(text string, terms []string) int {
	first := -1
	for _, term := range terms {
		i := strings.Index(text, term)
		if i < 0 {
			return -1
		}
		if first < 0 {
			first = i
		}
	}
	return first
}

// excerpt returns about width bytes of text around at, on rune
// boundaries, marking what was cut.
func excerpt(text string, at, width int) string {
	if len(text) <= width {
		return strings.TrimSpace(text)
	}
	start := max(0, at-width/3)
	end := min(len(text), start+width)
	for start > 0 && text[start]&0xC0 == 0x80 {
		start--
	}
	for end < len(text) && text[end]&0xC0 == 0x80 {
		end++
	}
	out := strings.TrimSpace(text[start:end])
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}

// Messages decodes transcript entries (archived, then live) into the
// messages they hold, in order, for an operator's export. Entries that
// hold no message (anchors) are skipped.
func Messages(entries []core.Entry) ([]llm.Message, error) {
	out := make([]llm.Message, 0, len(entries))
	for _, e := range entries {
		var r record
		if err := json.Unmarshal(e.Data, &r); err != nil {
			return nil, fmt.Errorf("agent: decode entry %d: %w", e.Seq, err)
		}
		if r.Msg != nil {
			out = append(out, *r.Msg)
		}
	}
	return out, nil
}
