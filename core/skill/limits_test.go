package skill

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/mcp"
)

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string // "" for an error
	}{
		{5.0, "5"}, {0.25, "1/4"}, {"12.50", "25/2"}, {" 7 ", "7"}, {int64(3), "3"},
		{"1e3", "1000"}, {json.Number("1e-05"), "1/100000"}, {9e-05, "9/100000"}, {".5", "1/2"},
		{"-1", ""}, {"1/2", ""}, {"", ""}, {"five", ""}, {nil, ""}, {true, ""},
		{"0x10", ""}, {"1e1000", ""}, {"1,000", ""}, {"+1", ""}, {"1_000", ""}, {"5.", ""},
	} {
		got, err := ParseAmount(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseAmount(%#v) = %v, want an error", tc.in, got)
		case tc.want != "" && (err != nil || got.RatString() != tc.want):
			t.Errorf("ParseAmount(%#v) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatAmount(t *testing.T) {
	for in, want := range map[string]string{
		"0.00009": "0.00009", "1e-05": "0.00001", "12.50": "12.5", "5": "5", "1e3": "1000",
		"0.000000000000000000000001": "0.000000000000000000000001", "123456789012345678901234567890.1": "123456789012345678901234567890.1",
	} {
		r, err := ParseAmount(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatAmount(r); got != want {
			t.Errorf("FormatAmount(%s) = %s, want %s", in, got, want)
		}
	}
}

func limits(t *testing.T, text string) Limits {
	t.Helper()
	var l Limits
	if err := json.Unmarshal([]byte(text), &l); err != nil {
		t.Fatalf("Limits(%s): %v", text, err)
	}
	return l
}

func TestSpendLimitsChecked(t *testing.T) {
	m := &mcp.Manifest{Servers: []mcp.ServerSpec{{Alias: "wallet", Tools: []string{"transfer"}}}}
	for _, tc := range []struct {
		limits string
		want   string // "" when valid
	}{
		{`{"USDC": {"per_call": "100", "per_day": 250.5, "aliases": ["USD Coin"]}, "wallet/transfer": {"amount": "amount", "currency": "currency"}}`, ""},
		{`{"USDC": {"per_day": "1"}, "wallet/transfer": {"amount": "payouts[].amount", "in": "usdc"}}`, ""},
		{`{"wallet/transfer": {"amount": "amount", "currency": "currency", "per_call": "250", "per_day": "1000"}}`,
			`per_call and per_day without a currency are refused, since a limit written for one currency would let as much of any other through; set them per currency and keep the tool's entry for its arguments: "spend_limits": {"USDC": {"per_call":"250", "per_day":"1000"}, "wallet/transfer": {"amount": "amount", "currency": "currency"}}`},
		{`{"USDC": {"per_call": "1"}, "/transfer": {"amount": "amount", "currency": "c"}}`, "is not <server alias>/<tool>"},
		{`{"USDC": {"per_call": "1"}, "wallet/refund": {"amount": "amount", "currency": "c"}}`, "names no tool of the manifest"},
		{`{"USDC": {"per_call": "1"}, "wallet/transfer": {"currency": "c"}}`, "amount is empty"},
		{`{"USDC": {"per_call": "1"}, "wallet/transfer": {"amount": "a b", "currency": "c"}}`, "is not an argument path"},
		{`{"USDC": {"per_call": "1"}, "wallet/transfer": {"amount": "amount"}}`, "say which currency it moves"},
		{`{"USDC": {"per_call": "1"}, "wallet/transfer": {"amount": "amount", "currency": "c", "in": "USDC"}}`, "not both"},
		{`{"USDC": {"per_call": "1"}, "wallet/transfer": {"amount": "amount", "in": "EUR"}}`, `"EUR" has no limit`},
		{`{"wallet/transfer": {"amount": "amount", "currency": "currency"}}`, "limits no currency"},
		{`{"USDC": {}}`, "set per_call, per_day or both"},
		{`{"USDC": {"per_day": "lots"}}`, `per_day: "lots" is not a decimal amount`},
		{`{"USDC": {"per_day": "1"}, " usdc ": {"per_day": "2"}}`, "already a spelling of"},
		{`{"USDC": {"per_day": "1"}, "EURC": {"per_day": "2", "aliases": ["Usdc"]}}`, "already a spelling of"},
	} {
		got := strings.Join(checkLimits(limits(t, tc.limits), m), "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("checkLimits(%s) = %q, want %q", tc.limits, got, tc.want)
		}
	}
}

func TestSpendLimitsRefuseUnknownFields(t *testing.T) {
	for _, text := range []string{`{"USDC": {"per_cal": "1"}}`, `{"wallet/transfer": {"amount": "a", "currencies": "c"}}`, `{"USDC": 100}`, `{"transfer": {"amount": "amount"}}`} {
		var l Limits
		if err := json.Unmarshal([]byte(text), &l); err == nil {
			t.Errorf("Limits(%s) = %+v, want an error", text, l)
		}
	}
}

// TestCurrencySpellings: case, blanks and the operator's aliases are one
// currency; anything else is another, with no limit.
func TestCurrencySpellings(t *testing.T) {
	l := limits(t, `{"USDC": {"per_day": "500", "aliases": ["USD Coin"]}, "BTC": {"per_call": "0.01"}}`)
	for in, want := range map[string]string{
		"USDC": "USDC", "usdc": "USDC", "USDC ": "USDC", " Usdc\t": "USDC", "usd coin": "USDC", "btc": "BTC",
		"US DC": "", "USDC\u200b": "", "ＵＳＤＣ": "", "": "", "EUR": "",
	} {
		got, ok := l.Currency(in)
		if got != want || ok != (want != "") {
			t.Errorf("Currency(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestRead(t *testing.T) {
	l := limits(t, `{"USDC": {"per_day": "500"}, "BTC": {"per_day": "1"},
		"wallet/payout": {"amount": "payouts[].amount", "currency": "currency"},
		"wallet/batch": {"amount": "payouts[].amount", "currency": "payouts[].currency"},
		"wallet/sats": {"amount": "value.sats", "in": "btc"}}`)
	num := func(s string) json.Number { return json.Number(s) }
	for _, tc := range []struct {
		tool        string
		args        map[string]any
		amount, cur string
		wantErr     string
	}{
		{"wallet/transfer", map[string]any{"amount": num("1e-05"), "currency": "usdc "}, "0.00001", "USDC", ""},
		{"wallet/transfer", map[string]any{"amount": "0.00009", "currency": "Usdc"}, "0.00009", "USDC", ""},
		{"wallet/transfer", map[string]any{"amount": num("5"), "currency": "DOGE"}, "5", "DOGE", ""},
		{"wallet/transfer", map[string]any{"amount": num("5")}, "", "", "currency (currency) is missing"},
		{"wallet/transfer", map[string]any{"amount": num("5"), "currency": " "}, "", "", "is missing or not text"},
		{"wallet/transfer", map[string]any{"currency": "USDC"}, "", "", `has no "amount" argument, and the skill's spend_limits do not name`},
		{"wallet/payout", map[string]any{"currency": "USDC"}, "", "", `amount (payouts[].amount) is missing ("payouts")`},
		{"wallet/transfer", map[string]any{"amount": num("5"), "currency": "USDC", "also": []any{map[string]any{"amount": num("100")}}}, "", "", "holds a list or an object"},
		{"wallet/payout", map[string]any{"currency": "USDC", "payouts": []any{
			map[string]any{"to": "a", "amount": num("60")}, map[string]any{"to": "b", "amount": "0.5"}}}, "60.5", "USDC", ""},
		{"wallet/payout", map[string]any{"currency": "USDC", "payouts": []any{map[string]any{"to": "a"}}}, "", "", "is missing"},
		{"wallet/payout", map[string]any{"currency": "USDC", "payouts": map[string]any{"amount": num("1")}}, "", "", "is not a list"},
		{"wallet/batch", map[string]any{"payouts": []any{
			map[string]any{"amount": num("1"), "currency": "usdc"}, map[string]any{"amount": num("2"), "currency": "USDC"}}}, "3", "USDC", ""},
		{"wallet/batch", map[string]any{"payouts": []any{
			map[string]any{"amount": num("1"), "currency": "usdc"}, map[string]any{"amount": num("2"), "currency": "BTC"}}}, "", "", "more than one currency"},
		{"wallet/sats", map[string]any{"value": map[string]any{"sats": num("21")}}, "21", "BTC", ""},
		{"wallet/transfer", map[string]any{"amount": num("-5"), "currency": "USDC"}, "", "", "negative"},
	} {
		r, err := l.Read(tc.tool, tc.args)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Read(%s, %v) = %v, want an error with %q", tc.tool, tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("Read(%s, %v): %v", tc.tool, tc.args, err)
		case FormatAmount(r.Amount) != tc.amount || r.Currency != tc.cur:
			t.Errorf("Read(%s, %v) = %s %s, want %s %s", tc.tool, tc.args, FormatAmount(r.Amount), r.Currency, tc.amount, tc.cur)
		}
	}
}

// TestLimit: a currency's limits are found by any of its spellings, and
// a currency without limits has none.
func TestLimit(t *testing.T) {
	l := limits(t, `{" USDC": {"per_day": "500", "aliases": ["USD Coin"]}, "BTC": {"per_call": "0.01"}}`)
	for in, want := range map[string]Decimal{"usdc": "500", "USD COIN": "500", "USDC": "500"} {
		if c, ok := l.Limit(in); !ok || c.PerDay != want {
			t.Errorf("Limit(%q) = %+v, %v; want per_day %s", in, c, ok, want)
		}
	}
	if c, ok := l.Limit("btc"); !ok || c.PerCall != "0.01" {
		t.Errorf("Limit(btc) = %+v, %v", c, ok)
	}
	if c, ok := l.Limit("EUR"); ok {
		t.Errorf("Limit(EUR) = %+v, want none", c)
	}
	if got := l.Names(); got != "BTC, USDC" {
		t.Errorf("Names() = %q", got)
	}
}
