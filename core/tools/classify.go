package tools

import (
	"strings"
	"unicode"
)

// Class says whether Neo may call a tool directly.
type Class int

const (
	// Natural tools are reversible and need no wallet signature: Neo calls
	// them directly.
	Natural Class = iota
	// Escalate tools move or commit funds, or need a signature: they are
	// never advertised, and are reachable only through core_execute.
	Escalate
)

// String returns "natural" or "escalate".
func (c Class) String() string {
	if c == Escalate {
		return "escalate"
	}
	return "natural"
}

// DefaultEscalatePatterns returns the patterns used when neither Options
// nor the manifest give any: the seed's list, each matching anywhere in a
// tool's name, so "multisend" and "TokenSwap" escalate. On-chain reads and
// dry runs (compile, test, simulate, lookup, list) deliberately match none
// of them.
func DefaultEscalatePatterns() []string {
	return []string{"send", "transfer", "swap", "approve", "deploy", "settle", "fund", "mint", "withdraw", "stake", "invoke", "bridge"}
}

// DefaultEscalateWords returns the payment vocabulary a tool name is also
// matched against, always, whatever the patterns: each entry is one word,
// or words that must follow each other, matched against the words of the
// name as snake_case, kebab-case and camelCase spell them. Whole words,
// because as substrings "pay" would escalate payload and display, and
// "buy" buyer_info_lookup. Nouns that reads share (invoice, order,
// payment) count only after a verb that commits them. A name that starts
// with a read verb (get_charge, list_payouts) is not
// escalated by these words, only by the patterns. docs/spending.md lists
// every decision.
func DefaultEscalateWords() []string {
	return []string{
		"pay", "payout", "charge", "purchase", "buy", "checkout", "subscribe", "refund", "donate", "disburse", "remit",
		"create payment", "make payment", "submit payment", "process payment", "execute payment", "capture payment", "confirm payment",
		"create invoice", "finalize invoice",
		"place order", "submit order", "create order", "capture order",
	}
}

// readVerb reports whether w, the first word of a name, says the tool
// reads: the payment vocabulary does not escalate get_charge or
// list_payouts.
func readVerb(w string) bool {
	switch w {
	case "get", "list", "read", "retrieve", "search", "find", "lookup", "describe", "show", "view", "fetch", "count", "query":
		return true
	}
	return false
}

// Classify returns Escalate when the tool's name contains one of patterns,
// case-insensitively, or holds one of [DefaultEscalateWords] as whole
// words; Natural otherwise.
func Classify(tool string, patterns []string) Class {
	name := strings.ToLower(tool)
	for _, p := range patterns {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" && strings.Contains(name, p) {
			return Escalate
		}
	}
	words := splitWords(tool)
	if len(words) > 0 && readVerb(words[0]) {
		return Natural
	}
	// Joined with spaces on both ends, a phrase matches as " create invoice ".
	joined := " " + strings.Join(words, " ") + " "
	for _, w := range DefaultEscalateWords() {
		if strings.Contains(joined, " "+w+" ") {
			return Escalate
		}
	}
	return Natural
}

// splitWords splits a tool name into its lowercase words: at every character
// that is not a letter or digit (snake_case, kebab-case, dots, spaces), at
// a lower-to-upper change (createPayment), before the last capital of a
// run followed by a lowercase letter (HTTPPay: http, pay), and between
// letters and digits (pay2: pay, 2).
func splitWords(name string) []string {
	var words []string
	rs := []rune(name)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 {
			prev := rs[i-1]
			switch {
			case unicode.IsUpper(r) && unicode.IsLower(prev),
				unicode.IsDigit(r) != unicode.IsDigit(prev),
				unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return words
}
