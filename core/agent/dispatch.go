package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// outcome is one tool call's result as the model will see it.
type outcome struct {
	content string
	failed  bool
	skipped bool // over the per-step cap: not run, not a tool failure
	// files are the pictures and files the call returned, for the thread
	// and a model that sees images.
	files []core.ToolFile
}

// callNote records a call for the honest partial.
type callNote struct {
	name string
	ok   bool
	// out is a spend's outcome in a line: what moved money is never
	// left out of what the turn says it did.
	out string
}

// runCalls dispatches one assistant turn's calls concurrently and persists
// exactly one tool message per call, in the calls' order. It returns a
// non-empty reason when the turn must end with an honest partial: a stall,
// or a tool whose adapt attempts are exhausted.
func (tr *turn) runCalls(ctx context.Context, calls []llm.ToolCall) (end string, err error) {
	a := tr.a
	if _, ok := tr.stepper(); !ok {
		tr.status(ctx, "Using "+callNames(calls)+"…")
	}
	results := tr.runAll(ctx, calls)
	if err := ctx.Err(); err != nil {
		return "", err
	}

	// Adapt: a failure goes back to the model as signal, until a tool has
	// failed more than MaxAdaptAttempts times this turn.
	escalate := tr.offers(core.CoreExecute)
	for i, c := range calls {
		if results[i].skipped {
			continue
		}
		note := callNote{name: c.Function.Name, ok: !results[i].failed}
		if note.name == core.CoreExecute {
			note.out = stepOutput(results[i].content)
		}
		tr.calls = append(tr.calls, note)
		if !results[i].failed {
			continue
		}
		name := c.Function.Name
		tr.toolFails[name]++
		switch n := tr.toolFails[name]; {
		case n > a.opts.MaxAdaptAttempts:
			end = fmt.Sprintf("%s kept failing (%d times)", name, n)
		case n == a.opts.MaxAdaptAttempts && escalate && name != core.CoreExecute:
			results[i].content += "\n\nThis tool has now failed repeatedly. If the task moves funds or needs rigorous execution, delegate it with core_execute; otherwise stop and tell the user plainly what failed."
		}
	}

	pictures := tr.deliver(ctx, results)
	recs := make([]record, len(calls), len(calls)+1)
	for i, c := range calls {
		m := llm.ToolResult(c.ID, c.Function.Name, keepResult(results[i].content, a.opts.StoredResultCap))
		recs[i] = record{Msg: &m}
	}
	if pictures != nil {
		recs = append(recs, record{Msg: pictures, ToolPictures: true})
	}
	if err := a.appendRecords(ctx, tr.st, recs...); err != nil {
		return "", err
	}
	if end != "" {
		return end, nil
	}

	// Stall: the same batch with the same results, again and again.
	sig := batchSignature(calls, results)
	tr.batches[sig]++
	if tr.batches[sig] >= a.opts.NoProgressStall {
		a.observe(EventStall, "")
		return fmt.Sprintf("I was repeating the same steps (%s) without making progress", callNames(calls)), nil
	}
	return "", nil
}

// runAll runs one reply's calls: at most MaxCallsPerStep of them (the rest
// are answered "not run"), at most MaxParallelCalls at once, and every
// core_execute call one at a time, in the order the model gave them, so
// two spends never race each other.
func (tr *turn) runAll(ctx context.Context, calls []llm.ToolCall) []outcome {
	a := tr.a
	results := make([]outcome, len(calls))
	sem := make(chan struct{}, a.opts.MaxParallelCalls)
	var wg sync.WaitGroup
	var spends []int
	for i, c := range calls {
		switch {
		case i >= a.opts.MaxCallsPerStep:
			results[i] = outcome{skipped: true, content: fmt.Sprintf("error: not run: I run at most %d tool calls from one reply. "+
				"Ask for this one again in your next reply if it is still needed.", a.opts.MaxCallsPerStep)}
		case c.Function.Name == core.CoreExecute:
			spends = append(spends, i)
		default:
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				results[i] = tr.dispatchSafe(ctx, c)
			})
		}
	}
	if len(spends) > 0 {
		wg.Go(func() {
			for _, i := range spends {
				sem <- struct{}{}
				results[i] = tr.dispatchSafe(ctx, calls[i])
				<-sem
			}
		})
	}
	wg.Wait()
	return results
}

