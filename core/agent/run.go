package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// turn is one Run's working state.
type turn struct {
	a     *Agent
	t     *core.Turn
	st    *state
	rep   core.Reporter
	start int // index of the turn's user message (or anchor) in st.items

	tools       []llm.Tool
	toolsTokens int
	recall      core.Recall
	steps       int // model calls made
	adapts      int // model-output adaptations (length, empty answer)
	hint        string
	toolFails   map[string]int
	batches     map[uint64]int
	compactions int
	calls       []callNote        // what this turn did, for an honest partial
	partialEnd  bool              // the turn ended with an honest partial
	answer      core.AnswerStream // the final answer, shown while written; finish closes it
	// shownThinking: "Thinking…" went out when the turn started, so the
	// first model call need not say it again.
	shownThinking bool
	// shown is closed once the first status is posted; it goes out while
	// the turn goes on, and everything else the turn shows waits for it
	// (reporter). Nil when there was no such status.
	shown chan struct{}
	// stepMu sends the steps of concurrent calls one at a time.
	stepMu sync.Mutex
}

// reporter is tr.rep once the first status is out: what the turn shows
// reaches the thread after it, in order.
func (tr *turn) reporter() core.Reporter {
	if tr.shown != nil {
		<-tr.shown
	}
	return tr.rep
}

// Run runs one turn: it answers t.Inbound through t.Reporter, calling tools
// as the model asks, persisting each step before the next model call.
//
// Run is idempotent per Inbound.EventID. A Run whose user message is
// already stored continues from where the transcript ends, dispatching any
// tool calls left without a result under their original IDs; a Run whose
// final answer is already stored (or whose thread has moved on to a later
// message) returns core.ErrAnswered and says nothing, unless t.Unsaid
// tells it the answer never reached the thread: then it says the stored
// answer first. A cancelled ctx returns its error, leaving the transcript
// resumable.
func (a *Agent) Run(ctx context.Context, t core.Turn) error {
	tr, err := a.run(ctx, t)
	if tr != nil {
		tr.reporter() // the first status is out before the turn ends
	}
	if tr != nil && tr.answer != nil {
		// The turn ended between a streamed answer and its storing (a
		// stop, a failed write): take the words back; a resumed turn
		// answers again.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if aerr := tr.answer.Abort(actx); aerr != nil {
			a.log.Warn().Err(aerr).Str("thread", tr.st.thread.Key()).Msg("agent: take back an unfinished streamed answer")
		}
		cancel()
	}
	a.observeTurn(ctx, tr, err)
	return err
}

