package governance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core/governance"
)

// memStore is an in-memory governance.Store.
type memStore struct {
	versions map[string][]governance.Version
}

func (m *memStore) PlaceSettings(_ context.Context, place string) (governance.Version, error) {
	vs := m.versions[place]
	if len(vs) == 0 {
		return governance.Version{Place: place}, nil
	}
	return vs[len(vs)-1], nil
}

func (m *memStore) SetPlaceSettings(ctx context.Context, v governance.Version) error {
	cur, _ := m.PlaceSettings(ctx, v.Place)
	if cur.Number != v.Number-1 {
		return governance.ErrConflict
	}
	m.versions[v.Place] = append(m.versions[v.Place], v)
	return nil
}

func (m *memStore) PlaceHistory(_ context.Context, place string) ([]governance.Version, error) {
	return m.versions[place], nil
}

func (m *memStore) Places(context.Context) ([]governance.Version, error) { return nil, nil }

func TestChange(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name, place, by string
		edit            func(*governance.Settings)
		want            string // in the error; "" for none
	}{
		{"a channel's skill", "slack:T1/C1", "slack:T1/UALICE", func(s *governance.Settings) { s.Skill = "reader" }, ""},
		{"the same again", "slack:T1/C1", "slack:T1/UALICE", func(s *governance.Settings) { s.Skill = "reader" }, "already say that"},
		{"not a place", "#general", "cli:ops", func(s *governance.Settings) { s.Skill = "x" }, "not a place"},
		{"nobody", "slack:T1", "", func(s *governance.Settings) { s.Skill = "x" }, "who made it"},
		{"long instructions", "web", "cli:ops", func(s *governance.Settings) { s.Instructions = strings.Repeat("a", 8001) }, "8001 bytes"},
		{"negative budget", "discord:1", "cli:ops", func(s *governance.Settings) { s.DailyTokens = -1 }, "daily_tokens"},
		{"approver list in one", "slack:dm", "cli:ops", func(s *governance.Settings) { s.Approvers = []string{"U1,U2"} }, "not a user ID"},
		{"an Enterprise Grid organization", "slack:E1", "cli:ops", func(s *governance.Settings) { s.Skill, s.Approvers = "reader", []string{"U1"} }, ""},
		{"an organization's budget", "slack:E2", "cli:ops", func(s *governance.Settings) { s.DailyTokens = 5000 }, "usage is counted by workspace"},
		{"a channel under an organization", "slack:E1/C1", "cli:ops", func(s *governance.Settings) { s.Skill = "reader" }, "not a place"},
	}
	s := &memStore{versions: map[string][]governance.Version{}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := governance.Change(ctx, s, tt.place, tt.by, now, tt.edit)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Change = %v, want it made", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Change = %+v, %v; want an error saying %q", v, err, tt.want)
			case tt.want == "" && (v.Number != 1 || v.At.Location() != time.UTC || v.By != tt.by):
				t.Errorf("Change = %+v, want version 1 by %s, at a UTC time", v, tt.by)
			}
		})
	}
	if _, err := governance.Change(ctx, s, "slack:T1/C1", "x", now, func(s *governance.Settings) { s.Skill = "reader" }); !errors.Is(err, governance.ErrUnchanged) {
		t.Errorf("Change(no difference) = %v, want ErrUnchanged", err)
	}
	// The edit gets a copy: changing its approvers leaves the stored version alone.
	_, _ = governance.Change(ctx, s, "slack:T2", "x", now, func(s *governance.Settings) { s.Approvers = []string{"U1"} })
	_, _ = governance.Change(ctx, s, "slack:T2", "x", now, func(s *governance.Settings) { s.Approvers[0] = "U2" })
	if h := s.versions["slack:T2"]; len(h) != 2 || h[0].Settings.Approvers[0] != "U1" || h[1].Before.Approvers[0] != "U1" {
		t.Errorf("history = %+v, want version 1 to keep U1", h)
	}
}
