package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// TestMarkCompletedEncodesAsMarshal: the completion mark edits a pending
// record's encoding into exactly what encoding the completed record
// gives, whatever the message holds, and leaves any other shape to the
// decoding path.
func TestMarkCompletedEncodesAsMarshal(t *testing.T) {
	journaled := time.Date(2026, 11, 25, 23, 0, 0, 123456789, time.UTC)
	now := journaled.Add(1500 * time.Millisecond)
	for _, text := range []string{
		"hi",
		`a text ending like the field,"pending":7}`,
		"quotes \" backslashes \\ <tags> & a line\nbreak, and ünïcode",
		"",
	} {
		in := core.Inbound{
			Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.2"},
			User:   "U1", Text: text, EventID: "Ev1", MessageID: "1.3",
		}
		pending := inboundRecord{Inbound: in, Journaled: journaled, Pending: 4242}
		v, err := json.Marshal(pending)
		if err != nil {
			t.Fatal(err)
		}
		got, seq, ok := markCompleted(v, now)
		if !ok || seq != 4242 {
			t.Fatalf("markCompleted(%s) = ok %v, pending %d; want ok and 4242", v, ok, seq)
		}
		done := inboundRecord{Inbound: in, Journaled: journaled, Completed: now}
		want, err := json.Marshal(done)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("markCompleted gives\n%s\nwant\n%s", got, want)
		}
		if _, _, ok := markCompleted(want, now); ok {
			t.Errorf("markCompleted took a completed record: %s", want)
		}
	}
	for _, v := range []string{``, `{}`, `{"inbound":{},"journaled":"2026-11-25T23:00:00Z"}`, `{"pending":x}`, `{"pending":0}`} {
		if _, _, ok := markCompleted([]byte(v), now); ok {
			t.Errorf("markCompleted(%s) = ok, want it left to the decoding path", v)
		}
	}
}

// BenchmarkMarkCompleted: the completion mark of a typical journal record,
// edited in place ("edit", what completeFn does) against decoded and
// encoded again ("decode", its fallback for other shapes).
func BenchmarkMarkCompleted(b *testing.B) {
	in := core.Inbound{
		Thread: core.Thread{Platform: "slack", Workspace: "T0TEAM", Channel: "C0GENERAL", ID: "1700000000.000100"},
		User:   "UALICE", UserName: "alice", Text: "what changed in the deploy config since last week?",
		EventID: "Ev0123456789", MessageID: "1700000000.000100",
	}
	now := time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)
	v, err := json.Marshal(inboundRecord{Inbound: in, Journaled: now, Pending: 123456})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("edit", func(b *testing.B) {
		for b.Loop() {
			if _, _, ok := markCompleted(v, now); !ok {
				b.Fatal("not marked")
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var rec inboundRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				b.Fatal(err)
			}
			rec.Completed, rec.Pending = now, 0
			if _, err := json.Marshal(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}