// run is Run without the observing; tr is nil when the turn never started.
func (a *Agent) run(ctx context.Context, t core.Turn) (tr *turn, err error) {
	if a.opts.Model == nil {
		return nil, ErrNoModel
	}
	if a.opts.Transcript == nil {
		return nil, errors.New("agent: no transcript store configured")
	}
	in := t.Inbound
	ctx = llm.WithIntentID(ctx, intentID(in))
	st, err := a.load(ctx, in.Thread)
	if err != nil {
		return nil, err
	}
	tr = &turn{a: a, t: &t, st: st, rep: t.Reporter, toolFails: map[string]int{}, batches: map[uint64]int{}}
	if tr.rep == nil {
		tr.rep = silent{}
	}
	place, at := st.locate(in.EventID)
	switch place {
	case turnAnswered:
		if it := st.items[at]; t.Unsaid && it.rec.Final {
			// Stored, then cut short before the saying: say it now.
			a.log.Info().Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("agent: saying a stored answer the thread never showed")
			if err := tr.rep.Say(ctx, it.msg.Content); err != nil {
				return tr, fmt.Errorf("agent: say the stored answer in %s: %w", in.Thread, err)
			}
		}
		return tr, core.ErrAnswered
	case turnOpen:
		tr.start = at
		tr.t.Resumed = true
		a.log.Info().Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("agent: resuming turn")
	default:
		// The person sees Neo at work at once: the status goes out while
		// the turn goes on (the message recorded, memory faulted in, the
		// model asked), and anything else the turn shows comes after it
		// (reporter). The record commits with the turn's next durable
		// write (LaterAppender).
		shown, sctx, rep := make(chan struct{}), ctx, tr.rep
		a.shows.Go(func() {
			defer close(shown)
			tr.showStatus(sctx, rep, "Thinking…")
		})
		tr.shown, tr.shownThinking = shown, true
		if err := tr.closeAbandoned(ctx); err != nil {
			return tr, err
		}
		msg := userMessage(in, a.opts.Vision)
		if err := a.appendRecordsLater(ctx, st, record{Msg: &msg, EventID: in.EventID, User: in.User}); err != nil {
			return tr, err
		}
		if s := unseenPictures(in, a.opts.Vision); s != "" {
			if err := tr.reporter().Notice(ctx, s); err != nil {
				a.log.Warn().Err(err).Str("thread", in.Thread.Key()).Msg("agent: tell the user their pictures were not looked at")
			}
		}
		tr.start = len(st.items) - 1
	}
	ctx = core.WithTurn(ctx, tr.t)
	if a.opts.Tools != nil {
		tr.tools = a.opts.Tools.Schemas(ctx)
	}
	tr.toolsTokens = a.tools.estimate(a.opts.Counter, tr.tools)
	tr.recall = a.fault(ctx, in, in.Text)
	return tr, tr.loop(ctx)
}

// loop is the recursive tool-calling loop, unrolled.
func (tr *turn) loop(ctx context.Context) error {
	a := tr.a
	for {
		if calls := tr.st.dangling(); len(calls) > 0 {
			end, err := tr.runCalls(ctx, calls)
			if err != nil {
				return err
			}
			if end != "" {
				return tr.partial(ctx, end)
			}
		}
		if stop, err := tr.budgetSpent(ctx); stop || err != nil {
			return err
		}
		if tr.steps >= a.opts.StepBudget {
			return tr.partial(ctx, fmt.Sprintf("I used my budget of %d steps for one message", a.opts.StepBudget))
		}
		if tr.steps > 0 && tr.steps%a.opts.RefaultEvery == 0 {
			tr.recall = a.fault(ctx, tr.t.Inbound, tr.narration())
		}
		if ok, err := tr.makeRoom(ctx); err != nil {
			return err
		} else if !ok {
			// A request over the window would only be refused: stop
			// honestly instead.
			return tr.partial(ctx, "the next request would still be larger than the model's window after compacting the conversation and setting tool results aside")
		}
		res, err := tr.callModel(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			a.log.Error().Err(err).Str("thread", tr.st.thread.Key()).Msg("agent: model unavailable after the recovery ladder")
			return tr.partial(ctx, "the language model kept failing, so I had to stop")
		}
		tr.steps++
		a.observe(EventStep, "")
		msg := res.Message
		if res.FinishReason == llm.FinishLength || (len(msg.ToolCalls) == 0 && strings.TrimSpace(msg.Content) == "") {
			// Never shown raw and its tool calls never run: adapt.
			tr.adapts++
			if tr.adapts > a.opts.MaxAdaptAttempts {
				return tr.partial(ctx, "my replies kept getting cut off before they were complete")
			}
			tr.hint = "[harness] Your previous reply was cut off or empty and was discarded. Reply again, more briefly; make fewer tool calls at a time."
			continue
		}
		tr.hint = ""
		if len(msg.ToolCalls) == 0 {
			return tr.finish(ctx, msg.Content, false)
		}
		msg.Role = llm.RoleAssistant
		msg.ToolCalls = normalizeCalls(msg.ToolCalls, tr.st.nextSeq(), tr.steps, tr.st.callIDs())
		if err := a.appendRecords(ctx, tr.st, record{Msg: &msg}); err != nil {
			return err
		}
		if res.Usage.PromptTokens > 0 {
			tr.st.usage = res.Usage.PromptTokens + res.Usage.CompletionTokens
			tr.st.usageAt = len(tr.st.items)
		}
	}
}

