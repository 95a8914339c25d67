package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Option is one answer a gate offers: the label on its button, and whether
// choosing it approves. Whoever creates the gate sets Approves; nothing in
// core reads it from the label. Labels that come from outside (the
// execution daemon's gates) are read with [Approves] where they come in.
//
// For a question with a form (see [Form.Options]) Approves marks the
// options that answer it with a value: a choice, or the button that opens
// the form. Decline and Cancel do not. Such an answer approves no spend;
// it is what the tool's server asked for.
type Option struct {
	Label    string `json:"label"`
	Approves bool   `json:"approves,omitempty"`
}

// UnmarshalJSON reads an option as stored, including a gate stored by an
// earlier version, whose options were plain labels: such a label approves
// when [Approves] says so, as it was decided when the gate was stored.
// This is the one place the label parser still reads stored data.
func (o *Option) UnmarshalJSON(b []byte) error {
	var label string
	if err := json.Unmarshal(b, &label); err == nil {
		*o = Option{Label: label, Approves: Approves(label)}
		return nil
	}
	type plain Option // no UnmarshalJSON, so no recursion
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("gate option: %w", err)
	}
	*o = Option(p)
	return nil
}

// Labels returns the labels of opts, in order.
func Labels(opts []Option) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = o.Label
	}
	return out
}

// GateRequest is what the execution daemon asks a human before a spend.
type GateRequest struct {
	Thread   Thread   `json:"thread"`
	IntentID string   `json:"intent_id"`
	NodeID   string   `json:"node_id"`
	Question string   `json:"question"`
	Options  []Option `json:"options"`
	// Requester is the user whose message started the turn.
	Requester string `json:"requester"`
	// CallID is the tool call that delegated the intent, "" outside a
	// turn.
	CallID string `json:"call_id,omitempty"`
	// Form makes the request a question a tool's server asks the
	// requester (an MCP elicitation); Options are then the form's.
	Form *Form `json:"form,omitempty"`
	// TTL, when positive, is how long the gate stays open instead of the
	// Gates' default.
	TTL time.Duration `json:"ttl,omitempty"`
	// Note, when set, withdraws the question bound to the request instead
	// of asking it: a pending one is closed as expired with Note as the
	// sentence its message shows. The approver returns ErrNotFound when
	// there is none (see [Gates.Ask]).
	Note string `json:"note,omitempty"`
	// PlaceApprovers are the people the place's stored settings add to
	// the platform's configured approvers, for this request alone (the
	// spend's place; core/governance). A tier of a policy that names its
	// own approvers is not widened by them, and the requester still may
	// not approve unless self-approval is on.
	PlaceApprovers []string `json:"place_approvers,omitempty"`
	// Quorum, when set, is the approval policy's tier for the request:
	// who may approve it, how many must, and its reminder, escalation
	// and expiry. Nil: one of the configured approvers decides.
	Quorum *Quorum `json:"quorum,omitempty"`
}

