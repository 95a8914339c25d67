package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/mcp"
)

// turnIn is a turn in channel of workspace T1, as in(), reporting to rec.
func turnIn(channel, event string, approver core.Approver, rec core.Reporter) *core.Turn {
	return &core.Turn{Inbound: core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: channel, ID: "100.1"}, User: "UALICE", EventID: event},
		Approver: approver, Reporter: rec}
}

// TestRoute: each name goes where it stands for; a synthetic function
// that is not wired is unknown unless a server's tool has its name.
func TestRoute(t *testing.T) {
	w := newFilesWorld(t, nil)
	for _, tc := range []struct {
		name string
		want routeKind
	}{
		{core.CoreExecute, routeSynthetic},
		{ReadResource, routeSynthetic},
		{MemoryRecall, routeUnknown}, // not wired in this world
		{HistorySearch, routeUnknown},
		{"files__read_note", routeMCP},
		{"files__write_note", routeMCP},
		{"files__pay_invoice", routeEscalate},
		{"files__nothing", routeUnknown},
		{"", routeUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.s.route(tc.name); got.kind != tc.want {
				t.Errorf("route(%q) = %v, want %v", tc.name, got.kind, tc.want)
			}
		})
	}
	if r := w.s.route("files__write_note"); r.b.alias != "files" || r.b.tool != "write_note" || r.b.effect != mcp.EffectWrite {
		t.Errorf("route(files__write_note).b = %+v, want files/write_note, write", r.b)
	}
	wired := spawn(t, Options{Recall: func(context.Context, core.ToolCall, string) (string, error) { return "", nil }})
	if got := wired.route(MemoryRecall); got.kind != routeSynthetic {
		t.Errorf("route(memory_recall) with Recall = %v, want synthetic", got.kind)
	}
}

// TestAuthorize: the skill of the call's place allows, refuses, or asks;
// an asked call without anyone to ask is refused.
func TestAuthorize(t *testing.T) {
	w := newFilesWorld(t, nil)
	yes := func(context.Context, core.GateRequest) (core.GateAnswer, error) {
		return core.GateAnswer{Approved: true, Answer: AllowOnce, By: "UCAROL"}, nil
	}
	no := func(context.Context, core.GateRequest) (core.GateAnswer, error) {
		return core.GateAnswer{Answer: DenyCall, By: "UCAROL"}, nil
	}
	for _, tc := range []struct {
		name, channel, fn string
		approver          core.Approver
		asked             bool
		refusal           string // a part of it; "" for none
	}{
		{"allowed", "CWRITE", "files__write_note", nil, false, ""},
		{"denied by the skill", "CREAD", "files__write_note", nil, false, `skill "reader" denies write calls`},
		{"asked and allowed", "CONCE", "files__write_note", yes, true, ""},
		{"asked and denied", "CONCE", "files__write_note", no, false, "<@UCAROL> denied it"},
		{"asked with nobody to ask", "CONCE", "files__write_note", nil, false, "nobody can approve calls here"},
		{"read in an asking place", "CONCE", "files__read_note", nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := turnIn(tc.channel, "E1", tc.approver, nil)
			call := tr.Call("call_1", tc.fn, nil)
			r := w.s.route(tc.fn)
			asked, refusal, err := w.s.authorize(context.Background(), call, w.s.skills.For(tr.Inbound), r.b)
			if err != nil || asked != tc.asked || (tc.refusal == "") != (refusal == "") || !strings.Contains(refusal, tc.refusal) {
				t.Errorf("authorize(%s in %s) = %v, %q, %v; want %v, %q", tc.fn, tc.channel, asked, refusal, err, tc.asked, tc.refusal)
			}
		})
	}
}

// failingLog is a calls log that cannot record.
type failingLog struct{ core.CallLog }

func (failingLog) BeginCall(context.Context, string, string) (core.Begun, error) {
	return core.Begun{}, errors.New("disk full")
}

