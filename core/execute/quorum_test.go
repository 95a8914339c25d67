package execute

import (
	"context"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

const quorumSkills = `{"payments": {"spend": true, "places": ["slack:T1/CPAY"],
	"spend_limits": {"USDC": {"per_call": "5000"}, "wallet/transfer": {"amount": "amount", "currency": "currency"}},
	"approvals": {"groups": {"treasury": {"slack": ["UANN", "UBEN", "UCAT"]}},
		"tiers": [{"currency": "USDC", "up_to": "100"},
		          {"currency": "USDC", "group": "treasury", "quorum": 2}]}}}`

// TestSpendQuorum: a spend above 100 USDC goes to the treasury group and
// needs two of its members: the first approval records a vote and calls
// nothing, a repeated click counts nothing, the second distinct approval
// makes the call, once; a small spend needs one configured approver.
func TestSpendQuorum(t *testing.T) {
	w := newWorldWith(t, quorumSkills)
	w.model.replies = []llm.Message{transferCall(`{"amount": 2000, "currency": "USDC", "recipient": "alice"}`)}
	done := w.execute(w.turn("CPAY", "E1"), "send 2000 USDC to alice")
	g, r, ok := w.gate(done)
	if !ok {
		t.Fatalf("no approval asked; core_execute = %+v", r)
	}
	if g.Need != 2 || g.Tier != "over 100 USDC" || g.MayAnswer("UBOB", nil) || !g.MayAnswer("UCAT", nil) {
		t.Errorf("gate = need %d tier %q, UBOB may answer %v; want 2 of the treasury group, over 100 USDC", g.Need, g.Tier, g.MayAnswer("UBOB", nil))
	}
	ctx := context.Background()
	for _, u := range []string{"UALICE", "UANN", "UANN"} {
		c, err := w.gates.AnswerFrom(ctx, g.Token, 0, u, nil, "thread")
		if err != nil || c.Gate.State == core.GateApproved {
			t.Fatalf("click by %s = %s, %v; want the gate still pending", u, c.Gate.State, err)
		}
	}
	if n := len(w.sent()); n != 0 {
		t.Fatalf("%d calls after one approval of two, want none", n)
	}
	c, err := w.gates.AnswerFrom(ctx, g.Token, 0, "UCAT", nil, "dm")
	if err != nil || c.Gate.State != core.GateApproved {
		t.Fatalf("second approval = %+v, %v", c.Gate.State, err)
	}
	if r := <-done; r.isError {
		t.Fatalf("core_execute = %+v", r)
	}
	if n := len(w.sent()); n != 1 {
		t.Errorf("%d calls after the quorum, want exactly 1", n)
	}
	if _, err := w.gates.AnswerFrom(ctx, g.Token, 0, "UBEN", nil, "thread"); err != nil {
		t.Fatal(err)
	}
	if n := len(w.sent()); n != 1 {
		t.Errorf("%d calls after a click on the completed gate, want still 1", n)
	}

	// A small spend: one configured approver.
	w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice"}`)}
	done = w.execute(w.turn("CPAY", "E2"), "send 5 USDC to alice")
	g, _, _ = w.gate(done)
	if g.Need != 1 || !g.MayAnswer("UBOB", nil) {
		t.Errorf("small spend's gate = need %d, UBOB may answer %v; want one configured approver", g.Need, g.MayAnswer("UBOB", nil))
	}
	if _, err := w.gates.AnswerFrom(ctx, g.Token, 0, "UBOB", nil, "thread"); err != nil {
		t.Fatal(err)
	}
	<-done
	if n := len(w.sent()); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

// TestSpendNoTier: a currency no tier covers is refused before anyone is
// asked, naming why.
func TestSpendNoTier(t *testing.T) {
	w := newWorldWith(t, strings.Replace(quorumSkills, `"USDC": {"per_call": "5000"}`, `"USDC": {"per_call": "5000"}, "EUR": {"per_call": "5000"}`, 1))
	w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "EUR", "recipient": "alice"}`)}
	done := w.execute(w.turn("CPAY", "E1"), "send 5 EUR to alice")
	_, r, ok := w.gate(done)
	if ok {
		t.Fatal("an approval was asked for a currency without a tier")
	}
	if !strings.Contains(r.content, `currency "EUR" has no approval tier here`) || len(w.sent()) != 0 {
		t.Errorf("core_execute = %+v, want the missing tier named and nothing sent", r)
	}
}
