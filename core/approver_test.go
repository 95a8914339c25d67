package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/neobot/neobot/core"
)

func TestAsk(t *testing.T) {
	yes := core.GateAnswer{Approved: true, Answer: "yes", By: "U1"}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	called := false
	tests := []struct {
		name string
		ctx  context.Context
		a    core.Approver
		want core.GateAnswer
	}{
		{"nil approver denies", t.Context(), nil, core.GateAnswer{}},
		{"error denies", t.Context(), func(context.Context, core.GateRequest) (core.GateAnswer, error) {
			return yes, errors.New("timeout")
		}, core.GateAnswer{}},
		{"cancelled ctx denies without asking", cancelled, func(context.Context, core.GateRequest) (core.GateAnswer, error) {
			called = true
			return yes, nil
		}, core.GateAnswer{}},
		{"approval", t.Context(), func(context.Context, core.GateRequest) (core.GateAnswer, error) { return yes, nil }, yes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := core.Ask(tt.ctx, tt.a, core.GateRequest{NodeID: "n1"}); got != tt.want {
				t.Errorf("Ask = %+v, want %+v", got, tt.want)
			}
		})
	}
	if called {
		t.Error("Ask called the approver on a cancelled ctx")
	}
}

func TestApproves(t *testing.T) {
	tests := []struct {
		option string
		want   bool
	}{
		// An approving option must read the same to everyone: whole on
		// its button, no invisible or combining characters.
		{"Yes, send 5 PAX to 0x52908400098527886E0F7030069857D2E4169EE7", true},
		{"Yes, send 5 PAX to 0x52908400098527886E0F7030069857D2E4169EE7 and 500 PAX to 0x8617E340B3D01FA5F11F306F4090FD50E238070D", false},
		{"Y\u0336e\u0336s\u0336", false},         // struck through
		{"Yes\u200b", false},                     // zero-width space
		{"Yes, send \u202eXAP 005\u202c", false}, // right-to-left override
		{"Approve\x00", false},
		// A plain yes approves.
		{"yes", true},
		{"Yes", true},
		{"  YES  ", true},
		{"y", true},
		{"Y", true},
		{"approve", true},
		{"Approve spend", true},
		{"Approved", true},
		{"Confirm", true},
		{"Confirm transfer of 5 USDC", true},
		{"ok", true},
		{"OK!", true},
		{"Proceed", true},
		{"Proceed with the swap", true},
		{"Allow", true},
		{"Accept", true},
		{"Yes, send it", true},
		{"Yes - send 5 PAX to 0xabc", true},
		{"yes.", true},

		// Everything else denies.
		{"", false},
		{"   ", false},
		{"no", false},
		{"No", false},
		{" deny ", false},
		{"n", false},
		{"reject", false},
		{"decline", false},
		{"cancel", false},
		{"abort", false},
		{"stop", false},
		{"Don't send", false},
		{"Don’t send", false},
		{"Do not send", false},
		{"No, keep the money", false},
		{"Not now", false},
		{"Skip", false},
		{"Skip this one", false},
		{"Later", false},
		{"Wait", false},
		{"Send 5 PAX", false},
		{"send", false},
		{"Maybe", false},
		{"👍", false},
		{"Yes, but not today", false},
		{"OK, don't send yet", false},
		{"Approve? No", false},
		{"yes/no", false},
		{"Confirm cancellation", false},
		{"Proceed without sending", false},
		{"Accept nothing", false},
		{"I won't approve", false},
		{"yesterday", false},
		{"okay-ish", false},
		{"Allow? Never", false},
		{"Approve later", false},
		{"Yes, cancel it", false},
		{"Reject the spend", false},
	}
	for _, tt := range tests {
		if got := core.Approves(tt.option); got != tt.want {
			t.Errorf("Approves(%q) = %v, want %v", tt.option, got, tt.want)
		}
	}
}