// callModel calls the main model on a freshly built window, climbing the
// recovery ladder on failure: retry transient errors with jittered backoff
// (honouring Retry-After), then adapt by compacting and calling again; it
// returns the last error once the ladder is exhausted.
func (tr *turn) callModel(ctx context.Context) (*llm.ChatResult, error) {
	a := tr.a
	retries, adapts := 0, 0
	for {
		req := llm.ChatRequest{Messages: tr.window(), Tools: tr.tools}
		if tr.shownThinking {
			tr.shownThinking = false // said already, at the start of the turn
		} else {
			tr.status(ctx, "Thinking…")
		}
		res, err := tr.chat(ctx, req)
		if err == nil && res == nil {
			err = errors.New("agent: model returned no result")
		}
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if llm.IsTransient(err) && retries < a.opts.MaxRetriesPerTool {
			retries++
			d := a.backoff(retries, err)
			a.log.Warn().Err(err).Int("retry", retries).Dur("wait_ms", d).Msg("agent: model call failed; retrying")
			tr.status(ctx, retryStatus(err))
			if err := a.opts.Sleep(ctx, d); err != nil {
				return nil, err
			}
			continue
		}
		// Only a request too large for the window is helped by compacting:
		// an outage or a bad key would archive the thread for nothing.
		if adapts < a.opts.MaxAdaptAttempts && llm.IsContextLength(err) {
			adapts++
			a.log.Warn().Err(err).Int("adapt", adapts).Msg("agent: request over the model's window; compacting and trying again")
			if err := tr.compactNow(ctx); err != nil {
				return nil, err
			}
			continue
		}
		return nil, err
	}
}

// window renders the request's messages with a fresh system block. When a
// compaction archived the turn's own message (an anchor holds its place),
// the message is put back first: every request carries what the user
// asked, and never opens with an assistant tool call, which stricter
// providers refuse.
func (tr *turn) window() []llm.Message {
	a := tr.a
	p := promptInput{in: tr.t.Inbound, summary: tr.st.summary.Text, goal: tr.st.goal, recall: tr.recall, step: tr.steps + 1, spend: tr.offers(core.CoreExecute)}
	p.used = tr.used()
	msgs := tr.st.messages(a.system(p), a.opts.ResultCap, tr.hint)
	if tr.anchored() {
		// Compaction archives a prefix: with the turn's message gone, every
		// live item is this turn's, so the message goes first.
		msgs = slices.Insert(msgs, 1, userMessage(tr.t.Inbound, a.opts.Vision))
	}
	if !a.opts.Vision {
		// Pictures stored while the model saw images (NEO_MODEL_VISION
		// since turned off, or another model) would have the request
		// refused; their text still names them.
		for i := range msgs {
			if len(msgs[i].Images) > 0 {
				msgs[i].Images = nil
			}
		}
	}
	return msgs
}

// used estimates the next request's tokens: the turn's message counts
// when an anchor holds its place (window puts it back).
func (tr *turn) used() int {
	fixed := tr.overhead() + tr.a.opts.Counter(tr.st.summary.Text)
	if tr.anchored() {
		fixed += tr.a.tokens(userMessage(tr.t.Inbound, tr.a.opts.Vision))
	}
	return tr.st.used(fixed)
}

// anchored reports whether compaction archived the turn's own message
// (an anchor holds its place): every live item is then the turn's.
func (tr *turn) anchored() bool {
	return tr.start < len(tr.st.items) && tr.st.items[tr.start].msg.Role == ""
}

