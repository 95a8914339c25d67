package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/neobot/neobot/core/memory"
)

func testMemories(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	scope := memory.Scope{Platform: "slack", Workspace: "T1", User: "U1"}
	rec := func(id string, kind memory.Kind, text string) memory.Record {
		return memory.Record{ID: id, Scope: scope, Kind: kind, Text: text, Entities: []string{"x"}, Created: epoch, Updated: epoch}
	}
	steps := []struct {
		name string
		put  []memory.Record
		del  []string
		want map[string]string // id -> text
	}{
		{"put", []memory.Record{rec("m1", memory.KindFact, "a"), rec("m2", memory.KindPreference, "b"), rec("m3", memory.KindProcedure, "c")}, nil,
			map[string]string{"m1": "a", "m2": "b", "m3": "c"}},
		{"replace", []memory.Record{rec("m1", memory.KindFact, "a2")}, nil,
			map[string]string{"m1": "a2", "m2": "b", "m3": "c"}},
		{"kind changes", []memory.Record{rec("m2", memory.KindFact, "b2")}, nil,
			map[string]string{"m1": "a2", "m2": "b2", "m3": "c"}},
		{"put and delete", []memory.Record{rec("m4", memory.KindTurn, "d")}, []string{"m1", "m3", "missing"},
			map[string]string{"m2": "b2", "m4": "d"}},
		// Deletions come first: a record deleted and put in one write
		// is stored.
		{"delete and put back", []memory.Record{rec("m2", memory.KindFact, "b3"), rec("m5", memory.KindFact, "e")}, []string{"m2", "m5"},
			map[string]string{"m2": "b3", "m4": "d", "m5": "e"}},
	}
	for _, s := range steps {
		if err := b.WriteMemories(ctx, s.put, s.del); err != nil {
			t.Fatalf("%s: WriteMemories = %v", s.name, err)
		}
		got := map[string]string{}
		err := b.ScanMemories(ctx, func(r memory.Record) error {
			if _, dup := got[r.ID]; dup {
				t.Errorf("%s: ScanMemories returned %s twice", s.name, r.ID)
			}
			got[r.ID] = r.Text
			if r.Scope != scope || !slices.Equal(r.Entities, []string{"x"}) || !r.Created.Equal(epoch) {
				t.Errorf("%s: ScanMemories record %+v lost fields", s.name, r)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: ScanMemories = %v", s.name, err)
		}
		if len(got) != len(s.want) {
			t.Fatalf("%s: records = %v, want %v", s.name, got, s.want)
		}
		for id, text := range s.want {
			if got[id] != text {
				t.Errorf("%s: record %s = %q, want %q", s.name, id, got[id], text)
			}
		}
	}
}