// dispatchSafe is dispatch with a tool's panic contained: the call fails
// in-band, the stack is logged, and the turn and every other thread go on.
// Where the thread shows steps, the call is one, shown as it starts and
// as it ends.
func (tr *turn) dispatchSafe(ctx context.Context, c llm.ToolCall) (out outcome) {
	if s, ok := tr.stepper(); ok {
		tr.step(ctx, s, c, core.StepRunning, outcome{})
		// A long-running call (an MCP task) shows its progress on its step.
		ctx = core.WithStepProgress(ctx, func(pctx context.Context, output string) {
			tr.step(pctx, s, c, core.StepRunning, outcome{content: output})
		})
		defer func() {
			state := core.StepDone
			if out.failed {
				state = core.StepFailed
			}
			tr.step(ctx, s, c, state, out)
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			tr.a.log.Error().Str("tool", c.Function.Name).Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("agent: tool call panicked")
			out = outcome{failed: true, content: fmt.Sprintf("error: %s crashed while running; its outcome is unknown.", c.Function.Name)}
		}
	}()
	return tr.dispatch(ctx, c)
}

// inBand is a dispatch error that also says, for the model, what went
// wrong (a tool server restarting, a call timing out): worth retrying, and
// when retries run out, the model reads the sentence.
type inBand interface {
	error
	InBand() string
}

// dispatch runs one call, retrying invocation failures with backoff. A
// core_execute call is never retried: it may move money.
func (tr *turn) dispatch(ctx context.Context, c llm.ToolCall) outcome {
	a := tr.a
	name := c.Function.Name
	if a.opts.Tools == nil {
		return outcome{content: "error: no tools are available in this conversation.", failed: true}
	}
	args, err := c.Function.ParseArgs()
	if err != nil {
		return outcome{failed: true, content: fmt.Sprintf("error: the arguments for %s are not a valid JSON object (%v). Call it again with a JSON object that matches its schema.", name, err)}
	}
	call := tr.t.Call(c.ID, name, args)
	for attempt := 1; ; attempt++ {
		var files []core.ToolFile
		fctx := core.WithFileSink(ctx, func(f core.ToolFile) { files = append(files, f) })
		// Every attempt is the same call: the surface made it only if it
		// never reached its server before, or if it changes nothing.
		content, isError, err := a.opts.Tools.Dispatch(fctx, call)
		if err == nil {
			if isError {
				if !strings.HasPrefix(content, "error:") {
					content = "error: " + content
				}
				return outcome{content: content, failed: true}
			}
			if content == "" {
				content = "(no output)"
			}
			return outcome{content: content, files: files}
		}
		if ctx.Err() != nil {
			return outcome{content: "error: cancelled.", failed: true}
		}
		if name == core.CoreExecute || attempt > a.opts.MaxRetriesPerTool {
			a.log.Warn().Err(err).Str("tool", name).Int("attempts", attempt).Msg("agent: tool call failed")
			if ib, ok := errors.AsType[inBand](err); ok {
				return outcome{failed: true, content: "error: " + ib.InBand()}
			}
			return outcome{failed: true, content: fmt.Sprintf("error: %s could not be reached after %d attempt(s): %v", name, attempt, err)}
		}
		d := a.backoff(attempt, err)
		a.log.Debug().Err(err).Str("tool", name).Int("retry", attempt).Dur("wait_ms", d).Msg("agent: tool call failed; retrying")
		if a.opts.Sleep(ctx, d) != nil {
			return outcome{content: "error: cancelled.", failed: true}
		}
	}
}

// offers reports whether the model was given the named tool.
func (tr *turn) offers(name string) bool { return offered(tr.tools, name) }

// batchSignature hashes a batch canonically: call names, arguments with
// sorted keys, and results, independent of call IDs.
func batchSignature(calls []llm.ToolCall, results []outcome) uint64 {
	h := fnv.New64a()
	for i, c := range calls {
		h.Write([]byte(c.Function.Name))
		h.Write([]byte{0})
		if args, err := c.Function.ParseArgs(); err == nil {
			b, _ := json.Marshal(args) // map keys are sorted
			h.Write(b)
		} else {
			h.Write([]byte(c.Function.Arguments))
		}
		h.Write([]byte{0})
		h.Write([]byte(results[i].content))
		h.Write([]byte{1})
	}
	return h.Sum64()
}

// callNames lists a batch's distinct tool names.
func callNames(calls []llm.ToolCall) string {
	var names []string
	seen := map[string]bool{}
	for _, c := range calls {
		if !seen[c.Function.Name] {
			seen[c.Function.Name] = true
			names = append(names, c.Function.Name)
		}
	}
	return strings.Join(names, ", ")
}
