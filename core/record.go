package core

import "time"

// Entry is one transcript entry of a thread, as the store keeps it. Data is
// opaque to the store: core/agent encodes one message into it.
type Entry struct {
	// Seq numbers a thread's entries from 1, in append order, never reused.
	Seq  uint64    `json:"seq"`
	At   time.Time `json:"at"`
	Data []byte    `json:"data"`
}

// Summary is a thread's consolidated summary: it stands for every entry
// with Seq <= UpTo, which compaction moved to the archive.
type Summary struct {
	Text string    `json:"text"`
	UpTo uint64    `json:"up_to"`
	At   time.Time `json:"at"`
}

// Delegation is a core_execute call in flight: recorded before polling
// starts, so a restart finds the intent again instead of submitting twice.
type Delegation struct {
	Thread Thread `json:"thread"`
	// CallID is the tool call that asked for the delegation; with Thread it
	// is the delegation's idempotency key.
	CallID string `json:"call_id"`
	// EventID is the message whose turn made the call. Call IDs come from
	// the model and can repeat in a later turn; only the same turn
	// resumes a delegation. Empty in records from before it was kept.
	EventID   string    `json:"event_id,omitempty"`
	IntentID  string    `json:"intent_id"`
	Prose     string    `json:"prose"`
	Requester string    `json:"requester"`
	Started   time.Time `json:"started"`
}

// Recall is what memory brings to a turn before the model is called: the
// page-fault step's output, rendered into the system block.
type Recall struct {
	// Profile describes the user (preferences, role), "" when unknown.
	Profile string `json:"profile,omitempty"`
	// Goal is the user's active goal, "" when none is known.
	Goal string `json:"goal,omitempty"`
	// Memories are relevant facts, most relevant first.
	Memories []string `json:"memories,omitempty"`
	// Patterns are procedures that completed a similar goal before.
	Patterns []string `json:"patterns,omitempty"`
	// Turns are relevant excerpts of past conversations.
	Turns []string `json:"turns,omitempty"`
}