// TestOnce: a call that changes something is begun in the calls log; one
// found begun by this run was dispatched twice, one found begun by an
// earlier run was cut off by neobot stopping, and only that one says so.
// How the call ended decides what the log keeps.
func TestOnce(t *testing.T) {
	w := newFilesWorld(t, nil)
	write, read := w.s.route("files__write_note").b, w.s.route("files__read_note").b
	begin := func(s *Surface, event string, b binding, asked bool) (*ticket, string, *coretest.Recorder) {
		rec := coretest.NewRecorder()
		tk, found := s.once(context.Background(), turnIn("CWRITE", event, nil, rec).Call("call_1", "files__"+b.tool, nil), b, asked)
		return tk, found, rec
	}
	s := w.s
	s.calls, s.run = coretest.NewSpends(), "run1"

	if tk, found, _ := begin(s, "E0", read, false); tk != nil || found != "" {
		t.Errorf("once(a read) = %v, %q; want it not recorded", tk, found)
	}
	if tk, found, _ := begin(s, "E0", read, true); tk == nil || found != "" {
		t.Errorf("once(an asked read) = %v, %q; want it recorded", tk, found)
	}
	tk, found, _ := begin(s, "E1", write, false)
	if tk == nil || found != "" {
		t.Fatalf("once(a write) = %v, %q; want it begun", tk, found)
	}
	_, found, rec := begin(s, "E1", write, false)
	if !strings.Contains(found, "was already started for this message: its outcome is unknown. It was not run again") {
		t.Errorf("once(the same write, same run) = %q; want it not run again, with no stop", found)
	}
	if n := rec.Notices(); len(n) != 1 || strings.Contains(n[0], "stopped") {
		t.Errorf("notices = %q, want one, with no stop", n)
	}
	s.run = "run2" // a restart
	_, found, rec = begin(s, "E1", write, true)
	if !strings.Contains(found, "was approved and started earlier, but its result was lost when neobot stopped") {
		t.Errorf("once(the same write, after a restart) = %q; want neobot stopped", found)
	}
	if n := rec.Notices(); len(n) != 1 || !strings.Contains(n[0], "files/write_note was approved and started, but neobot stopped") {
		t.Errorf("notices = %q, want the thread told neobot stopped", n)
	}
	s.calls = failingLog{}
	if _, found, _ := begin(s, "E9", write, false); !strings.Contains(found, "could not record that it is being made (disk full)") {
		t.Errorf("once(unrecordable) = %q; want it not run", found)
	}

	stopped, stop := context.WithCancelCause(context.Background())
	stop(core.ErrStopped)
	shut, shutdown := context.WithCancel(context.Background())
	shutdown()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		err     error
		kept    bool // in the log
		calling bool // begun, not ended
	}{
		{"returned", context.Background(), nil, true, false},
		{"failed at the tool", context.Background(), errors.New("boom"), true, false},
		{"never sent", context.Background(), fmt.Errorf("x: %w (%w)", mcp.ErrUnavailable, mcp.ErrNotSent), false, false},
		{"never sent, cut off", shut, fmt.Errorf("x: %w (%w)", mcp.ErrUnavailable, mcp.ErrNotSent), false, false},
		{"cut off by a shutdown", shut, context.Canceled, true, true},
		{"stopped by the user", stopped, context.Canceled, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := coretest.NewSpends()
			s.calls = calls
			tk, _, _ := begin(s, tc.name, write, false)
			tk.end(tc.ctx, tc.err)
			key := turnIn("CWRITE", tc.name, nil, nil).Call("call_1", "files__write_note", nil).Key()
			got, _ := calls.BeginCall(context.Background(), key, "probe")
			if got.Fresh == tc.kept {
				t.Errorf("after end(%v), the call is kept %v; want %v", tc.err, !got.Fresh, tc.kept)
			}
			if c := calls.Calling(); (len(c) == 1 && !got.Fresh) != tc.calling {
				t.Errorf("after end(%v), calling = %q; want begun and not ended %v", tc.err, c, tc.calling)
			}
		})
	}
}

