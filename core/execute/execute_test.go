package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/tools"
)

// planner is a scripted main model: each Chat returns the next reply.
type planner struct {
	mu      sync.Mutex
	replies []llm.Message
	asked   []llm.ChatRequest
}

func (p *planner) Chat(_ context.Context, req llm.ChatRequest) (*llm.ChatResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req)
	if len(p.replies) == 0 {
		return nil, errors.New("planner: no reply scripted")
	}
	m := p.replies[0]
	p.replies = p.replies[1:]
	return &llm.ChatResult{Message: m}, nil
}

func transferCall(args string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "p1", Type: "function",
		Function: llm.FunctionCall{Name: "wallet__transfer", Arguments: args}}}}
}

// transfer is one call the wallet received.
type transfer struct {
	args map[string]any
	key  any // _meta.idempotency_key
}

// world is an executor over an in-process wallet server, a scripted
// planner, an in-memory ledger and gates a test decides.
type world struct {
	t       *testing.T
	exec    *Executor
	surface *tools.Surface
	model   *planner
	skills  *skill.Set
	ledger  *coretest.Spends
	gates   *core.Gates
	posted  chan core.Gate
	rec     *coretest.Recorder

	mu        sync.Mutex
	transfers []transfer
	// answer is what a spend tool answers (default: sent, tx 0xabc).
	answer func(args map[string]any) mcp.Result
}

const walletSkills = `{"payments": {"spend": true, "places": ["slack:T1/CPAY"],
	"spend_limits": {"USDC": {"per_call": "100", "per_day": "150"}, "wallet/transfer": {"amount": "amount", "currency": "currency"}}}}`

func newWorld(t *testing.T) *world { return newWorldWith(t, walletSkills) }

// newWorldWith is newWorld with other skills, and extra tools on the
// wallet (each records its call and answers w.answer, as transfer does).
func newWorldWith(t *testing.T, skills string, extra ...mcp.ServerTool) *world {
	t.Helper()
	w := &world{t: t, model: &planner{}, ledger: coretest.NewSpends(), posted: make(chan core.Gate, 8), rec: coretest.NewRecorder()}
	w.answer = func(map[string]any) mcp.Result { return mcp.TextResult("sent, tx 0xabc") }
	w.gates = core.NewGates(core.GatesOptions{Store: coretest.NewGateStore()})
	names := []string{"balance", "transfer"}
	for i, x := range extra {
		names = append(names, x.Name)
		extra[i].Handle = w.record
	}
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
		Alias: "wallet", Transport: mcp.TransportInProcess, Version: "1.0.0",
		Tools: names, SideEffects: "read", // transfer is spend by its name
	}}}
	srv := mcp.NewServer("wallet", "1.0.0", append([]mcp.ServerTool{
		mcp.ServerTool{Name: "balance", Description: "Balance.", Handle: func(context.Context, map[string]any) (mcp.Result, error) {
			return mcp.TextResult("100 USDC"), nil
		}},
		mcp.ServerTool{Name: "transfer", Description: "Send money.", InputSchema: map[string]any{
			"type": "object", "required": []string{"amount", "currency", "recipient"},
			"properties": map[string]any{
				"amount":          map[string]any{"type": "number", "exclusiveMinimum": 0},
				"currency":        map[string]any{"type": "string", "enum": []string{"USDC", "EUR"}},
				"recipient":       map[string]any{"type": "string", "minLength": 1},
				"idempotency_key": map[string]any{"type": "string"},
			},
		}, Handle: w.record},
	}, extra...)...)
	specs, err := skill.Parse([]byte(skills))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, m)
	if err != nil {
		t.Fatal(err)
	}
	w.skills = set
	var exec *Executor
	w.surface, err = tools.Spawn(context.Background(), tools.Options{
		Manifest: m, Skills: set, InProcess: map[string]*mcp.Server{"wallet": srv},
		Execute: tools.FromContext(func(ctx context.Context, intent string) (string, error) { return w.exec.Run(ctx, intent) }),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.surface.Close() })
	exec, err = New(Options{Model: w.model, Tools: w.surface, Ledger: w.ledger, Skills: set})
	if err != nil {
		t.Fatal(err)
	}
	w.exec = exec
	return w
}

// record is a spend tool's handler: it keeps the call and answers.
func (w *world) record(ctx context.Context, args map[string]any) (mcp.Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.transfers = append(w.transfers, transfer{args: args, key: mcp.MetaFrom(ctx)["idempotency_key"]})
	return w.answer(args), nil
}

