package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// SpendState is where one planned spend call is in its life. A call
// moves planned -> asked -> calling -> completed or failed (an approval
// is recorded as "calling", in one write, and the call follows), or ends
// early as refused, denied or cancelled. A call found "calling"
// after a crash becomes unknown: it may have moved money, so it is never
// made again.
type SpendState string

// Spend states.
const (
	SpendPlanned   SpendState = "planned"
	SpendRefused   SpendState = "refused" // over a limit: refused before anyone was asked
	SpendAsked     SpendState = "asked"
	SpendDenied    SpendState = "denied" // a person said no, or nobody said yes in time
	SpendCancelled SpendState = "cancelled"
	SpendCalling   SpendState = "calling"
	SpendCompleted SpendState = "completed"
	SpendFailed    SpendState = "failed"
	SpendUnknown   SpendState = "unknown"
)

// Final reports whether s is an end state.
func (s SpendState) Final() bool {
	switch s {
	case SpendRefused, SpendDenied, SpendCancelled, SpendCompleted, SpendFailed, SpendUnknown:
		return true
	}
	return false
}

// Counts reports whether a call in state s counts toward a day's spend
// limit: anything approved, whether or not it is known to have run. A
// failed call counts unless it is known that nothing was done
// ([Spend.Counts]).
func (s SpendState) Counts() bool {
	switch s {
	case SpendCalling, SpendCompleted, SpendUnknown, SpendFailed:
		return true
	}
	return false
}

// Counts reports whether s counts toward its day's spend limit: it was
// approved, and it is not known that nothing was done (an error does not
// prove that no money moved; only the tool saying so, or neobot never
// making the call, does).
func (s Spend) Counts() bool {
	return s.State.Counts() && !(s.State == SpendFailed && s.NothingDone)
}

