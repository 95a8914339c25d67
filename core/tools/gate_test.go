package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
	"github.com/rs/zerolog"
)

// filesWorld is a surface over an in-process file server whose writes are
// counted, with skills bound to channels of workspace T1.
type filesWorld struct {
	s       *Surface
	writes  atomic.Int32
	spends  atomic.Int32
	logs    *bytes.Buffer
	calling string
}

const filesSkills = `{
	"reader": {"tools": ["matrix://tool/mcp/files/read_*@1.0.0", "matrix://tool/mcp/files/write_note@1.0.0"],
		"side_effects": {"read": "allow", "write": "deny"}, "places": ["slack:T1/CREAD"]},
	"writer": {"side_effects": {"read": "allow", "write": "allow"}, "spend": true, "places": ["slack:T1/CWRITE"]},
	"careful": {"side_effects": {"read": "allow", "write": "ask"}, "allow_for_thread": true, "places": ["slack:T1/CASK"]},
	"oneoff": {"side_effects": {"read": "allow", "write": "ask"}, "places": ["slack:T1/CONCE"]}
}`

func newFilesWorld(t *testing.T, manifestExtra func(*mcp.Manifest)) *filesWorld {
	t.Helper()
	w := &filesWorld{logs: &bytes.Buffer{}}
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
		Alias: "files", Transport: mcp.TransportInProcess, Version: "1.0.0",
		Tools: []string{"read_note", "write_note", "fetch_url", "pay_invoice"}, SideEffects: "read",
		ToolSideEffects: map[string]string{"write_note": "write", "pay_invoice": "spend"},
	}}}
	m.Servers[0].ToolSideEffects["fetch_url"] = "external"
	if manifestExtra != nil {
		manifestExtra(m)
	}
	specs, err := skill.Parse([]byte(filesSkills))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, m)
	if err != nil {
		t.Fatal(err)
	}
	ok := func(s string) mcp.ToolHandler {
		return func(context.Context, map[string]any) (mcp.Result, error) { return mcp.TextResult(s), nil }
	}
	srv := mcp.NewServer("files", "1.0.0",
		mcp.ServerTool{Name: "read_note", Description: "Read a note.", Handle: ok("the note")},
		mcp.ServerTool{Name: "write_note", Description: "Write a note.", Handle: func(context.Context, map[string]any) (mcp.Result, error) {
			w.writes.Add(1)
			return mcp.TextResult("written"), nil
		}},
		mcp.ServerTool{Name: "fetch_url", Description: "Fetch a URL.", Handle: ok("<html>")},
		mcp.ServerTool{Name: "pay_invoice", Description: "Pay.", Handle: ok("paid")},
	)
	w.s = spawn(t, Options{
		Manifest: m, Skills: set, InProcess: map[string]*mcp.Server{"files": srv},
		Logger: zerolog.New(w.logs),
		Delegate: func(context.Context, core.ToolCall, string) (string, error) {
			w.spends.Add(1)
			return "done", nil
		},
	})
	return w
}

// in returns a context of a turn in channel of workspace T1, whose
// approver answers with answer (and records each question).
func in(channel string, approver core.Approver) context.Context {
	t := &core.Turn{Inbound: core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: channel, ID: "100.1"}, User: "UALICE"}, Approver: approver}
	return core.WithToolCall(core.WithTurn(context.Background(), t), "call-1")
}

func fnNames(s *Surface, ctx context.Context) []string {
	var out []string
	for _, t := range s.Schemas(ctx) {
		out = append(out, t.Function.Name)
	}
	return out
}

func TestGateSchemasPerSkill(t *testing.T) {
	w := newFilesWorld(t, nil)
	tests := []struct {
		channel string
		want    []string
	}{
		{"CREAD", []string{"files__read_note"}},
		{"CWRITE", []string{"files__read_note", "files__write_note", core.CoreExecute}},
		{"CASK", []string{"files__read_note", "files__write_note"}}, // asked tools are shown; asking happens per call
		{"COTHER", []string{"files__fetch_url", "files__read_note", "files__write_note", core.CoreExecute}},
	}
	for _, tt := range tests {
		if got := fnNames(w.s, in(tt.channel, nil)); !slices.Equal(got, tt.want) {
			t.Errorf("schemas in %s = %v, want %v", tt.channel, got, tt.want)
		}
	}
}

