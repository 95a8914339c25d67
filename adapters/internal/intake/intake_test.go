package intake_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/quota"
)

// platform records what the intake asked of the adapter.
type platform struct {
	refused, replied, forgotten []string
	placed                      core.Thread
}

func (p *platform) Refuse(_ context.Context, _ intake.Message, text string) {
	p.refused = append(p.refused, text)
}

func (p *platform) Place(_ context.Context, m intake.Message) core.Thread {
	if p.placed.ID != "" {
		return p.placed
	}
	return m.Inbound.Thread
}

func (p *platform) Reply(_ context.Context, _ core.Thread, text string) error {
	p.replied = append(p.replied, text)
	return nil
}

func (p *platform) Forget(eventID string) { p.forgotten = append(p.forgotten, eventID) }

func TestAccept(t *testing.T) {
	thread := core.Thread{Platform: "test", Workspace: "W", Channel: "C1", ID: "T1"}
	known := core.Thread{Platform: "test", Workspace: "W", Channel: "C1", ID: "T9"}
	msg := func(edit func(*intake.Message)) intake.Message {
		m := intake.Message{
			Inbound:  core.Inbound{Thread: thread, User: "U1", Text: "hello", EventID: "E1", FetchContext: true},
			Mention:  true,
			Channels: []string{"C1", "P1"},
			Lookup:   true,
		}
		if edit != nil {
			edit(&m)
		}
		return m
	}
	tests := []struct {
		name    string
		rules   intake.Limits
		m       intake.Message
		fail    error
		want    intake.Outcome
		refused string // substring of the refusal, "" for none
		replied string // substring of a reply in the thread, "" for none
	}{
		{name: "mention", m: msg(nil), want: intake.Accepted},
		{name: "chatter in an unknown thread", m: msg(func(m *intake.Message) { m.Mention = false }), want: intake.Ignored},
		{name: "reply in a known thread", m: msg(func(m *intake.Message) { m.Mention, m.Inbound.Thread = false, known }), want: intake.Accepted},
		{name: "DM without a mention", m: msg(func(m *intake.Message) { m.Mention, m.Inbound.DM = false, true }), want: intake.Accepted},
		{name: "user not allowed", rules: intake.Limits{AllowUsers: []string{"U2"}}, m: msg(nil), want: intake.Refused, refused: "allowlist"},
		{name: "user not allowed in a DM", rules: intake.Limits{AllowUsers: []string{"U2"}},
			m: msg(func(m *intake.Message) { m.Inbound.DM = true }), want: intake.Refused, refused: "allowlist"},
		{name: "channel not allowed", rules: intake.Limits{AllowChannels: []string{"C7"}}, m: msg(nil), want: intake.Refused, refused: "not enabled in this channel"},
		{name: "thread of an allowed parent", rules: intake.Limits{AllowChannels: []string{"P1"}}, m: msg(nil), want: intake.Accepted},
		{name: "DM outside the channel list", rules: intake.Limits{AllowChannels: []string{"C7"}},
			m: msg(func(m *intake.Message) { m.Inbound.DM = true }), want: intake.Accepted},
		{name: "text over the cap", m: msg(func(m *intake.Message) { m.Inbound.Text = strings.Repeat("é", intake.DefaultMaxText+1) }),
			want: intake.Refused, replied: "too long for me"},
		{name: "journal failure", m: msg(nil), fail: errors.New("database closed"), want: intake.Failed, replied: "send it again"},
		{name: "disk full", m: msg(nil), fail: fmt.Errorf("store: journal: %w", core.ErrDiskFull), want: intake.Failed, replied: "disk is full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			threads := intaketest.NewThreads()
			threads.Add(known)
			hub := intaketest.NewHub(threads)
			if tt.fail != nil {
				hub.FailNext(tt.fail)
			}
			p := &platform{}
			k := &intake.Intake{Hub: hub, Threads: threads, Limits: tt.rules}
			m, got := k.Accept(t.Context(), tt.m, p)
			if got != tt.want {
				t.Fatalf("Accept = %v, want %v", got, tt.want)
			}
			if journaled := hub.Journaled(); (got == intake.Accepted) != (len(journaled) == 1) {
				t.Errorf("journaled %d messages for outcome %v", len(journaled), got)
			}
			if got == intake.Accepted && m.Inbound.FetchContext == m.Known {
				t.Errorf("FetchContext = %v in a thread known = %v: want history only where Neo is new", m.Inbound.FetchContext, m.Known)
			}
			checkOne(t, "refusal", p.refused, tt.refused)
			checkOne(t, "reply", p.replied, tt.replied)
			if (tt.fail != nil) != (len(p.forgotten) == 1) {
				t.Errorf("forgot %v, want the event forgotten only when journaling failed", p.forgotten)
			}
			hub.WaitTurns(t)
		})
	}
}

