package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/store"
)

// TestWebSearchReadsEveryConversation: a search finds a conversation
// older than the latest 100 a list shows.
func TestWebSearchReadsEveryConversation(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(filepath.Join(t.TempDir(), "neobot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = web.MaxListed + 20
	for i := range n {
		text := fmt.Sprintf("conversation %d", i)
		if i == 0 {
			text = "where is the needle?" // the oldest
		}
		data, err := agent.StoppedAnswer(text) // any entry the transcript shows
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("%024x", i+1)
		if _, err := db.AppendEntries(ctx, core.Thread{Platform: web.Platform, Workspace: web.Workspace, Channel: "alice", ID: id}, data); err != nil {
			t.Fatal(err)
		}
	}
	token, hash, _ := web.NewToken()
	a, err := web.New(web.Options{Users: map[string]string{hash: "alice"}, Hub: noHub{}, History: newWebHistory(db)})
	if err != nil {
		t.Fatal(err)
	}
	list := func(q string) []web.Summary {
		req := httptest.NewRequest("GET", "/v1/conversations?q="+q, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, req)
		var out struct{ Conversations []web.Summary }
		_ = json.NewDecoder(rec.Body).Decode(&out)
		return out.Conversations
	}
	if got := list(""); len(got) != web.MaxListed {
		t.Errorf("the list shows %d conversations, want the latest %d", len(got), web.MaxListed)
	}
	if got := list("needle"); len(got) != 1 || got[0].ID != fmt.Sprintf("%024x", 1) {
		t.Errorf("search for needle = %+v, want the oldest conversation, past the latest %d", got, web.MaxListed)
	}
}

// noHub takes no message: the search test sends none.
type noHub struct{}

func (noHub) Submit(context.Context, core.Inbound) (bool, error) { return false, nil }