func TestGateRefusesBeforeAnySideEffect(t *testing.T) {
	w := newFilesWorld(t, nil)
	tests := []struct {
		name, channel, fn string
		want              string
	}{
		{"denied class", "CREAD", "files__write_note", `skill "reader" denies write calls (side_effects.write)`},
		{"not on the allowlist", "CREAD", "files__fetch_url", `skill "reader" does not list matrix://tool/mcp/files/fetch_url@1.0.0`},
		{"core_execute without spend", "CREAD", core.CoreExecute, `skill "reader" may not spend`},
		{"escalate tool without spend", "CASK", "files__pay_invoice", `skill "careful" may not spend`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, isError, err := dispatch(in(tt.channel, nil), w.s, tt.fn, map[string]any{"intent": "pay 5"})
			if err != nil || !isError || !strings.Contains(content, tt.want) || !strings.Contains(content, "refused before it ran") {
				t.Errorf("Dispatch(%s in %s) = %q, %v, %v; want an in-band refusal naming %q", tt.fn, tt.channel, content, isError, err, tt.want)
			}
		})
	}
	if w.writes.Load() != 0 || w.spends.Load() != 0 {
		t.Errorf("a refused call ran: %d writes, %d spends", w.writes.Load(), w.spends.Load())
	}
	// The same call in a writing channel runs.
	if content, isError, err := dispatch(in("CWRITE", nil), w.s, "files__write_note", nil); err != nil || isError || content != "written" {
		t.Errorf("write in the writing channel = %q, %v, %v", content, isError, err)
	}
	if out, _, _ := dispatch(in("CWRITE", nil), w.s, core.CoreExecute, map[string]any{"intent": "pay 5"}); out != "done" || w.spends.Load() != 1 {
		t.Errorf("core_execute in a spending skill = %q (%d spends)", out, w.spends.Load())
	}
	// Logged once per thread, skill and tool, however often refused.
	_, _, _ = dispatch(in("CREAD", nil), w.s, "files__write_note", nil)
	if n := strings.Count(w.logs.String(), "files/write_note@1.0.0"); n != 1 {
		t.Errorf("refusal of write_note logged %d times, want once:\n%s", n, w.logs)
	}
	if !strings.Contains(w.logs.String(), `"skill":"reader"`) || !strings.Contains(w.logs.String(), `"thread":"slack/T1/CREAD/100.1"`) {
		t.Errorf("refusal log lacks skill or thread:\n%s", w.logs)
	}
}

func TestGateManifestBound(t *testing.T) {
	w := newFilesWorld(t, func(m *mcp.Manifest) { m.AllowedSideEffects = []string{"none", "read"} })
	// The writing skill allows writes, the manifest does not.
	if got := fnNames(w.s, in("CWRITE", nil)); !slices.Equal(got, []string{"files__read_note"}) {
		t.Errorf("schemas = %v, want only the read tool: writes, external calls and spends are outside the manifest's bound", got)
	}
	content, isError, _ := dispatch(in("CWRITE", nil), w.s, "files__write_note", nil)
	if !isError || !strings.Contains(content, "allowed_side_effects does not include write") || w.writes.Load() != 0 {
		t.Errorf("write outside the manifest's bound = %q, %v (%d writes)", content, isError, w.writes.Load())
	}
	if content, _, _ := dispatch(in("CWRITE", nil), w.s, core.CoreExecute, map[string]any{"intent": "x"}); !strings.Contains(content, "does not include spend") || w.spends.Load() != 0 {
		t.Errorf("core_execute outside the bound = %q", content)
	}
}

// approver answers every gate with answer, recording the requests.
type approver struct {
	answer core.GateAnswer
	err    error
	asked  []core.GateRequest
}

func (a *approver) ask(_ context.Context, req core.GateRequest) (core.GateAnswer, error) {
	a.asked = append(a.asked, req)
	return a.answer, a.err
}

