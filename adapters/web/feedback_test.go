package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
)

// raterFunc is a core.Rater recording what it was given.
type raterFunc struct {
	mu  sync.Mutex
	got []core.Rating
}

func (f *raterFunc) Rate(_ context.Context, r core.Rating) error {
	if r.Turn == "E-unknown" {
		return fmt.Errorf("no such turn: %w", core.ErrNotFound)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, r)
	return nil
}

// TestRateAnswer: the owner of a conversation rates an answer by its
// turn; bad bodies, other people's conversations and unknown turns are
// refused.
func TestRateAnswer(t *testing.T) {
	alice, aliceHash, _ := NewToken()
	bob, bobHash, _ := NewToken()
	rater := &raterFunc{}
	a, err := New(Options{Users: map[string]string{aliceHash: "alice", bobHash: "bob"}, Hub: intaketest.NewHub(intaketest.NewThreads()),
		History: history{}, Rater: rater})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	conv := create(t, srv, alice)
	path := "/v1/conversations/" + conv + "/feedback"
	for _, tc := range []struct {
		token, body string
		want        int
	}{
		{alice, `{"turn":"E1","rating":"down","reason":"it was wrong"}`, http.StatusOK},
		{alice, `{"turn":"E1","rating":"meh"}`, http.StatusBadRequest},
		{alice, `{"rating":"up"}`, http.StatusBadRequest},
		{alice, `{"turn":"E-unknown","rating":"up"}`, http.StatusNotFound},
		{bob, `{"turn":"E1","rating":"up"}`, http.StatusNotFound},
	} {
		res := call(t, srv, tc.token, "POST", path, tc.body)
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("POST %s %s = %d, want %d", path, tc.body, res.StatusCode, tc.want)
		}
	}
	if len(rater.got) != 1 || rater.got[0].User != "alice" || rater.got[0].Up || rater.got[0].Reason != "it was wrong" || rater.got[0].Thread.ID != conv {
		t.Errorf("ratings = %+v, want alice's down with its reason in her conversation", rater.got)
	}
}