// Binding identifies the exact question a person is shown: the thread, the
// tool call, the intent and node, and a hash of the question and the
// options' labels (labels only, so a gate stored before options carried
// their Approves flag keeps its binding).
// A decision is reused only for a request with the same binding (a turn
// resumed after a restart); a daemon that reuses an intent ID in another
// thread, or re-raises a node with a new question, is asked again.
//
// A question with a Form is bound by its place alone (the thread, call,
// intent and node): what it asks is compared when it is found (see
// [Gates.Open]), so a changed question replaces the one shown.
func (r GateRequest) Binding() string {
	h := sha256.New()
	parts := append([]string{r.Thread.Key(), r.CallID, r.IntentID, r.NodeID, r.Question}, Labels(r.Options)...)
	if r.Form != nil {
		parts = []string{r.Thread.Key(), r.CallID, r.IntentID, r.NodeID, "form"}
	}
	for _, part := range parts {
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
	// Values is the accepted answer to a question with a form, as a JSON
	// object (text, so a GateAnswer stays comparable).
	Values string `json:"values,omitempty"`
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
// than a plain yes ("Yes, but not now", "OK to skip", "Ja, nicht senden").
var negations = map[string]bool{
	"no": true, "n": true, "not": true, "never": true, "nope": true, "nah": true,
	"none": true, "nothing": true, "neither": true, "nor": true, "without": true,
	"don't": true, "dont": true, "doesn't": true, "won't": true,
	"can't": true, "cannot": true, "shouldn't": true, "mustn't": true,
	"deny": true, "denied": true, "later": true, "wait": true, "hold": true, "undo": true,
	"tomorrow": true, "eventually": true, "maybe": true,
	// German, French, Italian, Spanish, Portuguese, Dutch, Scandinavian,
	// Polish, Czech, Russian, Ukrainian, Turkish.
	"nein": true, "nicht": true, "kein": true, "keine": true, "nie": true,
	"non": true, "pas": true, "ne": true, "jamais": true, "rien": true,
	"nunca": true, "nada": true, "não": true, "nao": true, "ni": true, "nem": true,
	"niet": true, "geen": true, "nee": true, "nej": true, "nei": true, "ikke": true, "inte": true,
	"nigdy": true, "ani": true, "nikdy": true,
	"нет": true, "не": true, "ни": true, "никогда": true, "ні": true,
	"hayır": true, "hayir": true, "değil": true, "yok": true,
}

// negationStems catch the forms of words that refuse or put off
// ("cancellation", "rejected", "skipping", "postponed", "pausing").
var negationStems = []string{
	"cancel", "reject", "declin", "abort", "stop", "skip", "refus", "revok", "halt",
	"postpon", "paus", "delay", "defer", "later", "hold", "wait", "suspend", "resched",
	"annul", "abbrech", "verschieb", "warte", "später", "spater", "plus tard", "attend",
	"despu", "luego", "espera", "aplaz", "adiar", "depois", "потом", "отмен", "позже", "подожд",
}

// negationRunes are negations in scripts written without spaces between
// words (Chinese, Japanese, Korean): anywhere in an option, as part of any
// word, they refuse.
var negationRunes = []string{
	"不", "没", "沒", "否", "别", "別", "勿", "非", "無", "无", "未", "莫", "停", "取消", "拒", "稍后", "以后", "等",
	"いいえ", "ない", "なし", "ません", "だめ", "ダメ", "やめ", "後で", "あとで", "待",
	"아니", "안", "않", "못", "말", "취소", "거절", "나중", "보류", "대기",
}

// negates reports whether the word w refuses, negates or puts off.
func negates(w string) bool {
	if negations[w] || strings.HasSuffix(w, "n't") {
		return true
	}
	for _, s := range negationStems {
		if strings.HasPrefix(w, s) {
			return true
		}
	}
	for _, s := range negationRunes {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// MaxApprovingOption is the longest option, in characters (whitespace
// collapsed), that can approve: the shortest button label of the
// platforms Neo runs on (Slack's 75).
const MaxApprovingOption = 75

// Approves reports whether an option labelled option approves, for labels
// whose meaning no one marked: the execution daemon's gates (core/delegate
// sets [Option.Approves] with it) and gates stored by earlier versions
// (see [Option.UnmarshalJSON]). Every other gate is created with its
// flags set, and Gates.Decide and the adapters read only those. Only a plain
// yes approves: one of yes, y, approve, approved, confirm, ok, proceed,
// allow or accept, as the whole option or its first word, with no negation
// and nothing that puts the spend off anywhere in it, in English or in
// any common language ("Yes, send it" approves; "Don't send", "Not now",
// "Skip", "OK, postpone", "Yes, pause", "OK, nicht senden" and "Yes 不要"
// deny). Everything else denies, so an option worded in a way Neo doesn't
// understand can never move money.
//
// The option is read in Unicode NFKC form, so full-width or stylised
// letters read as the plain ones they stand for. An approving option must
// also read the same to everyone: it fits whole on any platform's button
// (MaxApprovingOption characters), so no part of what is approved hides
// behind a cut label, and it holds no invisible, filler or combining
// characters (a Hangul filler inside "n\u3164ot" renders as a blank and
// hides the "not"; a zero-width space hides a word break), which can make
// an option read differently from what its words say.
func Approves(option string) bool {
	for _, r := range option {
		if hidden(r) {
			return false
		}
	}
	option = norm.NFKC.String(option)
	if utf8.RuneCountInString(strings.Join(strings.Fields(option), " ")) > MaxApprovingOption {
		return false
	}
	for _, r := range option {
		if hidden(r) {
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
	// Stems of more than one word ("plus tard").
	joined := strings.Join(words, " ")
	for _, s := range negationStems {
		if strings.Contains(s, " ") && strings.Contains(joined, s) {
			return false
		}
	}
	return true
}

// hidden reports whether r renders as nothing, as a blank that is not a
// space, or as a mark on another character: format and control
// characters, default-ignorable code points (the Hangul fillers U+115F,
// U+1160, U+3164 and U+FFA0, variation selectors, tags), the blank
// Braille pattern U+2800, combining marks, and private-use or unassigned
// code points whose look no one can vouch for.
func hidden(r rune) bool {
	switch {
	case r == '\u2800' || r == utf8.RuneError:
		return true
	case unicode.IsSpace(r):
		return false
	case unicode.IsControl(r):
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Co,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// optionWords lowercases option and splits it into words of letters, digits
// and apostrophes (typographic ones folded to ').
func optionWords(option string) []string {
	o := strings.ToLower(strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u02bc", "'").Replace(option))
	return strings.FieldsFunc(o, func(r rune) bool {
		return r != '\'' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
