package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/core/governance"
)

// RunPlaceSettings runs the governance part of the suite against stores
// from open.
func RunPlaceSettings(t *testing.T, open func(t *testing.T) governance.Store) {
	t.Run("PlaceSettings", func(t *testing.T) { testPlaceSettings(t, open(t)) })
	t.Run("StartFromFile", func(t *testing.T) { testStartFromFile(t, open(t)) })
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

// testStartFromFile: the settings file's binding of a place is stored as
// its version 1 once, however many instances start at once, and never
// over a version already stored.
func testStartFromFile(t *testing.T, s governance.Store) {
	ctx := t.Context()
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	file := governance.Settings{Skill: "reader"}
	var stored atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := governance.Start(ctx, s, "slack:T1/C1", file, at)
			if err != nil {
				t.Errorf("Start = %v", err)
			}
			if ok {
				stored.Add(1)
			}
		})
	}
	wg.Wait()
	h, err := s.PlaceHistory(ctx, "slack:T1/C1")
	if err != nil || stored.Load() != 1 || len(h) != 1 || h[0].Number != 1 || h[0].By != governance.FromFile || !h[0].Settings.Equal(file) || !h[0].At.Equal(at) {
		t.Fatalf("eight instances starting at once stored %d times; history = %+v, %v; want one version 1 by %q", stored.Load(), h, err, governance.FromFile)
	}
	// The store's own rule, raced: of eight writes of version 1 at once,
	// one is stored and the others fail with ErrConflict.
	go1 := make(chan struct{})
	var won, lost atomic.Int32
	for range 8 {
		wg.Go(func() {
			<-go1
			v := governance.Version{Place: "slack:T1/C2", Number: 1, By: governance.FromFile, At: at, Settings: file}
			switch err := s.SetPlaceSettings(ctx, v); {
			case err == nil:
				won.Add(1)
			case errors.Is(err, governance.ErrConflict):
				lost.Add(1)
			default:
				t.Errorf("SetPlaceSettings(version 1, raced) = %v, want nil or ErrConflict", err)
			}
		})
	}
	close(go1)
	wg.Wait()
	if h, err := s.PlaceHistory(ctx, "slack:T1/C2"); err != nil || won.Load() != 1 || lost.Load() != 7 || len(h) != 1 {
		t.Errorf("eight raced writes of version 1: %d stored, %d conflicts, history %+v, %v; want 1, 7 and one version", won.Load(), lost.Load(), h, err)
	}
	if _, err := governance.Change(ctx, s, "slack:T1/C1", "cli:ops", at.Add(time.Minute), func(st *governance.Settings) { st.Skill = "finance" }); err != nil {
		t.Fatal(err)
	}
	if ok, err := governance.Start(ctx, s, "slack:T1/C1", file, at.Add(time.Hour)); ok || err != nil {
		t.Errorf("Start over a stored version = %v, %v; want nothing stored", ok, err)
	}
	if v, err := s.PlaceSettings(ctx, "slack:T1/C1"); err != nil || v.Number != 2 || v.Settings.Skill != "finance" {
		t.Errorf("after a restart the place is %+v, %v; want the change kept", v, err)
	}
}