func TestGateAsks(t *testing.T) {
	w := newFilesWorld(t, nil)
	args := map[string]any{"path": "plan.md", "text": "ship it"}

	deny := &approver{answer: core.GateAnswer{Answer: DenyCall, By: "UCAROL"}}
	content, isError, err := dispatch(in("CASK", deny.ask), w.s, "files__write_note", args)
	if err != nil || !isError || !strings.Contains(content, "<@UCAROL> denied it") || w.writes.Load() != 0 {
		t.Fatalf("denied write = %q, %v, %v (%d writes)", content, isError, err, w.writes.Load())
	}
	req := deny.asked[0]
	if !slices.Equal(req.Options, []core.Option{{Label: AllowOnce, Approves: true}, {Label: AllowForThread, Approves: true}, {Label: DenyCall}}) || req.CallID != "call-1" ||
		!strings.Contains(req.Question, "files/write_note (write)") || !strings.Contains(req.Question, `"text": "ship it"`) {
		t.Errorf("approval request = %+v, want the tool, its class, its arguments and the three options", req)
	}

	once := &approver{answer: core.GateAnswer{Approved: true, Answer: AllowOnce, By: "UCAROL"}}
	for i := 1; i <= 2; i++ {
		if content, isError, err := dispatch(in("CASK", once.ask), w.s, "files__write_note", args); err != nil || isError || content != "written" {
			t.Fatalf("allowed write = %q, %v, %v", content, isError, err)
		}
	}
	if len(once.asked) != 2 || w.writes.Load() != 2 {
		t.Errorf("Allow once: asked %d times for 2 calls, %d writes; want each call asked and run once", len(once.asked), w.writes.Load())
	}

	thread := &approver{answer: core.GateAnswer{Approved: true, Answer: AllowForThread, By: "UCAROL"}}
	for range 3 {
		if _, isError, _ := dispatch(in("CASK", thread.ask), w.s, "files__write_note", args); isError {
			t.Fatal("write allowed for the thread was refused")
		}
	}
	if len(thread.asked) != 1 || w.writes.Load() != 5 {
		t.Errorf("Allow for this thread: asked %d times, %d writes; want one question for three calls", len(thread.asked), w.writes.Load())
	}

	oneoff := &approver{answer: core.GateAnswer{Approved: true, Answer: AllowOnce, By: "UCAROL"}}
	_, _, _ = dispatch(in("CONCE", oneoff.ask), w.s, "files__write_note", args)
	if !slices.Equal(oneoff.asked[0].Options, []core.Option{{Label: AllowOnce, Approves: true}, {Label: DenyCall}}) {
		t.Errorf("a skill without allow_for_thread offers %v", oneoff.asked[0].Options)
	}

	// Nobody to ask: refused, not run.
	if content, isError, _ := dispatch(in("CASK", nil), w.s, "files__write_note", args); !isError || !strings.Contains(content, "nobody can approve") {
		t.Errorf("asked call without an approver = %q, %v", content, isError)
	}
	// The turn ends while waiting (shutdown, stop): an error, so the
	// resumed turn asks again; nothing ran.
	ctx, cancel := context.WithCancel(in("CASK", nil))
	waiting := func(ctx context.Context, _ core.GateRequest) (core.GateAnswer, error) {
		cancel()
		<-ctx.Done()
		return core.GateAnswer{}, ctx.Err()
	}
	ctx = core.WithTurn(ctx, &core.Turn{Inbound: core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "CASK", ID: "200.1"}}, Approver: waiting})
	before := w.writes.Load()
	if _, _, err := dispatch(ctx, w.s, "files__write_note", args); !errors.Is(err, context.Canceled) || w.writes.Load() != before {
		t.Errorf("cancelled while asking: err = %v, writes %d -> %d; want context.Canceled and no write", err, before, w.writes.Load())
	}
}

func TestUndeclaredToolsClassified(t *testing.T) {
	m := &mcp.Manifest{DID: "did:key:z", EscalatePatterns: []string{"balance"}, Servers: []mcp.ServerSpec{
		{Alias: "chain", Transport: mcp.TransportInProcess, Version: "0.3.0", Tools: chainToolNames},
	}}
	s := spawn(t, Options{Manifest: m})
	tests := map[string]mcp.Effect{
		"chain__get_balance":     mcp.EffectSpend, // the manifest's pattern, added to the defaults
		"chain__transfer_tokens": mcp.EffectSpend, // a default pattern still applies
		"chain__broken":          mcp.EffectExternal,
	}
	for fn, want := range tests {
		if b := s.byFunc[fn]; b.effect != want || b.declared {
			t.Errorf("%s: effect %s (declared %v), want %s undeclared", fn, b.effect, b.declared, want)
		}
	}
}