func (w *world) PostGate(_ context.Context, g core.Gate) (string, error) {
	w.posted <- g
	return "ref:" + g.Token, nil
}
func (w *world) ShowGate(context.Context, core.Gate) {}

// turn returns the context of a turn by UALICE in channel, whose
// approvers are UBOB (four eyes: Alice may not approve her own).
func (w *world) turn(channel, event string) context.Context {
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: channel, ID: "100.1"}
	tr := &core.Turn{Inbound: core.Inbound{Thread: th, User: "UALICE", EventID: event, Text: "please pay as we discussed"}, Reporter: w.rec,
		Approver: w.gates.Approver(th, "UALICE", []string{"UBOB"}, w)}
	return core.WithToolCall(core.WithTurn(context.Background(), tr), "call_1")
}

type result struct {
	content string
	isError bool
}

// execute dispatches core_execute as the agent would, in the background.
func (w *world) execute(ctx context.Context, intent string) <-chan result {
	done := make(chan result, 1)
	go func() {
		content, isError, err := w.surface.Dispatch(ctx, coretest.ToolCall(ctx, core.CoreExecute, map[string]any{"intent": intent}))
		if err != nil {
			content, isError = err.Error(), true
		}
		done <- result{content, isError}
	}()
	return done
}

// gate waits for the next posted gate, or for the run to end first.
func (w *world) gate(done <-chan result) (core.Gate, result, bool) {
	select {
	case g := <-w.posted:
		return g, result{}, true
	case r := <-done:
		return core.Gate{}, r, false
	}
}

func (w *world) sent() []transfer {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]transfer(nil), w.transfers...)
}

// TestSpendApprovedRunsOnce: "send 5 USDC to alice" plans one transfer;
// the requester's own click is refused; an approver's click runs it once,
// with its idempotency key in _meta and as its argument; the answer
// carries the tool's result.
func TestSpendApprovedRunsOnce(t *testing.T) {
	w := newWorld(t)
	w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice"}`)}
	done := w.execute(w.turn("CPAY", "E1"), "send 5 USDC to alice")
	g, r, ok := w.gate(done)
	if !ok {
		t.Fatalf("no approval asked; core_execute = %+v", r)
	}
	for _, want := range []string{"wallet/transfer", `"amount": 5`, `"currency": "USDC"`, `"recipient": "alice"`,
		"<@UALICE> wrote: `\"please pay as we discussed\"`\nNeo's reading of it (not their words): `\"send 5 USDC to alice\"`", "That is 5 USDC to `\"alice\"`."} {
		if !strings.Contains(g.Question, want) {
			t.Errorf("question lacks %q:\n%s", want, g.Question)
		}
	}
	if len(w.sent()) != 0 {
		t.Fatal("transferred before approval")
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UALICE", nil, Approve); !errors.Is(err, core.ErrGateForbidden) {
		t.Errorf("the requester's own approval = %v, want ErrGateForbidden", err)
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
		t.Fatal(err)
	}
	r = <-done
	sent := w.sent()
	if r.isError || !strings.Contains(r.content, "completed") || !strings.Contains(r.content, "sent, tx 0xabc") {
		t.Errorf("core_execute = %+v, want the transfer's result", r)
	}
	if len(sent) != 1 {
		t.Fatalf("transfers = %d, want 1", len(sent))
	}
	id := IntentID(core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "CPAY", ID: "100.1"}, EventID: "E1"}, "call_1")
	key := "neobot:" + id + ":1"
	if sent[0].key != key || sent[0].args["idempotency_key"] != key {
		t.Errorf("idempotency key: _meta %v, argument %v; want %s in both", sent[0].key, sent[0].args["idempotency_key"], key)
	}
	spends, _ := w.ledger.SpendsSince(context.Background(), time.Time{})
	if len(spends) != 1 || spends[0].State != core.SpendCompleted || spends[0].DecidedBy != "UBOB" || spends[0].Requester != "UALICE" {
		t.Errorf("ledger = %+v, want one completed spend asked by UALICE, approved by UBOB", spends)
	}
	// The planner saw the spend tool, and nothing else.
	if tools := w.model.asked[0].Tools; len(tools) != 1 || tools[0].Function.Name != "wallet__transfer" {
		t.Errorf("planner tools = %+v, want wallet__transfer only", tools)
	}

	// The same call resumed (the tool result lost to a crash): the plan
	// is found, nothing is asked or sent again.
	r = <-w.execute(w.turn("CPAY", "E1"), "send 5 USDC to alice")
	if len(w.sent()) != 1 || !strings.Contains(r.content, "completed") {
		t.Errorf("resumed: %+v, %d transfers; want the recorded outcome and no second transfer", r, len(w.sent()))
	}
}

