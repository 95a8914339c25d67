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
