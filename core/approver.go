package core

import (
	"context"
	"strings"
)

// GateRequest is what the execution daemon asks a human before a spend.
type GateRequest struct {
	Thread   Thread   `json:"thread"`
	IntentID string   `json:"intent_id"`
	NodeID   string   `json:"node_id"`
	Question string   `json:"question"`
	Options  []string `json:"options"`
	// Requester is the user whose message started the turn.
	Requester string `json:"requester"`
}

// GateAnswer is a human's decision on a gate.
type GateAnswer struct {
	Approved bool `json:"approved"`
	// Answer is the option chosen, "" when denied by default.
	Answer string `json:"answer"`
	// By is the user who decided, "" when denied by default (timeout,
	// cancellation, no approver).
	By string `json:"by,omitempty"`
}

// Approver asks a human to decide a gate and blocks until they do, the
// context ends, or the gate expires.
type Approver func(ctx context.Context, req GateRequest) (GateAnswer, error)

// Ask calls a and applies the deny-by-default rule: a nil approver, an error,
// or a cancelled context all deny.
func Ask(ctx context.Context, a Approver, req GateRequest) GateAnswer {
	if a == nil || ctx.Err() != nil {
		return GateAnswer{}
	}
	ans, err := a(ctx, req)
	if err != nil {
		return GateAnswer{}
	}
	return ans
}

// denyWords are options that mean "no" whatever their position.
var denyWords = map[string]bool{
	"no": true, "n": true, "deny": true, "denied": true, "reject": true,
	"decline": true, "cancel": true, "abort": true, "stop": true,
}

// Approves reports whether choosing option approves the gate: every option
// is an approval except the ones that plainly mean no (no, deny, reject,
// decline, cancel, abort, stop).
func Approves(option string) bool {
	o := strings.ToLower(strings.TrimSpace(option))
	return o != "" && !denyWords[o]
}