func TestSpendDeniedSendsNothing(t *testing.T) {
	w := newWorld(t)
	w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice"}`)}
	done := w.execute(w.turn("CPAY", "E1"), "send 5 USDC to alice")
	g, _, ok := w.gate(done)
	if !ok {
		t.Fatal("no approval asked")
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Deny); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !r.isError || !strings.Contains(r.content, "cancelled") || !strings.Contains(r.content, "<@UBOB> denied it") || len(w.sent()) != 0 {
		t.Errorf("denied: %+v, %d transfers; want cancelled, nothing sent", r, len(w.sent()))
	}
}

// TestSpendClarify: an intent the planner cannot turn into valid calls
// comes back as clarify, and nobody is asked.
func TestSpendClarify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply llm.Message
		want  string
	}{
		{"no tool needed", llm.Message{Role: llm.RoleAssistant, Content: "Which recipient?"}, "(Which recipient?)"},
		{"missing argument", transferCall(`{"amount": 5, "currency": "USDC"}`), "does not fit the tool's arguments"},
		{"wrong type", transferCall(`{"amount": "five", "currency": "USDC", "recipient": "bob"}`), "does not fit the tool's arguments"},
		{"unknown currency", transferCall(`{"amount": 5, "currency": "DOGE", "recipient": "bob"}`), "does not fit the tool's arguments"},
		{"too large to show", transferCall(`{"amount": 5, "currency": "USDC", "recipient": "bob", "memo": "` + strings.Repeat("x", 3000) + `"}`), "too large to show an approver in full"},
		{"not a spend tool", llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "p", Function: llm.FunctionCall{Name: "wallet__balance", Arguments: "{}"}}}}, "not a payment tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.model.replies = []llm.Message{tc.reply}
			done := w.execute(w.turn("CPAY", "E1"), "pay someone")
			_, r, asked := w.gate(done)
			if asked || !r.isError || !strings.Contains(r.content, "clarify") || !strings.Contains(r.content, tc.want) {
				t.Errorf("core_execute = %+v (asked %v); want clarify mentioning %q, nobody asked", r, asked, tc.want)
			}
			if len(w.sent()) != 0 {
				t.Error("something was sent")
			}
		})
	}
}

// TestSpendLimits: over the per-call limit is refused before anyone is
// asked; the day's total counts approved calls.
func TestSpendLimits(t *testing.T) {
	w := newWorld(t)
	w.model.replies = []llm.Message{transferCall(`{"amount": 120, "currency": "USDC", "recipient": "alice"}`)}
	_, r, asked := w.gate(w.execute(w.turn("CPAY", "E1"), "send 120 USDC to alice"))
	if asked || !strings.Contains(r.content, "120 USDC is over the limit of 100 USDC per call") {
		t.Fatalf("over the per-call limit: %+v, asked %v; want refused before asking, naming the limit", r, asked)
	}

	pay := func(event string) result {
		w.model.replies = []llm.Message{transferCall(`{"amount": 80, "currency": "USDC", "recipient": "bob"}`)}
		done := w.execute(w.turn("CPAY", event), "send 80 USDC to bob")
		g, r, ok := w.gate(done)
		if !ok {
			return r
		}
		if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
			t.Fatal(err)
		}
		return <-done
	}
	if r := pay("E2"); r.isError {
		t.Fatalf("first 80 USDC: %+v", r)
	}
	if r := pay("E3"); !strings.Contains(r.content, "would bring today's total (UTC) in USDC in this workspace to 160 USDC, over its limit of 150 USDC per day") {
		t.Errorf("second 80 USDC: %+v, want refused by the day limit", r)
	}
	if n := len(w.sent()); n != 1 {
		t.Errorf("transfers = %d, want 1", n)
	}
}

