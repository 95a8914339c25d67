package skill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/neobot/neobot/core/mcp"
)

// Limits is a skill's spend_limits: how much may be spent per call and
// per workspace and UTC day in each currency, and, for the spend tools
// that need it, which arguments hold a call's amount and currency. Keys
// with a "/" name a tool ("<server alias>/<tool>"); every other key is a
// currency:
//
//	{"USDC": {"per_call": "100", "per_day": "500", "aliases": ["USD Coin"]},
//	 "wallet/payout": {"amount": "payouts[].amount", "currency": "currency"}}
//
// While any currency has a limit, every spend call must name one of the
// limited currencies, or it is refused before anyone is asked.
type Limits struct {
	// Currencies maps each currency, as the operator wrote it, to its
	// limits.
	Currencies map[string]CurrencyLimit
	// Tools maps "<server alias>/<tool>" to where its amount and currency
	// are.
	Tools map[string]ToolAmount
}

// CurrencyLimit bounds one currency: the most one call, and one
// workspace's UTC day over every spend tool, may move. Limits are
// decimals ("250", "0.5"). Aliases are other spellings the currency goes
// by; case and surrounding blanks never matter.
type CurrencyLimit struct {
	PerCall Decimal  `json:"per_call,omitempty"`
	PerDay  Decimal  `json:"per_day,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
}

// ToolAmount names a spend tool's arguments: Amount the path of the one
// holding the amount ("amount", "payment.amount", or "payouts[].amount"
// for a list, whose items' amounts are summed); Currency the path of the
// one holding the currency, or In the one currency the tool moves when it
// has no such argument. PerCall and PerDay are the earlier shape's limits
// without a currency: they are refused, saying how to write them now.
type ToolAmount struct {
	Amount   string  `json:"amount"`
	Currency string  `json:"currency,omitempty"`
	In       string  `json:"in,omitempty"`
	PerCall  Decimal `json:"per_call,omitempty"`
	PerDay   Decimal `json:"per_day,omitempty"`
}

// Decimal is a decimal amount as settings write it: a JSON string or
// number, kept as written.
type Decimal string

// UnmarshalJSON takes a JSON string or number.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*d = Decimal(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("%s is not a decimal amount", b)
	}
	*d = Decimal(n)
	return nil
}

// UnmarshalJSON reads spend_limits, refusing unknown fields, so a
// misspelt limit never silently bounds nothing.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*l = Limits{}
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		var err error
		if strings.Contains(key, "/") {
			var t ToolAmount
			if err = strict(raw[key], &t); err == nil {
				if l.Tools == nil {
					l.Tools = map[string]ToolAmount{}
				}
				l.Tools[key] = t
			}
		} else {
			var c CurrencyLimit
			if err = strict(raw[key], &c); err != nil {
				err = fmt.Errorf("%v (a currency takes per_call, per_day and aliases; a tool's arguments are keyed \"<server alias>/<tool>\")", strings.TrimPrefix(err.Error(), "json: "))
			} else {
				if l.Currencies == nil {
					l.Currencies = map[string]CurrencyLimit{}
				}
				l.Currencies[key] = c
			}
		}
		if err != nil {
			return fmt.Errorf("spend_limits.%s: %v", key, strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	return nil
}

func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Active reports whether any currency has a limit: then every spend call
// is checked, and one that cannot be is refused.
func (l Limits) Active() bool { return len(l.Currencies) > 0 }

// NormalizeCurrency is how currency spellings are compared: surrounding
// blanks dropped, upper case. Anything else (an inner space, a
// zero-width character, a look-alike letter) is another currency, which
// has no limit and is refused.
func NormalizeCurrency(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// Currency returns the currency spelt s as the operator wrote its key,
// and whether it has a limit.
func (l Limits) Currency(s string) (string, bool) {
	n := NormalizeCurrency(s)
	if n == "" {
		return "", false
	}
	for _, key := range slices.Sorted(maps.Keys(l.Currencies)) {
		if NormalizeCurrency(key) == n || slices.ContainsFunc(l.Currencies[key].Aliases, func(a string) bool { return NormalizeCurrency(a) == n }) {
			return strings.TrimSpace(key), true
		}
	}
	return "", false
}

// Limit returns the limits of the currency spelt s.
func (l Limits) Limit(s string) (CurrencyLimit, bool) {
	canon, ok := l.Currency(s)
	if !ok {
		return CurrencyLimit{}, false
	}
	for key, c := range l.Currencies {
		if strings.TrimSpace(key) == canon {
			return c, true
		}
	}
	return CurrencyLimit{}, false
}

// Names lists the limited currencies, for a refusal.
func (l Limits) Names() string {
	var out []string
	for k := range l.Currencies {
		out = append(out, strings.TrimSpace(k))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// Reading is a call's amount and currency as its arguments give them.
type Reading struct {
	// Amount is the call's amount, a list's items summed.
	Amount *big.Rat
	// Currency is the currency as the operator wrote its key when it has a
	// limit, else as the call spelt it (trimmed).
	Currency string
}

// Read finds the amount and currency of a call of tool ("<server
// alias>/<tool>") with args. A tool the operator did not name is read at
// its "amount" and "currency" arguments, and only when every argument is
// a plain value: a list or an object might hold more amounts, so such a
// tool needs its entry. An error says what is missing, for the person.
func (l Limits) Read(tool string, args map[string]any) (Reading, error) {
	spec, ok := l.Tools[tool]
	if !ok {
		for k, v := range args {
			switch v.(type) {
			case map[string]any, []any:
				return Reading{}, fmt.Errorf("its argument %q holds a list or an object that may hold more amounts, and the skill's spend_limits do not name %s's amount field, so it cannot be checked against the limits (the operator names it: %q: {\"amount\": \"<list>[].amount\"})", k, tool, tool)
			}
		}
		spec = ToolAmount{Amount: "amount", Currency: "currency"}
		if _, ok := args["amount"]; !ok {
			return Reading{}, fmt.Errorf("it has no \"amount\" argument, and the skill's spend_limits do not name the one that holds its amount (the operator names it: %q: {\"amount\": \"<argument>\", \"currency\": \"<argument>\"})", tool)
		}
	}
	amounts, err := collect(args, spec.Amount)
	if err != nil {
		return Reading{}, fmt.Errorf("its amount (%s) %v", spec.Amount, err)
	}
	total := new(big.Rat)
	for _, v := range amounts {
		a, err := ParseAmount(v)
		if err != nil {
			return Reading{}, fmt.Errorf("its amount (%s) %v", spec.Amount, err)
		}
		total.Add(total, a)
	}
	if spec.In != "" {
		cur, _ := l.Currency(spec.In)
		return Reading{Amount: total, Currency: cur}, nil
	}
	if spec.Currency == "" {
		return Reading{}, fmt.Errorf("the skill's spend_limits do not say which currency %s moves (the operator writes \"currency\": \"<argument>\" or \"in\": \"<currency>\")", tool)
	}
	curs, err := collect(args, spec.Currency)
	if err != nil || len(curs) == 0 {
		return Reading{}, fmt.Errorf("its currency (%s) is missing; a spend must say its currency", spec.Currency)
	}
	var first string
	for i, v := range curs {
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return Reading{}, fmt.Errorf("its currency (%s) is missing or not text; a spend must say its currency", spec.Currency)
		}
		c, known := l.Currency(s)
		if !known {
			c = strings.TrimSpace(s)
		}
		if i == 0 {
			first = c
		} else if c != first {
			return Reading{}, fmt.Errorf("it moves more than one currency (%q and %q); ask for one call per currency", first, c)
		}
	}
	return Reading{Amount: total, Currency: first}, nil
}

var pathRe = regexp.MustCompile(`^[A-Za-z0-9_$-]+(\[\])?(\.[A-Za-z0-9_$-]+(\[\])?)*$`)

// collect returns the values at path in args: "a.b" is b of object a,
// "a[].b" is b of every item of list a. A value missing on the way is an
// error.
func collect(args map[string]any, path string) ([]any, error) {
	if !pathRe.MatchString(path) {
		return nil, fmt.Errorf("is not an argument path")
	}
	vals := []any{args}
	for _, seg := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(seg, "[]")
		var next []any
		for _, v := range vals {
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("is missing: %q is not inside an object", name)
			}
			x, ok := obj[name]
			if !ok || x == nil {
				return nil, fmt.Errorf("is missing (%q)", name)
			}
			if !list {
				next = append(next, x)
				continue
			}
			items, ok := x.([]any)
			if !ok {
				return nil, fmt.Errorf("is not a list (%q)", name)
			}
			next = append(next, items...)
		}
		vals = next
	}
	return vals, nil
}

// amountRe is a decimal as an amount may be written: digits, an optional
// fraction, an optional exponent of at most three digits (1e-05).
var amountRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]{1,3})?$|^\.[0-9]+$`)