// overhead is what every request carries besides the summary and the live
// history: the system block, estimated from its inputs (building it just to
// count it would double the per-step cost), and the tool schemas.
func (tr *turn) overhead() int { return len(knowledge)/3 + 600 + tr.toolsTokens }

// narration is the latest thing Neo said in this turn: the query for a
// refault, and the progress an honest partial quotes. Earlier turns'
// answers are never it: a partial would quote them as this turn's own.
func (tr *turn) narration() string {
	for i := len(tr.st.items) - 1; i >= max(tr.start, 0); i-- {
		if m := tr.st.items[i].msg; m.Role == llm.RoleAssistant && strings.TrimSpace(m.Content) != "" {
			return m.Content
		}
	}
	return tr.t.Inbound.Text
}

// finish stores the final answer, says it, and writes the turn back to
// memory. The answer is stored before it is said, so a resumed turn never
// answers twice.
func (tr *turn) finish(ctx context.Context, text string, partial bool) error {
	a, in := tr.a, tr.t.Inbound
	tr.partialEnd = partial
	// The first status is out before the answer is stored: a crash
	// between storing an answer and saying it loses the saying, so
	// nothing may stand between the two.
	rep := tr.reporter()
	msg := llm.AssistantMessage(text)
	if err := a.appendRecords(ctx, tr.st, record{Msg: &msg, EventID: in.EventID, Final: true, Partial: partial}); err != nil {
		return err
	}
	if live := tr.answer; live != nil {
		tr.answer = nil
		if err := live.Close(ctx, text); err != nil {
			return fmt.Errorf("agent: finish the streamed answer in %s: %w", in.Thread, err)
		}
	} else if err := rep.Say(ctx, text); err != nil {
		return fmt.Errorf("agent: say answer in %s: %w", in.Thread, err)
	}
	// A partial turn teaches nothing: what it did is not a pattern to
	// repeat. Stopped and failed turns never get here.
	if a.opts.Memory != nil && !partial {
		var msgs []llm.Message
		for _, it := range tr.st.items[min(tr.start, len(tr.st.items)):] {
			if it.msg.Role != "" {
				msgs = append(msgs, it.msg)
			}
		}
		a.writeBack(ctx, in, msgs)
	}
	return nil
}

// writeBackTimeout bounds one turn's memory write-back.
const writeBackTimeout = 2 * time.Minute

// maxWriteBacks caps the write-backs running at once; past it a turn's
// write-back is dropped (and logged) rather than holding anything up.
const maxWriteBacks = 8

// writeBack updates memory after the answer is posted. One that waits (on
// the model, or on a commit) runs off the turn, so the thread is free for
// its next message at once (Close waits for it); a quick one only queues
// records to commit with the next write, and runs here, sparing a
// goroutine.
func (a *Agent) writeBack(ctx context.Context, in core.Inbound, msgs []llm.Message) {
	if a.opts.Memory.QuickWriteBack(in) {
		if err := a.opts.Memory.WriteBack(context.WithoutCancel(ctx), in, msgs); err != nil {
			a.log.Warn().Err(err).Str("thread", in.Thread.Key()).Msg("agent: memory write-back failed")
		}
		return
	}
	select {
	case a.writers <- struct{}{}:
	default:
		a.log.Warn().Str("thread", in.Thread.Key()).Msg("agent: too many memory write-backs running; this turn's is skipped")
		a.observe(EventWriteBackSkipped, "")
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeBackTimeout)
	stop := context.AfterFunc(a.quit, cancel)
	a.later.Go(func() {
		defer func() { <-a.writers }()
		defer stop()
		defer cancel()
		if err := a.opts.Memory.WriteBack(ctx, in, msgs); err != nil {
			a.log.Warn().Err(err).Str("thread", in.Thread.Key()).Msg("agent: memory write-back failed")
		}
	})
}

// CloseGrace is how long Close lets running memory write-backs finish
// before it stops them: a shutdown waits at most this long here.
const CloseGrace = 10 * time.Second

