package execute

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
)

// sendPayment is a payment tool whose currency is free text and may be
// left out, as many providers' are.
var sendPayment = mcp.ServerTool{Name: "send_payment", Description: "Pay someone.", InputSchema: map[string]any{
	"type": "object", "required": []string{"amount", "recipient"},
	"properties": map[string]any{
		"amount":    map[string]any{"type": []string{"number", "string"}},
		"currency":  map[string]any{"type": "string"},
		"recipient": map[string]any{"type": "string"},
	},
}}

// batchTransfer pays a list of recipients in one call.
var batchTransfer = mcp.ServerTool{Name: "batch_transfer", Description: "Pay many.", InputSchema: map[string]any{
	"type": "object", "required": []string{"payouts", "currency"},
	"properties": map[string]any{
		"currency": map[string]any{"type": "string"},
		"payouts": map[string]any{"type": "array", "items": map[string]any{
			"type": "object", "properties": map[string]any{"to": map[string]any{"type": "string"}, "amount": map[string]any{"type": "number"}}}},
	},
}}

func planCall(function, args string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "p1", Type: "function",
		Function: llm.FunctionCall{Name: function, Arguments: args}}}}
}

// spend plans one call of function with args in a new turn and approves
// it if it is asked; asked says whether it was.
func (w *world) spend(event, function, args string) (r result, asked bool) {
	w.t.Helper()
	w.model.replies = []llm.Message{planCall(function, args)}
	done := w.execute(w.turn("CPAY", event), "pay as planned")
	g, r, ok := w.gate(done)
	if !ok {
		return r, false
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
		w.t.Fatal(err)
	}
	return <-done, true
}

// TestDayLimitHoldsAcrossSpellings: after 100 USDC, no spelling of USDC
// passes a day limit of 100, nor does a call without its currency or in a
// currency with no limit; each is refused before anyone is asked.
func TestDayLimitHoldsAcrossSpellings(t *testing.T) {
	w := newWorldWith(t, `{"payments": {"spend": true, "places": ["slack:T1/CPAY"],
		"spend_limits": {"USDC": {"per_day": "100", "aliases": ["USD Coin"]}}}}`, sendPayment)
	if r, asked := w.spend("E0", "wallet__send_payment", `{"amount": 100, "currency": "USDC", "recipient": "bob"}`); !asked || r.isError {
		t.Fatalf("first 100 USDC: %+v (asked %v), want made", r, asked)
	}
	for i, tc := range []struct{ args, want string }{
		{`{"amount": 100, "currency": "usdc", "recipient": "bob"}`, "over its limit of 100 USDC per day"},
		{`{"amount": 100, "currency": "USDC ", "recipient": "bob"}`, "over its limit of 100 USDC per day"},
		{`{"amount": "100", "currency": "Usdc", "recipient": "bob"}`, "over its limit of 100 USDC per day"},
		{`{"amount": 1, "currency": "usd coin", "recipient": "bob"}`, "over its limit of 100 USDC per day"},
		{`{"amount": 100, "recipient": "bob"}`, "a spend must say its currency"},
		{`{"amount": 100, "currency": "BTC", "recipient": "bob"}`, `its currency "BTC" has no spend limit here (limits are set for USDC)`},
		{`{"amount": 100, "currency": "US\u200bDC", "recipient": "bob"}`, "has no spend limit here"},
	} {
		r, asked := w.spend("E"+string(rune('1'+i)), "wallet__send_payment", tc.args)
		if asked || !r.isError || !strings.Contains(r.content, tc.want) {
			t.Errorf("%s: %+v (asked %v); want refused before asking: %q", tc.args, r, asked, tc.want)
		}
	}
	if n := len(w.sent()); n != 1 {
		t.Errorf("payments made = %d, want 1", n)
	}
}