// TestSpendUnknownAfterCrash: a call recorded "calling" when neobot died
// is never made again: the outcome is unknown, and the thread is told.
func TestSpendUnknownAfterCrash(t *testing.T) {
	w := newWorld(t)
	ctx := w.turn("CPAY", "E1")
	tr, _ := core.TurnFrom(ctx)
	id := IntentID(tr.Inbound, "call_1")
	args, _ := json.Marshal(map[string]any{"amount": 5, "currency": "USDC", "recipient": "alice"})
	plan := []core.Spend{{ID: id + "/1", IntentID: id, Thread: tr.Inbound.Thread, Requester: "UALICE", Server: "wallet", Name: "transfer",
		Function: "wallet__transfer", Args: args, Amount: "5", Currency: "USDC", Day: time.Now().UTC().Format(time.DateOnly), State: core.SpendCalling}}
	if _, err := w.ledger.PlanSpends(context.Background(), id, plan); err != nil {
		t.Fatal(err)
	}
	r := <-w.execute(ctx, "send 5 USDC to alice")
	if !r.isError || !strings.Contains(r.content, "unknown") || len(w.sent()) != 0 {
		t.Errorf("resumed mid-call: %+v, %d transfers; want unknown, nothing sent", r, len(w.sent()))
	}
	if n := w.rec.Notices(); len(n) == 0 || !strings.Contains(n[len(n)-1], "outcome is unknown") {
		t.Errorf("notices = %q, want the thread told the outcome is unknown", n)
	}
	if len(w.model.asked) != 0 {
		t.Error("a recorded plan was planned again")
	}
}

// TestSpendToolUnreachable: the model never sees the transfer tool, and a
// direct call is refused; core_execute still needs a click.
func TestSpendToolUnreachable(t *testing.T) {
	w := newWorld(t)
	ctx := w.turn("CPAY", "E1")
	for _, s := range w.surface.Schemas(ctx) {
		if s.Function.Name == "wallet__transfer" {
			t.Fatal("wallet__transfer is offered to the model")
		}
	}
	content, isError, _ := w.surface.Dispatch(ctx, coretest.ToolCall(ctx, "wallet__transfer", map[string]any{"amount": 5, "currency": "USDC", "recipient": "mallory"}))
	if !isError || !strings.Contains(content, "cannot be called directly") || len(w.sent()) != 0 {
		t.Errorf("direct call = %q, %v; want refused, nothing sent", content, isError)
	}
}

// TestSpendStopped: a person's "stop" while the approval waits denies it:
// nothing is sent, and the ledger says why. A shutdown instead leaves the
// call asked, for the resumed turn.
func TestSpendStopped(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  core.SpendState
	}{{core.ErrStopped, core.SpendCancelled}, {core.ErrShutdown, core.SpendAsked}} {
		t.Run(tc.cause.Error(), func(t *testing.T) {
			w := newWorld(t)
			w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice"}`)}
			ctx, cancel := context.WithCancelCause(w.turn("CPAY", "E1"))
			done := w.execute(ctx, "send 5 USDC to alice")
			if _, _, ok := w.gate(done); !ok {
				t.Fatal("no approval asked")
			}
			cancel(tc.cause)
			<-done
			spends, _ := w.ledger.SpendsSince(context.Background(), time.Time{})
			if len(spends) != 1 || spends[0].State != tc.want || len(w.sent()) != 0 {
				t.Errorf("after %v: ledger %+v, %d transfers; want %s and nothing sent", tc.cause, spends, len(w.sent()), tc.want)
			}
		})
	}
}

// TestSpendLimitsExactly: a call of exactly the per-call limit, and one
// that brings the day's total to exactly the daily limit, are within
// them: asked, approved and made.
func TestSpendLimitsExactly(t *testing.T) {
	w := newWorld(t)
	pay := func(event, amount string) result {
		w.model.replies = []llm.Message{transferCall(`{"amount": ` + amount + `, "currency": "USDC", "recipient": "bob"}`)}
		done := w.execute(w.turn("CPAY", event), "send "+amount+" USDC to bob")
		g, r, ok := w.gate(done)
		if !ok {
			t.Fatalf("%s USDC: %+v, refused before anyone was asked; want it asked", amount, r)
		}
		if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
			t.Fatal(err)
		}
		return <-done
	}
	for _, step := range []struct{ event, amount string }{
		{"E1", "100"}, // the per-call limit exactly; today's total 100
		{"E2", "50"},  // today's total exactly the daily limit of 150
	} {
		if r := pay(step.event, step.amount); r.isError {
			t.Errorf("%s USDC: %+v, want it made", step.amount, r)
		}
	}
	if n := len(w.sent()); n != 2 {
		t.Errorf("transfers = %d, want 2", n)
	}
}

