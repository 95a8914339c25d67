package execute

import (
	"fmt"
	"strings"

	"github.com/neobot/neobot/core"
)

// OutcomeError is an intent that did not complete: a call was refused,
// denied, not approved in time, failed, or has an unknown outcome. Status
// is the daemon contract's word for it: failed, cancelled, timeout, or
// unknown.
type OutcomeError struct {
	IntentID string
	Status   string
	// Calls says what became of each call, one line each.
	Calls string
}

// Error says what happened to each call, for the model to relay.
func (e *OutcomeError) Error() string {
	var advice string
	switch e.Status {
	case "unknown":
		advice = "Tell the user plainly that whether the money moved is unknown, that it will not be retried, and that they should check the provider or the spend ledger before asking again."
	case "cancelled", "timeout":
		advice = "Nothing was sent for the calls not made. Tell the user; do not call core_execute again unless they ask."
	default:
		advice = "Tell the user what failed; do not call core_execute again unless they ask."
	}
	return fmt.Sprintf("%s (request %s):\n%s\n%s", e.Status, e.IntentID, e.Calls, advice)
}

// outcome is Run's result for calls that all reached a final state (or
// were left unasked after one that did not complete).
func outcome(intentID string, calls []core.Spend) (string, error) {
	var b strings.Builder
	status := "completed"
	rank := map[string]int{"completed": 0, "cancelled": 1, "timeout": 2, "failed": 3, "unknown": 4}
	for _, s := range calls {
		b.WriteString(line(s))
		b.WriteByte('\n')
		word := statusOf(s)
		if rank[word] > rank[status] {
			status = word
		}
	}
	text := strings.TrimRight(b.String(), "\n")
	if status == "completed" {
		return fmt.Sprintf("completed (request %s):\n%s", intentID, text), nil
	}
	return "", &OutcomeError{IntentID: intentID, Status: status, Calls: text}
}

// line says what became of the call s, on one line: its tool, ID, state
// and receipt, and its result or the reason it did not complete.
func line(s core.Spend) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- %s/%s (%s): %s", s.Server, s.Name, s.ID, s.State)
	if r := s.Receipt(); r != "" {
		fmt.Fprintf(&b, ", receipt %s", r) // its ledger entry's hash: neobot spends verify checks it
	}
	switch s.State {
	case core.SpendCompleted:
		if r := strings.TrimSpace(s.Result); r != "" {
			fmt.Fprintf(&b, ": %s", r)
		}
	default:
		if s.Reason != "" {
			fmt.Fprintf(&b, ": %s", s.Reason)
		}
	}
	return b.String()
}

// statusOf maps a call's final state to the daemon contract's status.
func statusOf(s core.Spend) string {
	switch s.State {
	case core.SpendCompleted:
		return "completed"
	case core.SpendUnknown:
		return "unknown"
	case core.SpendFailed, core.SpendRefused:
		return "failed"
	case core.SpendDenied:
		if s.DecidedBy == "" && strings.Contains(s.Reason, "in time") {
			return "timeout"
		}
		return "cancelled"
	}
	return "cancelled"
}
