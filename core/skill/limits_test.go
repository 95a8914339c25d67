package skill

import (
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
		{"-1", ""}, {"1e3", ""}, {"1/2", ""}, {"", ""}, {"five", ""}, {nil, ""}, {true, ""},
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

func TestSpendLimitsChecked(t *testing.T) {
	m := &mcp.Manifest{Servers: []mcp.ServerSpec{{Alias: "wallet", Tools: []string{"transfer"}}}}
	for _, tc := range []struct {
		limits map[string]SpendLimit
		want   string // "" when valid
	}{
		{map[string]SpendLimit{"wallet/transfer": {Amount: "amount", PerCall: "100", PerDay: "250.5"}}, ""},
		{map[string]SpendLimit{"transfer": {Amount: "amount", PerCall: "1"}}, "is not <server alias>/<tool>"},
		{map[string]SpendLimit{"wallet/refund": {Amount: "amount", PerCall: "1"}}, "names no tool of the manifest"},
		{map[string]SpendLimit{"wallet/transfer": {PerCall: "1"}}, "amount is empty"},
		{map[string]SpendLimit{"wallet/transfer": {Amount: "amount"}}, "set per_call, per_day or both"},
		{map[string]SpendLimit{"wallet/transfer": {Amount: "amount", PerDay: "lots"}}, `per_day: "lots" is not a decimal amount`},
	} {
		got := strings.Join(checkLimits(tc.limits, m), "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("checkLimits(%v) = %q, want %q", tc.limits, got, tc.want)
		}
	}
}
