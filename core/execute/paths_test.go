package execute

import (
	"context"
	"fmt"
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
				spends[1].State != core.SpendCancelled || !strings.Contains(spends[1].Reason, "not asked") || len(w.sent()) != 0 ||
				!strings.Contains(err.Error(), "/2): cancelled: not asked") {
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

// TestResumedPlanCancelsAskedRest: a resumed plan whose first call is
// denied cancels the next one even though it was already asked.
func TestResumedPlanCancelsAskedRest(t *testing.T) {
	w := newWorld(t)
	ctx := w.turn("CPAY", "E1")
	tr, _ := core.TurnFrom(ctx)
	tr.Approver = func(context.Context, core.GateRequest) (core.GateAnswer, error) {
		return core.GateAnswer{Answer: Deny, By: "UBOB"}, nil
	}
	id := IntentID(tr.Inbound, "call_1")
	var plan []core.Spend
	for n := 1; n <= 2; n++ {
		plan = append(plan, core.Spend{ID: fmt.Sprintf("%s/%d", id, n), IntentID: id, Thread: tr.Inbound.Thread, Requester: "UALICE",
			Server: "wallet", Name: "transfer", Function: "wallet__transfer", Args: []byte(`{"amount": 5, "currency": "USDC", "recipient": "bob"}`),
			Amount: "5", Currency: "USDC", Day: time.Now().UTC().Format(time.DateOnly), State: core.SpendAsked})
	}
	if _, err := w.ledger.PlanSpends(context.Background(), id, plan); err != nil {
		t.Fatal(err)
	}
	_, err := w.exec.Run(ctx, "send 5 USDC to bob twice")
	spends, _ := w.ledger.SpendsSince(context.Background(), time.Time{})
	if err == nil || len(spends) != 2 || spends[0].State != core.SpendDenied || spends[1].State != core.SpendCancelled || len(w.sent()) != 0 {
		t.Errorf("Run = %v; ledger %+v; want the first denied, the asked second cancelled", err, spends)
	}
}

// TestPlanOfMaxCalls: a plan of exactly MaxCalls calls is asked.
func TestPlanOfMaxCalls(t *testing.T) {
	w := newWorld(t)
	plan := llm.Message{Role: llm.RoleAssistant}
	for range DefaultMaxCalls {
		plan.ToolCalls = append(plan.ToolCalls, llm.ToolCall{ID: "p", Type: "function",
			Function: llm.FunctionCall{Name: "wallet__transfer", Arguments: `{"amount": 1, "currency": "USDC", "recipient": "bob"}`}})
	}
	w.model.replies = []llm.Message{plan}
	done := w.execute(w.turn("CPAY", "E1"), "pay bob 1 USDC eight times")
	g, r, ok := w.gate(done)
	if !ok {
		t.Fatalf("a plan of %d calls was not asked: %+v", DefaultMaxCalls, r)
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Deny); err != nil {
		t.Fatal(err)
	}
	<-done
}

// TestLimitRecheckedAtApproval: two spends asked at once both fit the
// day; once the first is approved, the second no longer does, and its
// approval is refused instead of made.
func TestLimitRecheckedAtApproval(t *testing.T) {
	w := newWorld(t) // USDC: 150 a day
	var gates []core.Gate
	var runs []<-chan result
	for _, event := range []string{"E1", "E2"} {
		w.model.replies = []llm.Message{transferCall(`{"amount": 80, "currency": "USDC", "recipient": "bob"}`)}
		done := w.execute(w.turn("CPAY", event), "send 80 USDC to bob")
		g, r, ok := w.gate(done)
		if !ok {
			t.Fatalf("%s was not asked: %+v", event, r)
		}
		gates, runs = append(gates, g), append(runs, done)
	}
	for i, g := range gates {
		if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
			t.Fatal(err)
		}
		r := <-runs[i]
		if want := i == 1; r.isError != want || want && !strings.Contains(r.content, "(other spends were approved while this one waited)") {
			t.Errorf("approval %d: %+v", i+1, r)
		}
	}
	if n := len(w.sent()); n != 1 {
		t.Errorf("transfers = %d, want 1", n)
	}
}
