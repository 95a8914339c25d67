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
	tests := map[string]bool{
		"yes": true, "approve": true, "Approve spend": true, "send 5 PAX": true, "ok": true,
		"no": false, "No": false, " deny ": false, "reject": false, "decline": false,
		"cancel": false, "abort": false, "stop": false, "n": false, "": false, "  ": false,
	}
	for option, want := range tests {
		if got := core.Approves(option); got != want {
			t.Errorf("Approves(%q) = %v, want %v", option, got, want)
		}
	}
}