// ParseAmount reads a decimal amount as a tool argument or a limit may
// write it: a JSON number or a string of digits with an optional point
// and exponent, exactly. Negative amounts are refused: a limit cannot
// bound them.
func ParseAmount(v any) (*big.Rat, error) {
	var text string
	switch x := v.(type) {
	case string:
		text = strings.TrimSpace(x)
	case Decimal:
		text = strings.TrimSpace(string(x))
	case float64:
		text = big.NewFloat(x).Text('g', -1)
	case int:
		text = fmt.Sprint(x)
	case int64:
		text = fmt.Sprint(x)
	case json.Number:
		text = x.String()
	default:
		return nil, fmt.Errorf("%v is not an amount", v)
	}
	if strings.HasPrefix(text, "-") {
		return nil, fmt.Errorf("%q is negative", text)
	}
	if !amountRe.MatchString(text) {
		return nil, fmt.Errorf("%q is not a decimal amount", text)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal amount", text)
	}
	return r, nil
}

// FormatAmount writes r, a decimal, exactly and without an exponent:
// 1e-05 is "0.00001", 12.50 is "12.5".
func FormatAmount(r *big.Rat) string {
	// A decimal's denominator is 2^a·5^b; max(a, b) digits show it exactly.
	d := new(big.Int).Set(r.Denom())
	digits := 0
	for _, p := range []int64{2, 5} {
		n, q, m := 0, new(big.Int), new(big.Int)
		for d2 := new(big.Int).Set(d); ; n++ {
			q.QuoRem(d2, big.NewInt(p), m)
			if m.Sign() != 0 {
				break
			}
			d2.Set(q)
		}
		digits = max(digits, n)
	}
	return r.FloatString(digits)
}