// Spend is one planned call of a spend-class tool: the spend ledger's
// record of who asked for it, who decided, what ran and how it ended.
type Spend struct {
	// ID is "<intent>/<n>", n counting the intent's calls from 1.
	ID       string `json:"id"`
	IntentID string `json:"intent_id"`
	Thread   Thread `json:"thread"`
	// EventID and CallID are the turn's message and the core_execute call
	// that asked for the spend.
	EventID   string `json:"event_id,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Requester string `json:"requester"`
	// Message is what the requester wrote: the text of the message that
	// started the turn, their own words.
	Message string `json:"message,omitempty"`
	// Intent is the prose the model passed to core_execute: its reading
	// of the thread, which may carry words the requester never wrote.
	Intent string `json:"intent"`
	// Tool is the tool's pinned URI; Server and Name its manifest alias and
	// name on the server.
	Tool   string `json:"tool"`
	Server string `json:"server"`
	Name   string `json:"name"`
	// Function is the tool's function name on neobot's tool surface.
	Function string          `json:"function"`
	Args     json.RawMessage `json:"args"`
	// Summary is the line under the call in its approval: what it moves,
	// and to whom, escaped.
	Summary string `json:"summary,omitempty"`
	// Amount and Currency are read from the arguments the skill's spend
	// limits name: Amount an exact decimal string ("0.00001", never a
	// float or an exponent), a list's items summed; Currency as the
	// operator wrote the limit's key. Both "" when no limit applies.
	Amount   string `json:"amount,omitempty"`
	Currency string `json:"currency,omitempty"`
	// Day is the UTC day the call was planned, "2006-01-02": the day its
	// amount counts toward.
	Day string `json:"day"`

	State SpendState `json:"state"`
	// DecidedBy is who approved or denied; "" for a default denial.
	DecidedBy string `json:"decided_by,omitempty"`
	// Reason says why a call was refused, denied, failed or is unknown.
	Reason string `json:"reason,omitempty"`
	// Result is the tool's output, cut to a few kilobytes.
	Result string `json:"result,omitempty"`
	// NothingDone marks a failed call known to have moved nothing: the
	// tool said so in its result ({"done": false}), or neobot never
	// made it. Only such a failure does not count toward the day.
	NothingDone bool `json:"nothing_done,omitempty"`
	// Task is the ID of the task the call became at its server (the MCP
	// tasks extension), recorded before the task is followed: a turn
	// resumed after a crash follows that task for the call's outcome and
	// never makes the call again.
	Task string `json:"task,omitempty"`

	Created  time.Time `json:"created"`
	Decided  time.Time `json:"decided,omitzero"`
	Called   time.Time `json:"called,omitzero"`
	Finished time.Time `json:"finished,omitzero"`

	// Seq and Hash name the ledger's chain entry that recorded the call
	// as it is now ([LedgerEntry]). A store sets them when it reads or
	// writes the call; they are not part of the recorded content
	// ([Spend.Record]). Both are empty for a call not read from a store.
	Seq  uint64 `json:"seq,omitempty"`
	Hash string `json:"hash,omitempty"`
}

// Record is the call's recorded content, the bytes its chain entry
// hashes: its JSON encoding (encoding/json, the fields in the order Spend
// declares them, no insignificant white space) without Seq and Hash.
func (s Spend) Record() ([]byte, error) {
	s.Seq, s.Hash = 0, ""
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode spend %s: %w", s.ID, err)
	}
	return raw, nil
}

// Receipt is the short form of the call's chain hash, the first
// [ReceiptLen] hex digits the thread is told; "" when the call was not
// read from a chained ledger.
func (s Spend) Receipt() string {
	if len(s.Hash) < ReceiptLen {
		return ""
	}
	return s.Hash[:ReceiptLen]
}

// ReceiptLen is how many hex digits of a chain hash a receipt shows.
const ReceiptLen = 8

// Edit applies fn to a copy of s, with the other calls of its workspace
// and day, and returns the copy with s's identity (ID, intent, thread and
// day) kept: the update a SpendLedger's UpdateSpend makes. When fn fails,
// Edit returns s unchanged and fn's error as it is.
func (s Spend) Edit(sameDay []Spend, fn func(s *Spend, sameDay []Spend) error) (Spend, error) {
	c := s
	c.Args = slices.Clone(s.Args)
	if err := fn(&c, sameDay); err != nil {
		return s, err
	}
	c.ID, c.IntentID, c.Thread, c.Day = s.ID, s.IntentID, s.Thread, s.Day
	return c, nil
}

// CheckPlan reports a planned call that does not belong to intentID.
func CheckPlan(intentID string, calls []Spend) error {
	for _, s := range calls {
		if s.IntentID != intentID || s.ID == "" {
			return fmt.Errorf("call %q does not belong to intent %s", s.ID, intentID)
		}
	}
	return nil
}

// SpendLedger keeps the spend ledger durably. Both stores implement it;
// on PostgreSQL every instance sees the same ledger.
type SpendLedger interface {
	// PlanSpends stores the intent's planned calls unless the intent
	// already has some, and returns the intent's calls as stored, in
	// order: a resumed intent gets its first plan back. With no calls it
	// only looks the intent up, writing nothing.
	PlanSpends(ctx context.Context, intentID string, calls []Spend) ([]Spend, error)
	// UpdateSpend applies fn to the stored call with id and stores the
	// result in one transaction. fn also sees every other call of the
	// same workspace and UTC day, for day limits; on PostgreSQL two
	// instances updating calls of the same workspace and day take turns.
	// If fn fails nothing is written and its error is returned as it is.
	// An unknown id is ErrNotFound.
	UpdateSpend(ctx context.Context, id string, fn func(s *Spend, sameDay []Spend) error) (Spend, error)
	// SpendsSince returns the calls created at or after since, oldest
	// first.
	SpendsSince(ctx context.Context, since time.Time) ([]Spend, error)
}

// SpendChain reads the spend ledger's hash chain as stored, for
// verifying and exporting it. Both stores implement it.
type SpendChain interface {
	// SpendEntries calls fn with every entry of the chain, in order of
	// Seq, as stored: nothing is checked.
	SpendEntries(ctx context.Context, fn func(LedgerEntry) error) error
	// SpendRecords calls fn with every call's current record as stored
	// (the bytes of [Spend.Record]), in any order.
	SpendRecords(ctx context.Context, fn func(id string, record []byte) error) error
}

// CallLog records that a call with a side effect is being made, before
// it is made, so that it is never made twice: not after a crash, not by a
// retry. Both stores implement it.
type CallLog interface {
	// BeginCall records key as calling, begun by run (the run of neobot
	// making the call: one process, from start to stop). When key was
	// begun before, nothing is written and the entry as found comes back:
	// the call may already have run.
	BeginCall(ctx context.Context, key, run string) (Begun, error)
	// EndCall records that the call with key returned.
	EndCall(ctx context.Context, key string) error
	// DropCall removes key's entry: the call certainly never reached the
	// tool, so it may be made, and begun, again. An unknown key is not an
	// error.
	DropCall(ctx context.Context, key string) error
}

// TaskLog is what a calls log adds for long-running tools (MCP tasks): a
// call the server answered with a task has the task's ID kept with its
// entry before the task is followed, so a turn resumed after a restart
// follows the same task instead of calling the tool again. Both stores
// implement it.
type TaskLog interface {
	// SetCallTask records that the call with key became task, beginning
	// the call's entry, by run, when it had none (a call that changes
	// nothing is not recorded before it is made).
	SetCallTask(ctx context.Context, key, run, task string) error
	// CallTask returns the task recorded for key, "" when none.
	CallTask(ctx context.Context, key string) (string, error)
}

// Begun is what [CallLog.BeginCall] found under a key.
type Begun struct {
	// Fresh reports that key was not recorded: the call is begun now.
	Fresh bool
	// Run is the run that began the call. It differs from the run given
	// to BeginCall when neobot stopped or restarted since the call began
	// ("" for an entry written before runs were recorded).
	Run string
}