// TestQuestionIntentIsInert: the intent quoted in an approval cannot ping
// a channel or pose as a link, whatever the model wrote.
func TestQuestionIntentIsInert(t *testing.T) {
	w := newWorld(t)
	w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice <!here>"}`)}
	done := w.execute(w.turn("CPAY", "E1"), "send 5 USDC to alice <!channel> <https://evil.example|approved by finance>")
	g, _, ok := w.gate(done)
	if !ok {
		t.Fatal("no approval asked")
	}
	summary := g.Question[strings.LastIndex(g.Question, "```"):]
	if strings.Contains(summary, "<!channel>") || strings.Contains(summary, "<!here>") || strings.Contains(summary, "<https://") {
		t.Errorf("the question carries the model's platform tokens:\n%s", g.Question)
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Deny); err != nil {
		t.Fatal(err)
	}
	<-done
}

// unsent is a wallet whose spend calls never leave neobot: its server's
// process is gone and the pipe refused the write.
type unsent struct{ Toolbox }

func (unsent) CallSpend(_ context.Context, function string, _, _ map[string]any) (tools.SpendResult, error) {
	return tools.SpendResult{}, fmt.Errorf("tools: %s: write to a dead server: %w", function, mcp.ErrNotSent)
}

// TestSpendNotSentDidNothing: an approved spend whose call provably never
// reached the tool's server is recorded as failed with nothing done (it
// does not count toward the day), the model is told nothing was sent,
// not that the outcome is unknown, and it is not called again.
func TestSpendNotSentDidNothing(t *testing.T) {
	w := newWorld(t)
	exec, err := New(Options{Model: w.model, Tools: unsent{w.surface}, Ledger: w.ledger, Skills: w.skills})
	if err != nil {
		t.Fatal(err)
	}
	w.exec = exec
	w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice"}`)}
	done := w.execute(w.turn("CPAY", "E1"), "send 5 USDC to alice")
	g, r, ok := w.gate(done)
	if !ok {
		t.Fatalf("no approval asked; core_execute = %+v", r)
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
		t.Fatal(err)
	}
	r = <-done
	if strings.Contains(r.content, "unknown") || !strings.Contains(r.content, "nothing was sent") {
		t.Errorf("core_execute = %+v, want it told nothing was sent, not an unknown outcome", r)
	}
	spends, _ := w.ledger.SpendsSince(context.Background(), time.Time{})
	if len(spends) != 1 || spends[0].State != core.SpendFailed || !spends[0].NothingDone || spends[0].Counts() {
		t.Errorf("ledger = %+v, want one failed spend with nothing done, not counted", spends)
	}
}

// TestSpendPlaceApprovers: the approvers a channel's stored settings name
// may approve its spends, besides the configured ones; in another channel
// they may not, and the requester listed among them still may not approve
// her own.
func TestSpendPlaceApprovers(t *testing.T) {
	w := newWorld(t)
	if err := w.skills.Govern(map[string]skill.Placed{"slack:T1/CPAY": {Approvers: []string{"UCAROL", "UALICE"}}}); err != nil {
		t.Fatal(err)
	}
	ask := func(channel, event string) (core.Gate, <-chan result) {
		t.Helper()
		w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice"}`)}
		done := w.execute(w.turn(channel, event), "send 5 USDC to alice")
		g, r, ok := w.gate(done)
		if !ok {
			t.Fatalf("no approval asked in %s; core_execute = %+v", channel, r)
		}
		return g, done
	}
	g, done := ask("CPAY", "E1")
	if _, err := w.gates.Decide(context.Background(), g.Token, "UALICE", nil, Approve); !errors.Is(err, core.ErrGateForbidden) {
		t.Errorf("the requester's own approval, listed by the place = %v, want ErrGateForbidden", err)
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UCAROL", nil, Approve); err != nil {
		t.Fatalf("the place's approver = %v, want the approval taken", err)
	}
	if r := <-done; r.isError || len(w.sent()) != 1 {
		t.Fatalf("approved by the place's approver: %+v, %d transfers; want one", r, len(w.sent()))
	}
	g, done = ask("COTHER", "E2")
	if _, err := w.gates.Decide(context.Background(), g.Token, "UCAROL", nil, Approve); !errors.Is(err, core.ErrGateForbidden) {
		t.Errorf("another channel's approver = %v, want ErrGateForbidden", err)
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Deny); err != nil {
		t.Fatal(err)
	}
	<-done
}