// TestClassifyFailure: every error a call can end with is named.
func TestClassifyFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want failure
	}{
		{"restarting", fmt.Errorf("mcp: call a/b: %w (%w)", mcp.ErrUnavailable, mcp.ErrNotSent), failNotSent},
		{"died during the call", fmt.Errorf("mcp: call a/b: %w: transport closed", mcp.ErrUnavailable), failDied},
		{"timed out", fmt.Errorf("mcp: call a/b: %w", context.DeadlineExceeded), failTimedOut},
		{"login lost", fmt.Errorf("mcp: %w (%w): %w", mcp.ErrServerDown, mcp.ErrNotSent, &mcp.NotLoggedInError{Alias: "a", Lost: true}), failNotLoggedIn},
		{"never logged in", fmt.Errorf("mcp: %w (%w): %w", mcp.ErrServerDown, mcp.ErrNotSent, &mcp.NotLoggedInError{Alias: "a"}), failNoLogin},
		{"needs more permission", fmt.Errorf("mcp: call a/b: %w", mcp.ErrNeedsPermission), failNeedsPermission},
		{"needs more scope", fmt.Errorf("mcp: call a/b: %w (%w)", &mcp.PermissionError{Alias: "a", Scope: "x y"}, mcp.ErrNotSent), failNeedsPermission},
		{"refused for held scope", fmt.Errorf("mcp: call a/b: %w (%w)", &mcp.PermissionError{Alias: "a", Scope: "x", Held: true}, mcp.ErrNotSent), failScopeHeld},
		{"no login can be made", fmt.Errorf("mcp: call a/b: %w (%w)", &mcp.LoginError{Alias: "a", Err: errors.New("no metadata")}, mcp.ErrNotSent), failCannotLogin},
		{"server down", fmt.Errorf("mcp: call a/b: %w (%w): failed", mcp.ErrServerDown, mcp.ErrNotSent), failServerDown},
		{"unknown tool", fmt.Errorf("mcp: call a/b: %w (%w)", mcp.ErrUnknownTool, mcp.ErrNotSent), failUnknownTool},
		{"anything else", errors.New("boom"), failOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.err); got != tc.want {
				t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestExplanations: the table, row by row: what the model reads for a
// call that changes something and for one that changes nothing, whether
// the ladder may retry each, and what the person is shown.
func TestExplanations(t *testing.T) {
	w := newFilesWorld(t, nil)
	s := w.s
	s.callTimeout = 50 * time.Millisecond
	write, read := s.route("files__write_note").b, s.route("files__read_note").b
	for _, tc := range []struct {
		name                  string
		f                     failure
		changing, harmless    string // parts of the model's sentence
		retryWrite, retryRead bool
		person                string // part of the notice; "" for none
	}{
		{"not sent: server restarting", failNotSent,
			`files__write_note was not run: its server "files" is restarting, and the call never reached it`,
			`files__read_note was not run: its server "files" is restarting, and the call never reached it`, true, true, ""},
		{"sent, server died during the call", failDied,
			`files__write_note was sent, but its server "files" stopped during the call, so its outcome is unknown`,
			`files__read_note did not answer: its server "files" stopped during the call and is restarting`, false, true, ""},
		{"timed out", failTimedOut,
			"files__write_note timed out after 50ms: its outcome is unknown",
			"files__read_note timed out after 50ms; it may still have taken effect", false, true, ""},
		{"not logged in", failNotLoggedIn,
			`neobot's access to "files" was revoked or has expired, and an operator must log in again (neobot mcp login files)`,
			`neobot's access to "files" was revoked or has expired`, false, false, ""},
		{"never logged in", failNoLogin,
			`no operator has logged neobot in to "files" yet; one must run neobot mcp login files`,
			`no operator has logged neobot in to "files" yet`, false, false, ""},
		{"needs more permission", failNeedsPermission,
			`files__write_note was not run: its server "files" needs more permission`,
			`neobot's access is unchanged; an operator must grant the wider permission with neobot mcp login files`, false, false, ""},
		{"refused for held scope", failScopeHeld,
			`files__write_note was not run: its server "files" refused it for want of permission`,
			`so logging in or connecting again would not help`, false, false, ""},
		{"no login can be made", failCannotLogin,
			`files__write_note was not run: neobot cannot make a link to connect an account to "files"`,
			`Trying again will not help until an operator fixes the server or its manifest entry`, false, false, ""},
		{"server down", failServerDown,
			`files__write_note is not available: its server "files" is not running`,
			`files__read_note is not available: its server "files" is not running`, false, false, ""},
		{"unknown tool", failUnknownTool, `unknown tool "files__write_note"`, `unknown tool "files__read_note"`, false, false, ""},
		{"neobot stopped during the call", failStopped,
			"files__write_note was started earlier, but its result was lost when neobot stopped: its outcome is unknown",
			"files__read_note was started earlier, but its result was lost when neobot stopped", false, false,
			"was started, but neobot stopped before its result came back"},
		{"dispatched twice", failRepeated,
			"files__write_note was already started for this message: its outcome is unknown. It was not run again",
			"files__read_note was already started for this message", false, false, "was already started for this message"},
		{"anything else", failOther,
			"files__write_note failed before its result came back, so its outcome is unknown",
			`files__read_note could not reach its server "files"`, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				b     binding
				want  string
				retry bool
			}{{write, tc.changing, tc.retryWrite}, {read, tc.harmless, tc.retryRead}} {
				rec := coretest.NewRecorder()
				call := turnIn("CWRITE", "E1", nil, rec).Call("call_1", "files__"+c.b.tool, nil)
				text, retry := s.tellFailure(context.Background(), call, c.b, false, tc.f, nil)
				if !strings.Contains(text, c.want) || retry != c.retry {
					t.Errorf("%s: %q, retry %v; want %q, retry %v", c.b.tool, text, retry, c.want, c.retry)
				}
				n := rec.Notices()
				if tc.person == "" && len(n) != 0 || tc.person != "" && (len(n) != 1 || !strings.Contains(n[0], tc.person)) {
					t.Errorf("%s: notices %q, want %q", c.b.tool, n, tc.person)
				}
				if strings.Contains(text+strings.Join(n, ""), "neobot stopped") != (tc.f == failStopped) {
					t.Errorf("%s: %q says neobot stopped: only a call begun before a restart may", c.b.tool, text)
				}
			}
		})
	}
	// An asked call is never retried unless it never reached its server,
	// and its approval is asked again when the model calls it again.
	call := turnIn("CONCE", "E1", nil, nil).Call("call_1", "files__read_note", nil)
	if _, retry := s.tellFailure(context.Background(), call, read, true, failDied, nil); retry {
		t.Error("an asked read whose server died during the call is retried")
	}
	if text, _ := s.tellFailure(context.Background(), call, read, true, failStopped, nil); !strings.Contains(text, "they will be asked to approve it again") {
		t.Errorf("an asked call found begun: %q; want the approval asked again", text)
	}
}