// TestDustCountsExactly: amounts are exact decimals in the ledger and the
// day's total: 0.00009 and 1e-05 are never "0".
func TestDustCountsExactly(t *testing.T) {
	w := newWorldWith(t, `{"payments": {"spend": true, "places": ["slack:T1/CPAY"],
		"spend_limits": {"BTC": {"per_day": "0.0001"}, "wallet/send_payment": {"amount": "amount", "in": "BTC"}}}}`, sendPayment)
	for i, tc := range []struct {
		amount string
		made   bool
	}{{"0.00009", true}, {"1e-05", true}, {"1e-05", false}, {`"0.000000001"`, false}} {
		r, _ := w.spend("E"+string(rune('1'+i)), "wallet__send_payment", `{"amount": `+tc.amount+`, "recipient": "bob"}`)
		if made := !r.isError; made != tc.made {
			t.Errorf("%s BTC: %+v, made %v; want %v", tc.amount, r, made, tc.made)
		}
	}
	spends, _ := w.ledger.SpendsSince(context.Background(), time.Time{})
	var amounts []string
	for _, s := range spends {
		amounts = append(amounts, s.Amount+" "+s.Currency)
	}
	if got := strings.Join(amounts, ", "); got != "0.00009 BTC, 0.00001 BTC, 0.00001 BTC, 0.000000001 BTC" {
		t.Errorf("ledger amounts = %s", got)
	}
	if sent := w.sent(); len(sent) != 2 {
		t.Errorf("payments made = %d, want 2", len(sent))
	}
}

// TestFailedCallCounts: a call whose tool answered an error counts toward
// the day, unless the tool said nothing was done ({"done": false}).
func TestFailedCallCounts(t *testing.T) {
	w := newWorld(t) // USDC: 100 a call, 150 a day
	w.answer = func(args map[string]any) mcp.Result {
		r := mcp.ErrorResult("upstream timeout")
		if args["recipient"] == "nobody" {
			r.Structured = []byte(`{"done": false, "reason": "unknown recipient"}`)
		}
		return r
	}
	for i, tc := range []struct {
		to   string
		made bool // asked and called
	}{{"nobody", true}, {"nobody", true}, {"bob", true}, {"bob", false}} {
		r, asked := w.spend("E"+string(rune('1'+i)), "wallet__transfer", `{"amount": 80, "currency": "USDC", "recipient": "`+tc.to+`"}`)
		if asked != tc.made || !r.isError {
			t.Errorf("80 USDC to %s: %+v, asked %v; want asked %v and failed", tc.to, r, asked, tc.made)
		}
	}
	spends, _ := w.ledger.SpendsSince(context.Background(), time.Time{})
	if len(spends) != 4 || !spends[0].NothingDone || spends[2].NothingDone || spends[2].State != core.SpendFailed || spends[3].State != core.SpendRefused {
		t.Errorf("ledger = %+v; want nothing done twice, then a failure that counts, then a refusal", spends)
	}
}

// TestBatchAmountsSummed: a list of payouts counts as the sum of its
// items; a tool with a list whose amount field the skill does not name
// is refused before anyone is asked.
func TestBatchAmountsSummed(t *testing.T) {
	batch := `{"currency": "USDC", "payouts": [{"to": "a", "amount": 60}, {"to": "b", "amount": 60}]}`
	named := newWorldWith(t, `{"payments": {"spend": true, "places": ["slack:T1/CPAY"],
		"spend_limits": {"USDC": {"per_call": "100"}, "wallet/batch_transfer": {"amount": "payouts[].amount", "currency": "currency"}}}}`, batchTransfer)
	if r, asked := named.spend("E1", "wallet__batch_transfer", batch); asked || !strings.Contains(r.content, "120 USDC is over the limit of 100 USDC per call") {
		t.Errorf("named: %+v (asked %v), want 120 USDC refused", r, asked)
	}
	unnamed := newWorldWith(t, `{"payments": {"spend": true, "places": ["slack:T1/CPAY"],
		"spend_limits": {"USDC": {"per_call": "100"}}}}`, batchTransfer)
	if r, asked := unnamed.spend("E1", "wallet__batch_transfer", batch); asked || !strings.Contains(r.content, `the skill's spend_limits do not name wallet/batch_transfer's amount field`) {
		t.Errorf("unnamed: %+v (asked %v), want refused for want of the amount field", r, asked)
	}
	if n := len(named.sent()) + len(unnamed.sent()); n != 0 {
		t.Errorf("payments made = %d, want 0", n)
	}
}