// TestEscalateNamesWin: a server-wide class does not make a tool named
// like a spend an ordinary tool; only the tool's own entry can, and that
// override is a warning for check.
func TestEscalateNamesWin(t *testing.T) {
	for _, tc := range []struct {
		name      string
		own       map[string]string
		want      mcp.Effect
		wantWarns int
	}{
		{"server-wide write", nil, mcp.EffectSpend, 0},
		{"the tool's own entry", map[string]string{"transfer_tokens": "write"}, mcp.EffectWrite, 1},
		{"the tool's own entry says spend", map[string]string{"transfer_tokens": "spend"}, mcp.EffectSpend, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := chainManifest()
			m.Servers[0].SideEffects, m.Servers[0].ToolSideEffects = "write", tc.own
			s := spawn(t, Options{Manifest: m})
			if b := s.byFunc["chain__transfer_tokens"]; b.effect != tc.want || (b.class == Escalate) != (tc.want == mcp.EffectSpend) {
				t.Errorf("transfer_tokens: %s (%s), want %s", b.effect, b.class, tc.want)
			}
			var warns []string
			for _, w := range s.Warnings() {
				if strings.Contains(w, "chain/transfer_tokens matches an escalate pattern") {
					warns = append(warns, w)
				}
			}
			if len(warns) != tc.wantWarns {
				t.Errorf("warnings about the override = %q, want %d", warns, tc.wantWarns)
			}
		})
	}
}

func BenchmarkGate(b *testing.B) {
	m := &mcp.Manifest{DID: "did:key:z", Servers: []mcp.ServerSpec{{Alias: "files", Transport: mcp.TransportInProcess,
		Version: "1.0.0", Tools: []string{"read_note"}, SideEffects: "read"}}}
	specs, _ := skill.Parse([]byte(`{"r": {"tools": ["matrix://tool/mcp/files/read_*@1.0.0"], "side_effects": {"read": "allow"}, "places": ["slack:T1/CREAD"]}}`))
	set, err := skill.Compile(specs, m)
	if err != nil {
		b.Fatal(err)
	}
	s := &Surface{manifest: m, skills: set, byFunc: map[string]binding{}}
	bd := binding{alias: "files", tool: "read_note", uri: mcp.ToolURI{Alias: "files", Tool: "read_note", Version: "1.0.0"}, effect: mcp.EffectRead, declared: true}
	ctx := in("CREAD", nil)
	b.ReportAllocs()
	for b.Loop() {
		sk, _ := s.skillOf(ctx)
		if v := s.verdict(sk, bd); v.Rule != skill.Allow {
			b.Fatal(v)
		}
	}
}

// TestDescribeSkills prints each skill's surface as `neobot check` shows
// it, against testdata/skills.golden (rewrite with -update).
func TestDescribeSkills(t *testing.T) {
	w := newFilesWorld(t, nil)
	var b strings.Builder
	if err := w.s.DescribeSkills(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "skills.golden", b.String())
}

// gateUI posts approvals on a channel, for a test to click.
type gateUI struct{ posted chan core.Gate }

func (u gateUI) PostGate(_ context.Context, g core.Gate) (string, error) {
	u.posted <- g
	return "ref:" + g.Token, nil
}
func (gateUI) ShowGate(context.Context, core.Gate) {}

// askedCalls dispatches files__write_note in turns of thread CASK whose
// approvals Carol answers "Allow once" as they are posted.
type askedCalls struct {
	t     *testing.T
	w     *filesWorld
	gates *core.Gates
	ui    gateUI
	rec   *coretest.Recorder
}

func newAskedCalls(t *testing.T, w *filesWorld) *askedCalls {
	return &askedCalls{t: t, w: w, gates: core.NewGates(core.GatesOptions{Store: coretest.NewGateStore()}),
		ui: gateUI{posted: make(chan core.Gate, 4)}, rec: coretest.NewRecorder()}
}

