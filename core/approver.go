package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GateRequest is what the execution daemon asks a human before a spend.
type GateRequest struct {
	Thread   Thread   `json:"thread"`
	IntentID string   `json:"intent_id"`
	NodeID   string   `json:"node_id"`
	Question string   `json:"question"`
	Options  []string `json:"options"`
	// Requester is the user whose message started the turn.
	Requester string `json:"requester"`
	// CallID is the tool call that delegated the intent, "" outside a
	// turn.
	CallID string `json:"call_id,omitempty"`
}

// Binding identifies the exact question a person is shown: the thread, the
// tool call, the intent and node, and a hash of the question and options.
// A decision is reused only for a request with the same binding (a turn
// resumed after a restart); a daemon that reuses an intent ID in another
// thread, or re-raises a node with a new question, is asked again.
func (r GateRequest) Binding() string {
	h := sha256.New()
	for _, part := range append([]string{r.Thread.Key(), r.CallID, r.IntentID, r.NodeID, r.Question}, r.Options...) {
		// Length-prefixed, so no two requests hash the same parts.
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// GateAnswer is a human's decision on a gate.
type GateAnswer struct {
	Approved bool `json:"approved"`
	// Answer is the option chosen, "" when denied by default.
	Answer string `json:"answer"`
	// By is the user who decided, "" when denied by default (timeout,
	// cancellation, no approver).
	By string `json:"by,omitempty"`
}

// Approver asks a human to decide a gate and blocks until they do, the
// context ends, or the gate expires.
type Approver func(ctx context.Context, req GateRequest) (GateAnswer, error)

// Ask calls a and applies the deny-by-default rule: a nil approver, an error,
// or a cancelled context all deny.
func Ask(ctx context.Context, a Approver, req GateRequest) GateAnswer {
	if a == nil || ctx.Err() != nil {
		return GateAnswer{}
	}
	ans, err := a(ctx, req)
	if err != nil {
		return GateAnswer{}
	}
	return ans
}

// yesWords are the words that plainly approve, as a whole option or as its
// first word.
var yesWords = map[string]bool{
	"yes": true, "y": true, "approve": true, "approved": true, "confirm": true,
	"ok": true, "proceed": true, "allow": true, "accept": true,
}

// negations are words that, anywhere in an option, make it something other
// than a plain yes ("Yes, but not now", "OK to skip").
var negations = map[string]bool{
	"no": true, "n": true, "not": true, "never": true, "nope": true, "nah": true,
	"none": true, "nothing": true, "neither": true, "nor": true, "without": true,
	"don't": true, "dont": true, "doesn't": true, "won't": true,
	"can't": true, "cannot": true, "shouldn't": true, "mustn't": true,
	"deny": true, "denied": true, "later": true, "wait": true, "hold": true, "undo": true,
}

// negationStems catch the forms of words that refuse ("cancellation",
// "rejected", "skipping").
var negationStems = []string{"cancel", "reject", "declin", "abort", "stop", "skip", "refus", "revok", "halt"}

// negates reports whether the word w refuses or negates.
func negates(w string) bool {
	if negations[w] || strings.HasSuffix(w, "n't") {
		return true
	}
	for _, s := range negationStems {
		if strings.HasPrefix(w, s) {
			return true
		}
	}
	return false
}

// MaxApprovingOption is the longest option, in characters (whitespace
// collapsed), that can approve: the shortest button label of the
// platforms Neo runs on (Slack's 75).
const MaxApprovingOption = 75

// Approves reports whether choosing option approves the gate. Only a plain
// yes approves: one of yes, y, approve, approved, confirm, ok, proceed,
// allow or accept, as the whole option or its first word, with no negation
// anywhere in it ("Yes, send it" approves; "Don't send", "Not now", "Skip"
// and "OK, but not today" deny). Everything else denies, so an option
// worded in a way Neo doesn't understand can never move money.
//
// An approving option must also read the same to everyone: it fits whole
// on any platform's button (MaxApprovingOption characters), so no part of
// what is approved hides behind a cut label, and it holds no invisible or
// combining characters, which can make "Y̶e̶s̶" or a hidden word read
// differently from what the words say.
func Approves(option string) bool {
	if utf8.RuneCountInString(strings.Join(strings.Fields(option), " ")) > MaxApprovingOption {
		return false
	}
	for _, r := range option {
		if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || unicode.IsControl(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	words := optionWords(option)
	if len(words) == 0 || !yesWords[words[0]] {
		return false
	}
	for _, w := range words {
		if negates(w) {
			return false
		}
	}
	return true
}

// optionWords lowercases option and splits it into words of letters, digits
// and apostrophes (typographic ones folded to ').
func optionWords(option string) []string {
	o := strings.ToLower(strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u02bc", "'").Replace(option))
	return strings.FieldsFunc(o, func(r rune) bool {
		return r != '\'' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