// checkLimits returns what is wrong with a skill's spend_limits.
func checkLimits(l Limits, m *mcp.Manifest) []string {
	var out []string
	seen := map[string]string{}
	same := func(key, spelling string) {
		n := NormalizeCurrency(spelling)
		if n == "" {
			out = append(out, fmt.Sprintf("spend_limits.%s: a currency spelling is empty", key))
			return
		}
		if prev, dup := seen[n]; dup {
			out = append(out, fmt.Sprintf("spend_limits.%s: %q is already a spelling of %s (case and blanks do not matter); write each currency and alias once", key, spelling, prev))
			return
		}
		seen[n] = key
	}
	for _, key := range slices.Sorted(maps.Keys(l.Currencies)) {
		c := l.Currencies[key]
		same(key, key)
		for _, a := range c.Aliases {
			same(key, a)
		}
		if c.PerCall == "" && c.PerDay == "" {
			out = append(out, fmt.Sprintf("spend_limits.%s: set per_call, per_day or both", key))
		}
		for field, v := range map[string]Decimal{"per_call": c.PerCall, "per_day": c.PerDay} {
			if v == "" {
				continue
			}
			if _, err := ParseAmount(v); err != nil {
				out = append(out, fmt.Sprintf("spend_limits.%s.%s: %v; write a decimal such as \"250\"", key, field, err))
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(l.Tools)) {
		t := l.Tools[key]
		alias, tool, ok := strings.Cut(key, "/")
		if !ok || alias == "" || tool == "" {
			out = append(out, fmt.Sprintf("spend_limits: %q is not <server alias>/<tool>", key))
			continue
		}
		if m != nil && !declares(m, alias, tool) {
			out = append(out, fmt.Sprintf("spend_limits: %q names no tool of the manifest", key))
		}
		if t.PerCall != "" || t.PerDay != "" {
			out = append(out, fmt.Sprintf(`spend_limits.%s: per_call and per_day without a currency are refused, since a limit written for one currency would let as much of any other through; set them per currency and keep the tool's entry for its arguments: "spend_limits": {"USDC": %s, %q: {"amount": %q, "currency": %q}} (see docs/spending.md)`,
				key, legacyLimit(t), key, t.Amount, t.Currency))
		}
		switch {
		case strings.TrimSpace(t.Amount) == "":
			out = append(out, fmt.Sprintf("spend_limits.%s: amount is empty; name the argument that holds the amount", key))
		case !pathRe.MatchString(t.Amount):
			out = append(out, fmt.Sprintf("spend_limits.%s.amount: %q is not an argument path; write \"amount\", \"payment.amount\" or \"payouts[].amount\"", key, t.Amount))
		}
		switch {
		case t.Currency != "" && t.In != "":
			out = append(out, fmt.Sprintf("spend_limits.%s: set currency (the argument) or in (the one currency), not both", key))
		case t.Currency != "" && !pathRe.MatchString(t.Currency):
			out = append(out, fmt.Sprintf("spend_limits.%s.currency: %q is not an argument path", key, t.Currency))
		case t.Currency == "" && t.In == "":
			out = append(out, fmt.Sprintf("spend_limits.%s: say which currency it moves: \"currency\": \"<argument>\" or \"in\": \"<currency>\"", key))
		case t.In != "":
			if _, ok := l.Currency(t.In); !ok {
				out = append(out, fmt.Sprintf("spend_limits.%s.in: %q has no limit; add it to spend_limits", key, t.In))
			}
		}
	}
	if len(l.Tools) > 0 && !l.Active() {
		out = append(out, "spend_limits: names tools' arguments but limits no currency; add one, e.g. \"USDC\": {\"per_day\": \"500\"}")
	}
	slices.Sort(out)
	return out
}

// legacyLimit writes the limits of an entry in the earlier shape as a
// currency's limits.
func legacyLimit(t ToolAmount) string {
	c := map[string]Decimal{}
	if t.PerCall != "" {
		c["per_call"] = t.PerCall
	}
	if t.PerDay != "" {
		c["per_day"] = t.PerDay
	}
	b, _ := json.Marshal(c)
	return strings.ReplaceAll(string(b), ",", ", ")
}

func declares(m *mcp.Manifest, alias, tool string) bool {
	for _, s := range m.Servers {
		if s.Alias == alias {
			return slices.Contains(s.Tools, tool)
		}
	}
	return false
}
