package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/neobot/neobot/core/governance"
)

// RunPlaceSettings runs the governance part of the suite against stores
// from open.
func RunPlaceSettings(t *testing.T, open func(t *testing.T) governance.Store) {
	t.Run("PlaceSettings", func(t *testing.T) { testPlaceSettings(t, open(t)) })
}

func testPlaceSettings(t *testing.T, s governance.Store) {
	ctx := t.Context()
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	if v, err := s.PlaceSettings(ctx, "slack:T1/C1"); err != nil || v.Number != 0 {
		t.Fatalf("PlaceSettings(never set) = %+v, %v; want version 0", v, err)
	}
	no := false
	changes := []struct {
		place, by string
		edit      func(*governance.Settings)
	}{
		{"slack:T1/C1", "slack:T1/UALICE", func(s *governance.Settings) { s.Skill = "reader" }},
		{"slack:T1", "cli:ops", func(s *governance.Settings) { s.DailyTokens = 50000 }},
		{"slack:T1/C1", "slack:T1/UBOB", func(s *governance.Settings) { s.Instructions, s.Spend = "Answer in French.", &no }},
		{"slack:T1/C10", "web:carol", func(s *governance.Settings) { s.Approvers = []string{"UCAROL"} }},
	}
	for i, c := range changes {
		if _, err := governance.Change(ctx, s, c.place, c.by, at.Add(time.Duration(i)*time.Minute), c.edit); err != nil {
			t.Fatalf("Change(%s by %s) = %v", c.place, c.by, err)
		}
	}
	v, err := s.PlaceSettings(ctx, "slack:T1/C1")
	want := governance.Settings{Skill: "reader", Instructions: "Answer in French.", Spend: &no}
	if err != nil || v.Number != 2 || !v.Settings.Equal(want) || v.By != "slack:T1/UBOB" || !v.At.Equal(at.Add(2*time.Minute)) {
		t.Fatalf("PlaceSettings = %+v, %v; want version 2 by UBOB saying %+v", v, err, want)
	}
	if !v.Before.Equal(governance.Settings{Skill: "reader"}) {
		t.Errorf("version 2's before = %+v, want version 1's settings", v.Before)
	}
	// A change made from a stale read is refused, and nothing is lost.
	stale := v
	stale.Settings.Skill = "finance"
	if err := s.SetPlaceSettings(ctx, stale); !errors.Is(err, governance.ErrConflict) {
		t.Errorf("SetPlaceSettings(version 2 again) = %v, want ErrConflict", err)
	}
	skip := v
	skip.Number = 4
	if err := s.SetPlaceSettings(ctx, skip); !errors.Is(err, governance.ErrConflict) {
		t.Errorf("SetPlaceSettings(version 4 after 2) = %v, want ErrConflict", err)
	}
	h, err := s.PlaceHistory(ctx, "slack:T1/C1")
	if err != nil || len(h) != 2 || h[0].Number != 1 || h[1].Number != 2 || h[0].By != "slack:T1/UALICE" {
		t.Fatalf("PlaceHistory = %+v, %v; want versions 1 and 2, oldest first", h, err)
	}
	places, err := s.Places(ctx)
	var got []string
	for _, p := range places {
		got = append(got, p.Place)
	}
	if err != nil || len(places) != 3 || got[0] != "slack:T1" || got[1] != "slack:T1/C1" || got[2] != "slack:T1/C10" || places[1].Number != 2 {
		t.Errorf("Places = %q (%+v), %v; want slack:T1, slack:T1/C1 at version 2, slack:T1/C10", got, places, err)
	}
}