// Close waits for the memory write-backs still running, at most CloseGrace;
// then it stops the rest (their memories are not written) and returns.
// Call it once the turns have ended: it also ends the goroutines the
// agent keeps parked for them.
func (a *Agent) Close() error {
	defer a.quitNow()
	done := make(chan struct{})
	go func() {
		a.later.Wait()
		a.shows.Close() // the turns have ended: only parked goroutines are left
		close(done)
	}()
	t := time.NewTimer(CloseGrace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	a.quitNow()
	<-done
	a.log.Warn().Msg("agent: stopped the memory write-backs still running at shutdown")
	return nil
}

// status reports progress; a failing status line never stops a turn.
func (tr *turn) status(ctx context.Context, text string) {
	tr.showStatus(ctx, tr.reporter(), text)
}

// showStatus posts text through rep.
func (tr *turn) showStatus(ctx context.Context, rep core.Reporter, text string) {
	if err := rep.Status(ctx, text); err != nil {
		tr.a.log.Debug().Err(err).Msg("agent: status not shown")
	}
}

// closeAbandoned answers tool calls an earlier, abandoned turn left without
// a result, so the transcript stays valid for the provider. Their outcome
// is unknown and said so.
func (tr *turn) closeAbandoned(ctx context.Context) error {
	calls := tr.st.dangling()
	if len(calls) == 0 {
		return nil
	}
	recs := make([]record, len(calls))
	for i, c := range calls {
		m := llm.ToolResult(c.ID, c.Function.Name, "error: this call was interrupted before its result was recorded; its outcome is unknown.")
		recs[i] = record{Msg: &m}
	}
	return tr.a.appendRecords(ctx, tr.st, recs...)
}

// nextSeq is the sequence number the next entry will likely get, used only
// to mint unique tool call IDs.
func (st *state) nextSeq() uint64 {
	if len(st.items) == 0 {
		return st.summary.UpTo + 1
	}
	return st.items[len(st.items)-1].seq + 1
}

// callIDs returns the IDs of the tool calls in the working history.
func (st *state) callIDs() map[string]bool {
	ids := map[string]bool{}
	for _, it := range st.items {
		for _, c := range it.msg.ToolCalls {
			ids[c.ID] = true
		}
	}
	return ids
}

// normalizeCalls gives every call a non-empty type and an ID unique in the
// thread's working history: a call whose ID is empty (the provider gave
// none), repeated within the message, or already used by an earlier call
// (a provider numbering calls "call_0" at every step) gets a new one. The
// ID keys the call's durable effects (core_execute's idempotency key), so
// two calls must never share one.
func normalizeCalls(calls []llm.ToolCall, seq uint64, step int, used map[string]bool) []llm.ToolCall {
	out := make([]llm.ToolCall, len(calls))
	seen := map[string]bool{}
	for i, c := range calls {
		if c.ID == "" || seen[c.ID] || used[c.ID] {
			c.ID = fmt.Sprintf("call_%d_%d_%d", seq, step, i)
		}
		if c.Type == "" {
			c.Type = "function"
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out
}

// silent is the Reporter of a turn that has none.
type silent struct{}

func (silent) Say(context.Context, string) error    { return nil }
func (silent) Status(context.Context, string) error { return nil }
func (silent) Notice(context.Context, string) error { return nil }

// intentID names a turn for the gateway's metering: the same for every
// model call of the turn, across retries and a resume after a restart, and
// different for every turn.
func intentID(in core.Inbound) string {
	sum := sha256.Sum256([]byte(in.Thread.Key() + "\x00" + in.EventID))
	return "turn-" + hex.EncodeToString(sum[:12])
}

// retryStatus says why a model call is being retried, as the user sees it.
func retryStatus(err error) string {
	if llm.IsUnreachable(err) {
		return "The model can't be reached; retrying…"
	}
	return "The model is busy; retrying…"
}