// run dispatches the call as the turn of message event (call ID call_0)
// and returns what the model reads, and whether a person was asked.
func (a *askedCalls) run(event string) (string, bool) {
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "CASK", ID: "100.1"}
	tr := &core.Turn{Inbound: core.Inbound{Thread: th, User: "UALICE", EventID: event}, Reporter: a.rec,
		Approver: a.gates.Approver(th, "UALICE", []string{"UCAROL"}, a.ui)}
	ctx := core.WithToolCall(core.WithTurn(context.Background(), tr), "call_0")
	done := make(chan string, 1)
	go func() {
		content, _, _ := dispatch(ctx, a.w.s, "files__write_note", map[string]any{"path": "plan.md", "text": "v1"})
		done <- content
	}()
	select {
	case g := <-a.ui.posted:
		if _, err := a.gates.Decide(context.Background(), g.Token, "UCAROL", nil, AllowOnce); err != nil {
			a.t.Fatal(err)
		}
		return <-done, true
	case content := <-done:
		return content, false
	}
}

// TestAskedCallIsNotReused: "Allow once" answers one call. Without the
// calls log, the same call dispatched again for the same message (a turn
// resumed after a restart) finds the decision; a call ID the model reuses
// in a later turn is asked again.
func TestAskedCallIsNotReused(t *testing.T) {
	a := newAskedCalls(t, newFilesWorld(t, nil))
	if out, asked := a.run("E1"); !asked || out != "written" {
		t.Fatalf("first call: %q, asked %v", out, asked)
	}
	if out, asked := a.run("E1"); asked || out != "written" {
		t.Errorf("the same call resumed: %q, asked %v; want the recorded decision, no new question", out, asked)
	}
	if out, asked := a.run("E2"); !asked || out != "written" {
		t.Errorf("call_0 again in a later turn: %q, asked %v; want a new question", out, asked)
	}
}

// TestAskedCallRunsOnce: with the calls log, "Allow once" is once even
// across a crash. The same call dispatched again for the same message by
// a later run of neobot (a turn resumed after neobot was killed while the
// tool ran) is not run again: its outcome is unknown, the model and the
// thread are told neobot stopped; dispatched again by the same run, it is
// not run either, and nobody hears of a stop that did not happen. The
// user asking again in a later message is asked again.
func TestAskedCallRunsOnce(t *testing.T) {
	calls := coretest.NewSpends()
	w := newFilesWorld(t, nil)
	w.s.calls = calls
	a := newAskedCalls(t, w)
	if out, asked := a.run("E1"); !asked || out != "written" || w.writes.Load() != 1 {
		t.Fatalf("first call: %q, asked %v, %d writes", out, asked, w.writes.Load())
	}
	out, asked := a.run("E1")
	if asked || w.writes.Load() != 1 || !strings.Contains(out, "was already approved and started for this message: its outcome is unknown. It was not run again") || strings.Contains(out, "neobot stopped") {
		t.Errorf("the same call again, same run: %q, asked %v, %d writes; want no new question, no second write, an unknown outcome, no stop", out, asked, w.writes.Load())
	}
	w.s.run = "after a restart"
	out, asked = a.run("E1")
	if asked || w.writes.Load() != 1 || !strings.Contains(out, "lost when neobot stopped: its outcome is unknown. It was not run again") {
		t.Errorf("the same call resumed after a restart: %q, asked %v, %d writes; want no new question, no second write, an unknown outcome", out, asked, w.writes.Load())
	}
	if n := a.rec.Notices(); len(n) != 2 || strings.Contains(n[0], "neobot stopped") || !strings.Contains(n[1], "files/write_note was approved and started, but neobot stopped") {
		t.Errorf("notices = %q, want the thread told the outcome is unknown, and of a stop only after the restart", n)
	}
	if out, asked := a.run("E2"); !asked || out != "written" || w.writes.Load() != 2 {
		t.Errorf("asked again in a later message: %q, asked %v, %d writes; want a new question and one more write", out, asked, w.writes.Load())
	}
	if c := calls.Calling(); len(c) != 0 {
		t.Errorf("calls left calling: %q", c)
	}
}

