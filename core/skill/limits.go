package skill

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/neobot/neobot/core/mcp"
)

// SpendLimit bounds one spend tool: the argument that holds the amount,
// the one that holds the currency (if any), and the most one call and one
// workspace's UTC day may move. Limits are decimals written as strings
// ("250", "0.5"); a day's total counts every call approved, whether it
// completed or its outcome is unknown, and is kept per currency.
type SpendLimit struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency,omitempty"`
	PerCall  string `json:"per_call,omitempty"`
	PerDay   string `json:"per_day,omitempty"`
}

// ParseAmount reads a decimal amount as a tool argument or a limit may
// write it: a JSON number or a string of digits with an optional point.
// Negative amounts are refused: a limit cannot bound them.
func ParseAmount(v any) (*big.Rat, error) {
	var text string
	switch x := v.(type) {
	case string:
		text = strings.TrimSpace(x)
	case float64:
		text = big.NewFloat(x).Text('f', -1)
	case int:
		text = fmt.Sprint(x)
	case int64:
		text = fmt.Sprint(x)
	case fmt.Stringer: // json.Number
		text = x.String()
	default:
		return nil, fmt.Errorf("%v is not an amount", v)
	}
	if text == "" || strings.ContainsAny(text, "/eE") {
		return nil, fmt.Errorf("%q is not a decimal amount", text)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal amount", text)
	}
	if r.Sign() < 0 {
		return nil, fmt.Errorf("%q is negative", text)
	}
	return r, nil
}

// checkLimits returns what is wrong with a skill's spend_limits.
func checkLimits(limits map[string]SpendLimit, m *mcp.Manifest) []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(limits)) {
		l := limits[key]
		alias, tool, ok := strings.Cut(key, "/")
		if !ok || alias == "" || tool == "" {
			out = append(out, fmt.Sprintf("spend_limits: %q is not <server alias>/<tool>", key))
			continue
		}
		if m != nil && !declares(m, alias, tool) {
			out = append(out, fmt.Sprintf("spend_limits: %q names no tool of the manifest", key))
		}
		if strings.TrimSpace(l.Amount) == "" {
			out = append(out, fmt.Sprintf("spend_limits.%s: amount is empty; name the argument that holds the amount", key))
		}
		if l.PerCall == "" && l.PerDay == "" {
			out = append(out, fmt.Sprintf("spend_limits.%s: set per_call, per_day or both", key))
		}
		for field, v := range map[string]string{"per_call": l.PerCall, "per_day": l.PerDay} {
			if v == "" {
				continue
			}
			if _, err := ParseAmount(v); err != nil {
				out = append(out, fmt.Sprintf("spend_limits.%s.%s: %v; write a decimal such as \"250\"", key, field, err))
			}
		}
	}
	slices.Sort(out)
	return out
}

func declares(m *mcp.Manifest, alias, tool string) bool {
	for _, s := range m.Servers {
		if s.Alias == alias {
			return slices.Contains(s.Tools, tool)
		}
	}
	return false
}