func checkOne(t *testing.T, what string, got []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("%s %q, want none", what, got)
	case want != "" && (len(got) != 1 || !strings.Contains(got[0], want)):
		t.Errorf("%s %q, want one saying %q", what, got, want)
	}
}

// TestAcceptPlaces: the thread the platform places a message in (a new
// Discord thread) is the one journaled.
func TestAcceptPlaces(t *testing.T) {
	threads := intaketest.NewThreads()
	hub := intaketest.NewHub(threads)
	p := &platform{placed: core.Thread{Platform: "test", Workspace: "W", Channel: "C1", ID: "NEW"}}
	k := &intake.Intake{Hub: hub, Threads: threads}
	in := core.Inbound{Thread: core.Thread{Platform: "test", Workspace: "W", Channel: "C1", ID: "C1"}, User: "U1", Text: "hi", EventID: "E1"}
	if _, got := k.Accept(t.Context(), intake.Message{Inbound: in, Mention: true}, p); got != intake.Accepted {
		t.Fatalf("Accept = %v, want Accepted", got)
	}
	if j := hub.Journaled(); len(j) != 1 || j[0].Thread != p.placed {
		t.Errorf("journaled %+v, want it in the placed thread", j)
	}
	hub.WaitTurns(t)
}

// TestAcceptQuota: a user over their message rate is refused in words
// once per run of refusals, nothing of theirs is journaled, a stop still
// gets through, and other users are not held back.
func TestAcceptQuota(t *testing.T) {
	threads := intaketest.NewThreads()
	hub := intaketest.NewHub(threads)
	p := &platform{}
	clock := coretest.NewClock(time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC))
	k := &intake.Intake{Hub: hub, Threads: threads, Limits: intake.Limits{Quota: quota.New(quota.Limits{PerMinute: 2}, clock)}}
	send := func(user, event, text string) (intake.Message, intake.Outcome) {
		in := core.Inbound{Thread: core.Thread{Platform: "test", Workspace: "W", Channel: "C1", ID: "T1"}, User: user, Text: text, EventID: event}
		return k.Accept(t.Context(), intake.Message{Inbound: in, Mention: true}, p)
	}
	for i := range 2 {
		if _, got := send("U1", fmt.Sprint("E", i), "hello"); got != intake.Accepted {
			t.Fatalf("message %d: Accept = %v, want Accepted", i+1, got)
		}
	}
	m, got := send("U1", "E2", "hello")
	if got != intake.Limited || m.Denial.Limit != quota.LimitRate || m.Denial.RetryAfter != 30*time.Second {
		t.Fatalf("third message: Accept = %v, %+v, want Limited by the rate, retry after 30s", got, m.Denial)
	}
	if _, got := send("U1", "E3", "hello"); got != intake.Limited {
		t.Fatalf("fourth message: Accept = %v, want Limited", got)
	}
	checkOne(t, "refusal", p.refused, "slow down")
	if _, got := send("U1", "E4", "stop"); got != intake.Accepted {
		t.Errorf("a stop over the limit: Accept = %v, want Accepted", got)
	}
	if _, got := send("U2", "E5", "hello"); got != intake.Accepted {
		t.Errorf("another user: Accept = %v, want Accepted", got)
	}
	if j := hub.Journaled(); len(j) != 4 {
		t.Errorf("journaled %d messages, want 4 (two, the stop, the other user's)", len(j))
	}
	hub.WaitTurns(t)
}