// TestExplain: a failed call comes back in-band or, when it may be made
// again, as a RetryableError carrying the sentence; a call whose ctx
// ended is an error of its own.
func TestExplain(t *testing.T) {
	w := newFilesWorld(t, nil)
	write := w.s.route("files__write_note").b
	call := turnIn("CWRITE", "E1", nil, nil).Call("call_1", "files__write_note", nil)
	notSent := fmt.Errorf("mcp: %w (%w)", mcp.ErrUnavailable, mcp.ErrNotSent)
	_, isErr, err := w.s.explain(context.Background(), call, write, false, notSent)
	if re, ok := errors.AsType[*RetryableError](err); !ok || isErr || !strings.Contains(re.InBand(), "never reached it") || !errors.Is(err, mcp.ErrNotSent) {
		t.Errorf("explain(not sent) = %v, %v; want a RetryableError", isErr, err)
	}
	text, isErr, err := w.s.explain(context.Background(), call, write, false, fmt.Errorf("mcp: %w: gone", mcp.ErrUnavailable))
	if err != nil || !isErr || !strings.Contains(text, "outcome is unknown") {
		t.Errorf("explain(died) = %q, %v, %v; want in-band, outcome unknown", text, isErr, err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := w.s.explain(ended, call, write, false, notSent); !errors.Is(err, context.Canceled) {
		t.Errorf("explain(ctx ended) = %v, want context.Canceled", err)
	}
}

// TestDispatchWithoutTurn: a call made outside any turn is refused
// before anything runs: no skill or place is assumed for it.
func TestDispatchWithoutTurn(t *testing.T) {
	w := newFilesWorld(t, nil)
	for _, fn := range []string{"files__write_note", "files__read_note", core.CoreExecute} {
		var none *core.Turn
		got, isErr, err := w.s.Dispatch(context.Background(), none.Call("call_1", fn, map[string]any{"intent": "pay"}))
		if err != nil || !isErr || !strings.Contains(got, "was not run: it was not made in a conversation") {
			t.Errorf("Dispatch(%s) without a turn = %q, %v, %v; want it refused", fn, got, isErr, err)
		}
	}
	if w.writes.Load() != 0 || w.spends.Load() != 0 {
		t.Errorf("%d writes, %d spends without a turn; want none", w.writes.Load(), w.spends.Load())
	}
	if got, isErr, err := w.s.Dispatch(context.Background(), core.ToolCall{}); err != nil || !isErr {
		t.Errorf("Dispatch(zero call) = %q, %v, %v; want it refused", got, isErr, err)
	}
	if _, err := w.s.CallSpend(context.Background(), "files__pay_invoice", nil, nil); err == nil {
		t.Error("CallSpend outside a turn ran; want it refused")
	}
	if got := w.s.SpendTools(context.Background()); got != nil {
		t.Errorf("SpendTools outside a turn = %v, want none", got)
	}
}

// TestRetryableError: the error names the sentence and its cause, and
// unwraps to the cause, which the ladder's logs and errors.Is read.
func TestRetryableError(t *testing.T) {
	err := error(&RetryableError{Text: "x was not run", Err: mcp.ErrNotSent})
	if got := err.Error(); got != "tools: x was not run (the call was not sent)" || !errors.Is(err, mcp.ErrNotSent) {
		t.Errorf("RetryableError = %q, unwraps to ErrNotSent %v", got, errors.Is(err, mcp.ErrNotSent))
	}
}
