package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// A server's question during a tool call (an MCP elicitation) is asked of
// the person whose turn it is, through the turn's approver, as a gate with
// a form (core/elicitgate.go): the adapters show it, only that person may
// answer, and it times out into a cancel. While the person answers, the
// call's timeout is paused.
//
// After a restart the server's request is gone. A turn resumed then makes
// its unfinished call again only if it changes nothing (read or none): the
// server asks again, finds the same question still shown (same thread,
// call and place in the call), and a click after the restart answers it.
// A call that changes things is never made again: its question is closed
// with a sentence saying so, and the model is told its outcome is unknown.

// DefaultQuestionTimeout is how long a server's question waits for an
// answer by default.
const DefaultQuestionTimeout = 10 * time.Minute

// restartNote is what a question shows when a restart ended it.
const restartNote = "Cancelled — neobot restarted while waiting for this answer, and the tool's request ended with it. A call that changes things is never repeated on its own: ask Neo again if it is still needed."

// callOf is what the surface knows of a tool call in flight, for the
// questions its server asks.
type callOf struct {
	call core.ToolCall
	b    binding
	// asked counts the questions asked so far in the call: the n-th
	// question of a call made again after a restart finds the n-th of
	// the first attempt.
	asked atomic.Int64
	// timer is the call's deadline, paused while a person answers.
	timer *pausable
}

type callOfKey struct{}

func withCall(ctx context.Context, c *callOf) context.Context {
	return context.WithValue(ctx, callOfKey{}, c)
}

func callFrom(ctx context.Context) *callOf {
	c, _ := ctx.Value(callOfKey{}).(*callOf)
	return c
}

// questionReq is the gate request for the n-th question of call, to b,
// without its question and form (which place-bound bindings leave out).
func questionReq(call core.ToolCall, b binding, n int64) core.GateRequest {
	t, callID := call.Turn(), call.ID()
	return core.GateRequest{
		IntentID: "elicit:" + b.alias + "/" + b.tool, NodeID: t.Inbound.EventID + "/" + callID + "/" + strconv.FormatInt(n, 10),
		CallID: callID, Thread: t.Inbound.Thread, Requester: t.Inbound.User, Form: &core.Form{},
	}
}

// elicitFunc returns the surface's mcp.ElicitFunc, nil when servers may
// not ask questions.
func (s *Surface) elicitFunc() mcp.ElicitFunc {
	if !s.questions {
		return nil
	}
	return s.elicit
}

// elicit asks the person whose turn it is a server's question.
func (s *Surface) elicit(ctx context.Context, e mcp.Elicitation) (mcp.ElicitResult, error) {
	cancel := mcp.ElicitResult{Action: mcp.ElicitCancel}
	c := callFrom(ctx)
	if c == nil || c.call.Turn() == nil || c.call.Turn().Approver == nil {
		return cancel, nil // nobody to ask
	}
	t := c.call.Turn()
	var form *core.Form
	question := fmt.Sprintf("%s/%s asks:\n>%s", c.b.alias, c.b.tool, inertQuote(e.Message))
	if e.URL != "" {
		link, ok := questionLink(e.URL)
		if !ok {
			s.gate.log.Warn().Str("server", e.Server).Msg("tools: a server's question was cancelled: its link is not https (plain http only on loopback)")
			return cancel, nil
		}
		form = &core.Form{URL: link}
		question = fmt.Sprintf("%s/%s asks you to open a link:\n>%s\n%s\nOpen it and do what it asks, then choose %s.", c.b.alias, c.b.tool, inertQuote(e.Message), link, core.ElicitDone)
	} else {
		var err error
		if form, err = core.ParseForm(e.Schema); err != nil {
			s.gate.log.Warn().Err(err).Str("server", e.Server).Msg("tools: a server's question was cancelled: its form cannot be shown")
			return cancel, nil
		}
	}
	req := questionReq(c.call, c.b, c.asked.Add(1))
	req.Form, req.TTL, req.Question = form, s.questionTimeout, question
	if c.timer != nil {
		c.timer.pause()
		defer c.timer.resume()
	}
	ans := core.Ask(ctx, t.Approver, req)
	if ctx.Err() != nil {
		return cancel, nil
	}
	out := mcp.ElicitResult{Action: ans.Action()}
	if out.Action == mcp.ElicitAccept {
		if err := json.Unmarshal([]byte(ans.Values), &out.Content); err != nil || out.Content == nil {
			out.Content = map[string]any{}
		}
	}
	return out, nil
}

