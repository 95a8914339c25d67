package llm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// postures is an in-memory llm.Postures.
type postures struct {
	mu    sync.Mutex
	saved map[string]string
	saves int
	err   error
}

func (p *postures) ModelPosture(_ context.Context, model, endpoint string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.saved[model+" "+endpoint], p.err
}

func (p *postures) SaveModelPosture(_ context.Context, model, endpoint, posture string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if p.saved == nil {
		p.saved = map[string]string{}
	}
	p.saved[model+" "+endpoint] = posture
	p.saves++
	return nil
}

// TestRecallAfterRestart: what the first answer taught is saved, and a
// new client for the same model and endpoint (a restart) knows it before
// its first answer; a declared posture is never replaced by a stored one.
func TestRecallAfterRestart(t *testing.T) {
	srv := llmtest.New(t)
	store := &postures{}
	first := newClient(t, srv, nil)
	if err := first.Recall(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.Text("reasoning the prompt opened</think>Answer.").Streamed(3, 0),
		llmtest.Text("again</think>Answer.").Streamed(3, 0))
	for range 2 {
		if _, err := first.ChatStream(context.Background(), ask("hi"), func(string) {}); err != nil {
			t.Fatal(err)
		}
	}
	if store.saves != 1 {
		t.Errorf("saved %d times, want once: only a change is saved", store.saves)
	}

	restarted := newClient(t, srv, nil)
	if got := restarted.Posture(); got != llm.PostureAuto {
		t.Fatalf("a new client's Posture() = %q before Recall, want auto", got)
	}
	if err := restarted.Recall(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if got := restarted.Posture(); got != llm.PostureOpened {
		t.Errorf("after Recall Posture() = %q, want %q", got, llm.PostureOpened)
	}
	srv.Enqueue(llmtest.Text("secret musing</think>Shown at once.").Streamed(3, 0))
	var p pieces
	if _, err := restarted.ChatStream(context.Background(), ask("hi"), p.add); err != nil {
		t.Fatal(err)
	}
	if got := p.text(); got != "Shown at once." {
		t.Errorf("the restarted client's first answer showed %q, want only the answer", got)
	}

	other := newClient(t, srv, func(c *llm.Config) { c.Model = "accounts/fireworks/models/other" })
	if err := other.Recall(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if got := other.Posture(); got != llm.PostureAuto {
		t.Errorf("another model recalled %q, want auto: postures are per model", got)
	}

	declared := newClient(t, srv, func(c *llm.Config) { c.Posture = llm.PostureTagged })
	if err := declared.Recall(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if got := declared.Posture(); got != llm.PostureTagged {
		t.Errorf("declared no, recalled %q: the setting must win", got)
	}
}

func TestRecallError(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	err := c.Recall(context.Background(), &postures{err: errors.New("disk on fire")})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Recall with a failing store = %v, want its error", err)
	}
}

func TestParsePosture(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want llm.Posture
		err  bool
	}{{"", llm.PostureAuto, false}, {"AUTO", llm.PostureAuto, false}, {" yes ", llm.PostureOpened, false}, {"no", llm.PostureTagged, false}, {"maybe", "", true}} {
		got, err := llm.ParsePosture("NEO_X", tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("ParsePosture(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && (!strings.Contains(err.Error(), "NEO_X") || !strings.Contains(err.Error(), "auto")) {
			t.Errorf("ParsePosture(%q) error %q does not name the setting and the values", tc.in, err)
		}
	}
	if _, err := llm.New(llm.Config{Model: "gpt-4.1", APIKey: "k", Posture: "sometimes"}); err == nil || !strings.Contains(err.Error(), "NEO_MODEL_OPENS_IN_REASONING") {
		t.Errorf("New with a bad posture = %v, want an error naming the setting", err)
	}
}
