package web

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/neobot/neobot/core"
)

// eagerHub starts each turn before Submit returns, as a busy hub may: the
// turn shows a step while the request that took its message is still
// between Accept and its answer.
type eagerHub struct{ a *Adapter }

func (h *eagerHub) Submit(ctx context.Context, in core.Inbound) (bool, error) {
	turn := core.WithTurn(context.Background(), &core.Turn{Inbound: in})
	return true, reporter{a: h.a, t: in.Thread}.Step(turn, core.Step{ID: "c1", Title: "Write file (fs)", State: core.StepRunning})
}

// TestMessageShownBeforeItsTurn: the author's message is on the stream
// before anything its turn shows, even when the turn speaks before the
// request that took the message returns, and it is shown once (the page
// puts a turn's steps below the last message it saw).
func TestMessageShownBeforeItsTurn(t *testing.T) {
	token, hash, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	hub := &eagerHub{}
	a, err := New(Options{Users: map[string]string{hash: "alice"}, Hub: hub, History: history{}})
	if err != nil {
		t.Fatal(err)
	}
	hub.a = a
	th := thread("alice", "c-echo")
	req := httptest.NewRequest("POST", "/v1/conversations/c-echo/messages", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if no := a.submit(req, th, "save a note", "", nil); no != nil {
		t.Fatalf("submit = %+v, want taken", no)
	}
	events, _, _ := a.feed.since(th.ID, "")
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	if len(types) != 2 || types[0] != EventMessage || types[1] != EventStep {
		t.Fatalf("events = %v, want the message once, then its turn's step", types)
	}
}
