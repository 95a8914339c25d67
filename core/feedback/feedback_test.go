package feedback_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/feedback"
)

type memStore struct{ saved []core.Rating }

func (m *memStore) SaveRating(_ context.Context, r core.Rating) error {
	m.saved = append(m.saved, r)
	return nil
}

func (m *memStore) Ratings(context.Context, time.Time) ([]core.Rating, error) { return m.saved, nil }

// TestRate: a rating is completed with the turn's question and answer,
// the skill and the model; a turn the thread does not hold is refused;
// the reason after a thumbs down is kept but not counted again; an up
// keeps no reason.
func TestRate(t *testing.T) {
	st := &memStore{}
	var counted []string
	now := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	s, err := feedback.New(feedback.Options{
		Store: st,
		Turn: func(_ context.Context, th core.Thread, id string) (string, string, error) {
			if id != "E1" {
				return "", "", fmt.Errorf("turn %s: %w", id, core.ErrNotFound)
			}
			return "how?", "like so", nil
		},
		Skill:   func(in core.Inbound) string { return map[bool]string{true: "dm-skill", false: "ops"}[in.DM] },
		Model:   "m1",
		Observe: func(r core.Rating) { counted = append(counted, r.Kind()) },
		Now:     func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	for _, r := range []core.Rating{
		{Thread: th, Turn: "E1", User: "U1", Up: true, Reason: "ignored"},
		{Thread: th, Turn: "E1", User: "U2"},
		{Thread: th, Turn: "E1", User: "U2", Reason: "  " + strings.Repeat("x", feedback.MaxReason+10), FollowUp: true},
	} {
		if err := s.Rate(ctx, r); err != nil {
			t.Fatalf("Rate(%+v) = %v", r, err)
		}
	}
	if err := s.Rate(ctx, core.Rating{Thread: th, Turn: "E9", User: "U1", Up: true}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("rating an unknown turn = %v, want ErrNotFound", err)
	}
	if err := s.Rate(ctx, core.Rating{Thread: th, User: "U1", Up: true}); err == nil {
		t.Error("a rating without a turn was taken")
	}
	if len(st.saved) != 3 {
		t.Fatalf("saved %d ratings, want 3", len(st.saved))
	}
	up, down, why := st.saved[0], st.saved[1], st.saved[2]
	if up.Reason != "" || up.Question != "how?" || up.Answer != "like so" || up.Skill != "ops" || up.Model != "m1" || !up.At.Equal(now) {
		t.Errorf("up = %+v, want no reason, the turn's text, skill ops, model m1, now", up)
	}
	if down.Up || why.Up || len([]rune(why.Reason)) != feedback.MaxReason || strings.HasPrefix(why.Reason, " ") {
		t.Errorf("down, reason = %+v, %+v; want downs, the reason trimmed and capped", down, why)
	}
	if fmt.Sprint(counted) != "[up down]" {
		t.Errorf("counted %v, want [up down]: the reason that follows is not a new rating", counted)
	}
}

// TestRated: feedback buttons rate the turn whose answer they sit under,
// and only when something records the click.
func TestRated(t *testing.T) {
	var rater core.Rater = raterFunc(func(context.Context, core.Rating) error { return nil })
	turn := &core.Turn{Inbound: core.Inbound{EventID: "Ev1"}}
	ctx := core.WithTurn(context.Background(), turn)
	if id, ok := feedback.Rated(ctx, rater); !ok || id != "Ev1" {
		t.Errorf("Rated(turn Ev1) = %q, %v; want Ev1", id, ok)
	}
	if _, ok := feedback.Rated(ctx, nil); ok {
		t.Error("Rated without a rater = true, want no buttons: nothing would record the click")
	}
	if _, ok := feedback.Rated(context.Background(), rater); ok {
		t.Error("Rated without a turn = true, want nothing to rate")
	}
	if _, ok := feedback.Rated(core.WithTurn(context.Background(), &core.Turn{}), rater); ok {
		t.Error("Rated for a turn without an event ID = true, want nothing to rate")
	}
}

type raterFunc func(context.Context, core.Rating) error

func (f raterFunc) Rate(ctx context.Context, r core.Rating) error { return f(ctx, r) }