// TestAcceptQueueFull: a message the hub set aside (its thread's queue
// full) is Busy: the hub told the author, so the intake neither
// apologises nor lets a redelivery through.
func TestAcceptQueueFull(t *testing.T) {
	threads := intaketest.NewThreads()
	hub := intaketest.NewHub(threads)
	hub.FailNext(fmt.Errorf("conversation: submit: %w", core.ErrQueueFull))
	p := &platform{}
	k := &intake.Intake{Hub: hub, Threads: threads}
	in := core.Inbound{Thread: core.Thread{Platform: "test", Workspace: "W", Channel: "C1", ID: "T1"}, User: "U1", Text: "hi", EventID: "E1"}
	if _, got := k.Accept(t.Context(), intake.Message{Inbound: in, Mention: true}, p); got != intake.Busy {
		t.Errorf("Accept = %v, want Busy", got)
	}
	if len(p.replied) > 0 || len(p.forgotten) > 0 {
		t.Errorf("replied %q, forgot %q, want neither", p.replied, p.forgotten)
	}
}

// stops answers MayStop with a fixed verdict.
type stops struct {
	ok  bool
	err error
}

func (s stops) MayStop(context.Context, core.Thread, string, []string) (bool, error) {
	return s.ok, s.err
}

// adminPlatform is a platform whose administrators may stop any turn.
type adminPlatform struct {
	platform
	admin string
}

func (p *adminPlatform) IsAdmin(_ context.Context, user string) bool { return user == p.admin }

// TestAcceptStop: a stop that may not stop the turn is refused saying it
// waits on an approval; one whose right could not be checked (the shared
// store did not answer) is refused saying that instead, not that it waits
// on an approval; an admin stops it either way, and their stop is marked
// as an admin's.
func TestAcceptStop(t *testing.T) {
	down := errors.New("postgres: gates of T1: connection refused")
	tests := []struct {
		name   string
		stops  stops
		user   string
		want   intake.Outcome
		refuse string
	}{
		{"allowed", stops{ok: true}, "U1", intake.Accepted, ""},
		{"waiting on an approval", stops{}, "U2", intake.Refused, intake.RefuseStop},
		{"could not be checked", stops{err: down}, "U2", intake.Refused, intake.RefuseStopUnchecked},
		{"an admin, unchecked", stops{err: down}, "UADMIN", intake.Accepted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			threads := intaketest.NewThreads()
			p := &adminPlatform{admin: "UADMIN"}
			hub := intaketest.NewHub(threads)
			k := &intake.Intake{Hub: hub, Threads: threads, Stops: tt.stops}
			in := core.Inbound{Thread: core.Thread{Platform: "test", Workspace: "W", Channel: "C1", ID: "T1"}, User: tt.user, Text: "stop", EventID: "E1"}
			if _, got := k.Accept(t.Context(), intake.Message{Inbound: in, Mention: true}, p); got != tt.want {
				t.Fatalf("Accept(stop) = %v, want %v", got, tt.want)
			}
			if tt.refuse == "" && len(p.refused) > 0 || tt.refuse != "" && (len(p.refused) != 1 || p.refused[0] != tt.refuse) {
				t.Errorf("refused %q, want %q", p.refused, tt.refuse)
			}
			// An admin's stop is marked so: the instance running the turn
			// checks it again, and lets it through as well.
			for _, got := range hub.Journaled() {
				if got.AdminStop != (tt.user == "UADMIN") {
					t.Errorf("journaled stop by %s marked admin %v", tt.user, got.AdminStop)
				}
			}
		})
	}
}
