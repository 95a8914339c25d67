package delegate

import (
	"errors"
	"fmt"
)

// Sentinel errors for the outcomes callers test with errors.Is. Their text
// is written for the model, which relays it to the user.
var (
	// ErrCancelled reports that the daemon cancelled the intent.
	ErrCancelled = errors.New("the delegated task was cancelled")
	// ErrTimeout reports that the intent did not reach a final state within
	// MaxWait. It may still finish at the daemon.
	ErrTimeout = errors.New("the delegated task did not finish in time")
	// ErrInterrupted reports that Run's context ended first (the turn was
	// stopped or the bot is shutting down). The delegation stays recorded,
	// so a resumed turn picks the intent up again.
	ErrInterrupted = errors.New("the delegated task was interrupted before it finished")
	// ErrUnavailable reports that the daemon could not be reached or
	// answered with a server error.
	ErrUnavailable = errors.New("the execution daemon is unavailable")
	// ErrRefused reports that the daemon refused the request (bad token,
	// unknown intent, malformed request).
	ErrRefused = errors.New("the execution daemon refused the request")
)

// FailedError reports that the daemon's pipeline failed the intent.
type FailedError struct {
	IntentID string
	// Message is the pipeline's error message, "" when it gave none.
	Message string
}

// Error says which intent failed and, when the daemon gave one, why.
func (e *FailedError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("the delegated task failed (intent %s) without a reason from the execution daemon", e.IntentID)
	}
	return fmt.Sprintf("the delegated task failed (intent %s): %s", e.IntentID, e.Message)
}

// ClarifyError reports that the daemon needs more detail before it can act.
// The model should ask the user Question and call core_execute again with a
// fuller description.
type ClarifyError struct {
	IntentID string
	Question string
}

// Error relays the daemon's question for the model to put to the user.
func (e *ClarifyError) Error() string {
	return fmt.Sprintf("the execution daemon needs more detail before it can act: %s", e.Question)
}

// daemonError is an error whose text is a sentence for the model while its
// chain keeps the sentinel and the technical cause for callers and logs.
type daemonError struct {
	msg      string
	sentinel error
	cause    error
}

func (e *daemonError) Error() string   { return e.msg }
func (e *daemonError) Unwrap() []error { return []error{e.sentinel, e.cause} }

// HTTPError is a non-2xx answer from the daemon.
type HTTPError struct {
	Method, Path string
	Status       int
	// Message is the daemon's "error" field, or the start of the body.
	Message string
}

// Error names the request, the status and the daemon's message.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("delegate: %s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Message)
}
