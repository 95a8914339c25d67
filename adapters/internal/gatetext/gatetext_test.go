package gatetext

import (
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

func TestWho(t *testing.T) {
	tests := []struct {
		g    core.Gate
		want string
	}{
		{core.Gate{Requester: "U1", Allowed: []string{"U9"}}, "Requested for <@U1>. Only a configured approver can answer this."},
		{core.Gate{Requester: "U1", SelfApprove: true}, "Requested for <@U1>. Only the person who asked can answer this."},
		{core.Gate{Requester: "U1", SelfApprove: true, Allowed: []string{"U9"}}, "Requested for <@U1>. Only the person who asked, or a configured approver, can answer this."},
	}
	for _, tt := range tests {
		if got := Who(tt.g); got != tt.want {
			t.Errorf("Who(%+v) = %q, want %q", tt.g, got, tt.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	at := time.Unix(1700000000, 0)
	date := func(time.Time) string { return "DATE" }
	tests := []struct {
		g    core.Gate
		want string
	}{
		{core.Gate{State: core.GateApproved, Answer: "Yes,   send", DecidedBy: "U9", DecidedAt: at}, "Approved (Yes, send) by <@U9> at DATE"},
		{core.Gate{State: core.GateDenied, Answer: "", DecidedBy: "U9", DecidedAt: at}, "Denied (Option 1) by <@U9> at DATE"},
		{core.Gate{State: core.GateDenied}, "Denied — the request was withdrawn."},
		{core.Gate{State: core.GateExpired}, "Expired — nothing was approved."},
		{core.Gate{State: core.GateExpired, DecidedAt: at}, "Expired at DATE — nothing was approved."},
	}
	for _, tt := range tests {
		if got := Outcome(tt.g, date, strings.ToUpper); !strings.EqualFold(got, tt.want) {
			t.Errorf("Outcome(%s) = %q, want %q", tt.g.State, got, tt.want)
		}
	}
}

func TestLabel(t *testing.T) {
	if got := Label(" \n\t", 2, 80); got != "Option 3" {
		t.Errorf("blank label = %q", got)
	}
	if got := Label(strings.Repeat("é", 200), 0, 75); len([]rune(got)) > 75 || !strings.HasSuffix(got, "…") {
		t.Errorf("long label = %q (%d characters)", got, len([]rune(got)))
	}
}

func TestQuestionWords(t *testing.T) {
	at := time.Unix(1700000000, 0)
	date := func(time.Time) string { return "DATE" }
	form := &core.Form{}
	tests := []struct {
		g            core.Gate
		title, words string
	}{
		{core.Gate{Form: form, State: core.GatePending, Requester: "U1"}, "Question", ""},
		{core.Gate{Form: form, State: core.GateApproved, Answer: "Medium", DecidedBy: "U1", DecidedAt: at}, "Answered", "Answered (Medium) by <@U1> at DATE"},
		{core.Gate{Form: form, State: core.GateApproved, Answer: core.ElicitOpen, DecidedBy: "U1", DecidedAt: at}, "Answered", "Answered by <@U1> at DATE"},
		{core.Gate{Form: form, State: core.GateDenied, Answer: core.ElicitDecline, DecidedBy: "U1", DecidedAt: at}, "Declined", "Declined by <@U1> at DATE — nothing was sent."},
		{core.Gate{Form: form, State: core.GateDenied, Answer: core.ElicitCancel, DecidedBy: "U1", DecidedAt: at}, "Cancelled", "Cancelled by <@U1> at DATE — nothing was sent."},
		{core.Gate{Form: form, State: core.GateExpired}, "Expired", "Expired — no answer came in time, so the question was cancelled."},
		{core.Gate{Form: form, State: core.GateExpired, Note: "Cancelled — restarted."}, "Expired", "Cancelled — restarted."},
		{core.Gate{State: core.GatePending}, "Approval needed", ""},
	}
	for _, tt := range tests {
		if got := Title(tt.g); got != tt.title {
			t.Errorf("Title(%s, %q) = %q, want %q", tt.g.State, tt.g.Answer, got, tt.title)
		}
		if tt.words == "" {
			continue
		}
		if got := Outcome(tt.g, date, func(s string) string { return s }); got != tt.words {
			t.Errorf("Outcome(%s, %q) = %q, want %q", tt.g.State, tt.g.Answer, got, tt.words)
		}
	}
	if got := Who(core.Gate{Form: form, Requester: "U1"}); got != "Asked of <@U1>; only they can answer." {
		t.Errorf("Who(question) = %q", got)
	}
}