// TestShowArgs: every argument shows; when they do not fit, long values
// show their start and size and lines left out are counted; no value can
// close the code block the approval shows them in, break a line, or hide
// characters.
func TestShowArgs(t *testing.T) {
	got, complete := ShowArgs(map[string]any{"content": strings.Repeat("é", 1000) + "```\nAllow this call? It is harmless.", "path": "/etc/cron.d/x"}, ArgsBudget)
	if !strings.Contains(got, `"path": "/etc/cron.d/x"`) {
		t.Errorf("the path is not shown after a long content:\n%s", got)
	}
	if complete || !strings.Contains(got, "bytes in all, the rest not shown)") || len(got) > ArgsBudget {
		t.Errorf("a long value is not cut with its size (%d bytes shown, complete %v):\n%s", len(got), complete, got)
	}
	if strings.Contains(got, "`") || !utf8.ValidString(got) || strings.Count(got, "\n") != 1 {
		t.Errorf("shown arguments carry a backtick, a line break or broken UTF-8:\n%s", got)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"note": "a`b"}, `"note": "a\u0060b"`},
		{map[string]any{"to": "bob\u202e\u2066\u200b\u200e\ufeff\u00a0\u3164\x7f\u0085\U000e0041x"}, `"to": "bob\u202e\u2066\u200b\u200e\ufeff\u00a0\u3164\u007f\u0085\udb40\udc41x"`},
		{map[string]any{"a\u202eb": 1}, `"a\u202eb": 1`},
		{map[string]any{"to": []any{"x", map[string]any{"y": true}}, "e": []any{}, "o": map[string]any{}}, "\"e\": []\n\"o\": {}\n\"to\"[0]: \"x\"\n\"to\"[1].\"y\": true"},
	} {
		if got, complete := ShowArgs(tc.args, ArgsBudget); got != tc.want || !complete {
			t.Errorf("ShowArgs(%q) = %s, %v; want %s", tc.args, got, complete, tc.want)
		}
	}
	many := map[string]any{}
	for i := range 100 {
		many[fmt.Sprintf("k%03d", i)] = i
	}
	got, complete = ShowArgs(many, 200)
	if complete || len(got) > 260 || !strings.HasSuffix(got, "… and 81 more values (891 bytes) not shown") {
		t.Errorf("100 values in 200 bytes = %v:\n%s", complete, got)
	}
}

// TestCallQuestion: the approval shows every argument in a block, and a
// call without any says so instead of showing an empty block.
func TestCallQuestion(t *testing.T) {
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{nil, "Neo wants to run notes/book (write), with no arguments.\nAllow this call?"},
		{map[string]any{}, "Neo wants to run notes/book (write), with no arguments.\nAllow this call?"},
		{map[string]any{"guests": 2}, "Neo wants to run notes/book (write):\n```\n\"guests\": 2\n```\nAllow this call?"},
	} {
		if got := callQuestion("notes", "book", "write", tc.args); got != tc.want {
			t.Errorf("callQuestion(%v) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestChangingCallRunsOnce: a write the skill allows outright runs at
// most once too: dispatched again for the same message, or found begun by
// a resumed turn (neobot was killed while it ran), it is not made again.
// (A call cut off by a shutdown stays begun: TestSlackQuestionAcrossRestart.)
func TestChangingCallRunsOnce(t *testing.T) {
	calls := coretest.NewSpends()
	w := newFilesWorld(t, nil)
	w.s.calls = calls
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "CWRITE", ID: "100.1"}
	dispatch := func(ctx context.Context, event string) string {
		tr := &core.Turn{Inbound: core.Inbound{Thread: th, User: "UALICE", EventID: event}, Reporter: coretest.NewRecorder()}
		ctx = core.WithToolCall(core.WithTurn(ctx, tr), "call_0")
		content, _, _ := dispatch(ctx, w.s, "files__write_note", map[string]any{"path": "plan.md", "text": "v1"})
		return content
	}
	if out := dispatch(context.Background(), "E1"); out != "written" || w.writes.Load() != 1 {
		t.Fatalf("first call: %q, %d writes", out, w.writes.Load())
	}
	if out := dispatch(context.Background(), "E1"); w.writes.Load() != 1 || !strings.Contains(out, "its outcome is unknown. It was not run again") {
		t.Errorf("the same call again (a resumed turn): %q, %d writes; want no second write, an unknown outcome", out, w.writes.Load())
	}

	// Killed while it ran: begun by an earlier run, never ended.
	key := core.Thread.Key(th) + "\x1fE2\x1fcall_0"
	if got, err := calls.BeginCall(context.Background(), key, "before the crash"); err != nil || !got.Fresh {
		t.Fatalf("BeginCall = %+v, %v", got, err)
	}
	if out := dispatch(context.Background(), "E2"); w.writes.Load() != 1 || !strings.Contains(out, "lost when neobot stopped: its outcome is unknown") {
		t.Errorf("a call begun before a crash: %q, %d writes; want it not made", out, w.writes.Load())
	}

}
