package execute

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

func TestNewNeedsItsParts(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Tools: w.surface, Ledger: w.ledger}, "no model"},
		{Options{Model: w.model, Ledger: w.ledger}, "no tool surface"},
		{Options{Model: w.model, Tools: w.surface}, "no spend ledger"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New = %v, want an error saying %q", err, tc.want)
		}
	}
}

// TestRunRefusals: a requester who may not spend, a place with no spend
// tool, an unreachable planner and a plan of too many calls: nothing is
// asked or sent, and the model is told why.
func TestRunRefusals(t *testing.T) {
	many := llm.Message{Role: llm.RoleAssistant}
	for range DefaultMaxCalls + 1 {
		many.ToolCalls = append(many.ToolCalls, llm.ToolCall{ID: "p", Type: "function",
			Function: llm.FunctionCall{Name: "wallet__transfer", Arguments: `{"amount": 1, "currency": "USDC", "recipient": "bob"}`}})
	}
	refusal := &core.SpendRefusal{User: "UALICE", Reason: "is not among the people allowed to ask for spends", Setting: "SLACK_SPEND_USERS"}
	for _, tc := range []struct {
		name      string
		skills    string
		authorize func(core.Inbound) error
		replies   []llm.Message
		want      string
	}{
		{"may not ask", walletSkills, func(core.Inbound) error { return refusal }, nil, "SLACK_SPEND_USERS"},
		{"no spend tool here", `{"payments": {"spend": true, "places": ["slack:T1/CPAY"], "tools": ["matrix://tool/mcp/wallet/balance@1.0.0"]}}`, nil, nil, "no tool that can move money"},
		{"planner unreachable", walletSkills, nil, nil, "could not be reached"},
		{"too many calls", walletSkills, nil, []llm.Message{many}, "it would take 9 payments, more than the 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorldWith(t, tc.skills)
			exec, err := New(Options{Model: w.model, Tools: w.surface, Ledger: w.ledger, Skills: w.skills, Authorize: tc.authorize})
			if err != nil {
				t.Fatal(err)
			}
			w.model.replies = tc.replies
			_, err = exec.Run(w.turn("CPAY", "E1"), "send 1 USDC to bob")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, want an error saying %q", err, tc.want)
			}
			if spends, _ := w.ledger.SpendsSince(context.Background(), time.Time{}); len(spends) != 0 || len(w.sent()) != 0 {
				t.Errorf("ledger %+v, %d sent; want nothing planned or sent", spends, len(w.sent()))
			}
		})
	}
}

// TestDeniedByDefault: with no approver, or an answer nobody gave, the
// call is denied, and the rest of the plan is cancelled unasked.
func TestDeniedByDefault(t *testing.T) {
	two := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
		{ID: "p1", Type: "function", Function: llm.FunctionCall{Name: "wallet__transfer", Arguments: `{"amount": 5, "currency": "USDC", "recipient": "alice"}`}},
		{ID: "p2", Type: "function", Function: llm.FunctionCall{Name: "wallet__transfer", Arguments: `{"amount": 6, "currency": "USDC", "recipient": "bob"}`}},
	}}
	for _, tc := range []struct {
		name     string
		approver core.Approver
		want     string
	}{
		{"no approver", nil, "nobody can approve spends here"},
		{"nobody answered", func(context.Context, core.GateRequest) (core.GateAnswer, error) { return core.GateAnswer{}, nil }, "nobody approved it in time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.model.replies = []llm.Message{two}
			ctx := w.turn("CPAY", "E1")
			tr, _ := core.TurnFrom(ctx)
			tr.Approver = tc.approver
			_, err := w.exec.Run(ctx, "pay alice and bob")
			spends, _ := w.ledger.SpendsSince(context.Background(), time.Time{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || len(spends) != 2 || spends[0].State != core.SpendDenied ||
				spends[1].State != core.SpendCancelled || !strings.Contains(spends[1].Reason, "not asked") || len(w.sent()) != 0 {
				t.Errorf("Run = %v; ledger %+v; want denied (%s), the second cancelled unasked, nothing sent", err, spends, tc.want)
			}
		})
	}
}

// TestQuestionWithoutArguments: a call with no arguments says so.
func TestQuestionWithoutArguments(t *testing.T) {
	q, complete := question(core.Spend{ID: "x1/1", Server: "wallet", Name: "sweep", Requester: "UALICE", Intent: "sweep", Args: []byte(`{}`), Summary: "That is a call of wallet/sweep."})
	want := "Neo wants to spend with wallet/sweep (request x1/1).\nAsked for <@UALICE>.\nNeo's reading of it (not their words): `\"sweep\"`\nThe call has no arguments.\nThat is a call of wallet/sweep.\nApprove this exact call?"
	if q != want || !complete {
		t.Errorf("question = %q, %v; want %q", q, complete, want)
	}
}
