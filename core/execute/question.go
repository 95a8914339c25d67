package execute

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/tools"
)

// maxQuestion is the most bytes a spend's approval may take: it fits
// every platform's message whole (Discord shows 1,600 characters of a
// question, Slack 2,800 bytes), so nothing of the call is ever clipped
// out of sight. A call whose question does not fit is not planned.
const maxQuestion = 1500

// maxQuoted is the most of the requester's message, or of Neo's reading
// of it, that a question quotes; a longer one says its size.
const maxQuoted = 300

// Question is what a person approving the call s is shown: the tool;
// what the requester wrote, in their own words, and Neo's reading of it,
// each labelled as what it is; every argument of the call; and what it
// moves to whom. Whatever someone other than neobot wrote is quoted and
// escaped (no line breaks, bidi or invisible characters, backticks or
// mentions), so it cannot pass itself off as part of the question.
func Question(s core.Spend) string {
	q, _ := question(s)
	return q
}

// question is Question, and whether it shows the whole call.
func question(s core.Spend) (string, bool) {
	args, err := parseArgs(string(s.Args))
	if err != nil {
		return fmt.Sprintf("Neo wants to spend with %s/%s (request %s), but its recorded arguments cannot be read, so it cannot be shown. Deny it.", s.Server, s.Name, s.ID), false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Neo wants to spend with %s/%s (request %s).\n", s.Server, s.Name, s.ID)
	if s.Message != "" {
		fmt.Fprintf(&b, "<@%s> wrote: `%s`\n", s.Requester, quoted(s.Message))
	} else {
		fmt.Fprintf(&b, "Asked for <@%s>.\n", s.Requester)
	}
	fmt.Fprintf(&b, "Neo's reading of it (not their words): `%s`\n", quoted(s.Intent))
	head := b.String()
	tail := s.Summary + "\nApprove this exact call?"
	budget := maxQuestion - len(head) - len(tail) - len("```\n\n```\n")
	if len(args) == 0 {
		q := head + "The call has no arguments.\n" + tail
		return q, len(q) <= maxQuestion
	}
	shown, complete := tools.ShowArgs(args, max(budget, 0))
	return head + "```\n" + shown + "\n```\n" + tail, complete
}

// quoted is text someone else wrote, as a question quotes it: one JSON
// string, escaped, cut at maxQuoted bytes with its size said, its angle
// brackets made inert.
func quoted(text string) string {
	text = strings.TrimSpace(text)
	if len(text) > maxQuoted {
		i := maxQuoted
		for i > 0 && !utf8.RuneStart(text[i]) {
			i--
		}
		return inert(tools.Quote(text[:i])) + fmt.Sprintf(" … (%d bytes in all)", len(text))
	}
	return inert(tools.Quote(text))
}

// summary is the line under a call's arguments: what it moves, and to
// whom, from the arguments the limits read.
func summary(s core.Spend, args map[string]any) string {
	what := "That is a call of " + s.Server + "/" + s.Name
	if s.Amount != "" {
		what = "That is " + inert(tools.Escape(strings.TrimSpace(s.Amount+" "+s.Currency)))
	}
	if to := firstOf(args, "recipient", "to", "destination", "address", "customer", "payee"); to != "" {
		what += " to `" + inert(tools.Quote(to)) + "`"
	}
	return what + "."
}

// inert keeps others' words (the intent, argument values) from becoming a
// chat platform's mention or link (<!channel>, <@U…>, <https://…>).
func inert(s string) string { return strings.NewReplacer("<", "‹", ">", "›").Replace(s) }

// firstOf returns the first of keys that args holds as a short string.
func firstOf(args map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := args[k].(string); ok && v != "" && len(v) <= 100 {
			return v
		}
	}
	return ""
}