// questionLink is a URL-mode question's link as shown: https, or plain
// http on loopback only, with nothing in it that a chat platform would
// read as markup (angle brackets, pipes, spaces are escaped). ok is false
// for any other link, which is not shown.
func questionLink(raw string) (link string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || !(u.Scheme == "https" || u.Scheme == "http" && mcp.Loopback(u.Hostname())) {
		return "", false
	}
	return strings.NewReplacer("<", "%3C", ">", "%3E", "|", "%7C", " ", "%20", "*", "%2A", "_", "%5F", "`", "%60").Replace(u.String()), true
}

// inertQuote keeps a server's words from pinging anyone or closing the
// quote they are shown in: angle brackets become look-alikes, and every
// line stays quoted.
func inertQuote(s string) string {
	s = strings.NewReplacer("<", "‹", ">", "›").Replace(strings.TrimSpace(s))
	return strings.ReplaceAll(s, "\n", "\n>")
}

// lostQuestion checks, for a call that changes things made by a turn
// resumed after a restart, whether the first attempt got as far as a
// question: its request died with the process, so the call must not be
// made again. It closes the questions still shown, saying why, and
// returns the in-band result for the model; ok is false when the call may
// go ahead.
func (s *Surface) lostQuestion(ctx context.Context, call core.ToolCall, b binding) (result string, ok bool) {
	t := call.Turn()
	if !s.questions || t == nil || !t.Resumed || t.Approver == nil || !changes(b) {
		return "", false
	}
	for n := int64(1); ; n++ {
		req := questionReq(call, b, n)
		req.Note = restartNote
		if _, err := t.Approver(ctx, req); err != nil {
			if n == 1 {
				return "", false // no question was asked: the call never got that far
			}
			break
		}
	}
	return fmt.Sprintf("%s was not run again: it was waiting for the user's answer to its server's question when neobot restarted, and the call ended with it. "+
		"Its outcome is unknown. Tell the user; call it again only if they ask.", call.Name()), true
}

// pausable is a call's deadline that stops running while a person answers
// a question its server asked: a form can take longer than a tool call may.
type pausable struct {
	mu      sync.Mutex
	left    time.Duration
	started time.Time
	timer   *time.Timer
	paused  int
	fired   bool
	cancel  context.CancelCauseFunc
}

// errCallTimeout is the cause of a call's context ended by its deadline.
var errCallTimeout = context.DeadlineExceeded

// withPausableTimeout returns a context that ends after d of running time,
// not counting pauses, with the cause context.DeadlineExceeded.
func withPausableTimeout(ctx context.Context, d time.Duration) (context.Context, *pausable, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(ctx)
	p := &pausable{left: d, started: time.Now(), cancel: cancel}
	p.timer = time.AfterFunc(d, p.expire)
	return &deadlineCtx{Context: cctx, p: p}, p, func() {
		p.mu.Lock()
		p.timer.Stop()
		p.mu.Unlock()
		cancel(context.Canceled)
	}
}

func (p *pausable) expire() {
	p.mu.Lock()
	if p.paused > 0 {
		p.mu.Unlock()
		return
	}
	p.fired = true
	p.mu.Unlock()
	p.cancel(errCallTimeout)
}

func (p *pausable) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == 0 && p.timer.Stop() {
		p.left -= time.Since(p.started)
	}
	p.paused++
}

func (p *pausable) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused--; p.paused == 0 && !p.fired {
		p.started = time.Now()
		p.timer.Reset(max(p.left, 0))
	}
}

// deadlineCtx reports its end by the deadline as context.DeadlineExceeded,
// as context.WithTimeout does, so callers tell a timeout from a stop.
type deadlineCtx struct {
	context.Context
	p *pausable
}

func (c *deadlineCtx) Err() error {
	err := c.Context.Err()
	if err != nil && errors.Is(context.Cause(c.Context), errCallTimeout) {
		return context.DeadlineExceeded
	}
	return err
}

func (c *deadlineCtx) Value(key any) any { return c.Context.Value(key) }

// callContext bounds a call to b by the call timeout, which pauses while
// a server's question waits for its answer, and stops once the call
// became a task (task.go).
func (s *Surface) callContext(ctx context.Context, call core.ToolCall, b binding) (context.Context, context.CancelFunc) {
	cctx, timer, cancel := withPausableTimeout(ctx, s.callTimeout)
	return withCall(cctx, &callOf{call: call, b: b, timer: timer}), cancel
}
