package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/tools"
)

// ErrInterrupted reports that Run's context ended (the turn was stopped,
// or neobot is shutting down) while a call waited for its approval. The
// plan stays recorded; a resumed turn picks it up.
var ErrInterrupted = errors.New("the spend was interrupted before it was decided; nothing was run, and it will be picked up again when the conversation resumes")

// errMoved reports a call that is no longer in the state a step expected:
// another step moved it first.
var errMoved = errors.New("execute: the call moved on")

// maxResult bounds the tool output kept in the ledger.
const maxResult = 4 << 10

// advance takes one call to a final state, each step recorded before the
// next. An error means ctx ended before a person decided, or the ledger
// failed; the call stays where it was.
func (e *Executor) advance(ctx context.Context, j *job, s core.Spend) (core.Spend, error) {
	for !s.State.Final() {
		var err error
		switch s.State {
		case core.SpendPlanned:
			s, err = e.check(ctx, s, j)
		case core.SpendAsked:
			var mine bool
			if s, mine, err = e.ask(ctx, j, s); err == nil && s.State == core.SpendCalling {
				if !mine {
					return s, e.callingElsewhere(s)
				}
				s, err = e.invoke(ctx, s) // recorded approved and calling in one write, by this Run
				e.tellIfCutOff(ctx, j, s)
			}
		case core.SpendCalling:
			if s.Task != "" {
				// The call became a task, recorded before it was followed:
				// the task goes on at its server, and its outcome is read
				// there.
				s, err = e.follow(ctx, s)
				e.tellIfCutOff(ctx, j, s)
				break
			}
			// Recorded as being made, never recorded as done, by an
			// earlier run of this turn: neobot stopped during the call, or
			// (on PostgreSQL) another instance that held the conversation
			// is still making it. Either way it may have moved money, so it
			// is never made again here, and neither cause is claimed.
			s, err = e.move(ctx, s.ID, core.SpendCalling, func(s *core.Spend) {
				s.State, s.Finished = core.SpendUnknown, e.now()
				s.Reason = "the call was being made when this conversation was cut off (neobot stopped, or another instance took the conversation over), so whether it took effect is unknown"
			})
			if err == nil {
				j.notify(ctx, fmt.Sprintf("⚠️ The spend %s (%s/%s) was being made when this conversation was cut off (neobot stopped, or another instance took the conversation over): its outcome is unknown, and it will not be made again here. Check the provider, or the spend ledger (`neobot spends`), before asking for it again.", s.ID, s.Server, s.Name))
			}
		default:
			return s, fmt.Errorf("the spend ledger holds call %s in a state this neobot does not know (%q), so nothing more was done; tell the operator", s.ID, s.State)
		}
		if err != nil {
			return s, err
		}
		if s.State.Final() {
			e.observe(s.State)
			e.log.Info().Str("spend", s.ID).Str("state", string(s.State)).Str("by", s.DecidedBy).Msg("execute: call ended")
		}
	}
	return s, nil
}

// move applies fn to the call with id when it is still in state from.
func (e *Executor) move(ctx context.Context, id string, from core.SpendState, fn func(s *core.Spend)) (core.Spend, error) {
	return e.moveDay(ctx, id, from, func(s *core.Spend, _ []core.Spend) { fn(s) })
}

// moveDay is move with the workspace-day's other calls, for limits.
func (e *Executor) moveDay(ctx context.Context, id string, from core.SpendState, fn func(s *core.Spend, day []core.Spend)) (core.Spend, error) {
	s, _, err := e.transition(ctx, id, from, fn)
	return s, err
}

// transition is moveDay that also says whether this step made the move:
// false when the call had left state from, moved by another step (another
// Run of the same turn), and s is where that one left it. The ledger's
// UpdateSpend is one transaction, so of two steps moving one call from
// the same state exactly one is told mine.
func (e *Executor) transition(ctx context.Context, id string, from core.SpendState, fn func(s *core.Spend, day []core.Spend)) (s core.Spend, mine bool, err error) {
	s, err = e.ledger.UpdateSpend(context.WithoutCancel(ctx), id, func(s *core.Spend, day []core.Spend) error {
		if s.State != from {
			return errMoved
		}
		fn(s, day)
		return nil
	})
	if errors.Is(err, errMoved) {
		return s, false, nil // its state is the news: advance goes on from there
	}
	if err != nil {
		return s, false, fmt.Errorf("the spend ledger could not record call %s (%v), so nothing more was done with it; tell the user to try again later", id, err)
	}
	return s, true, nil
}

// callingElsewhere is what a Run tells the model about a call another Run
// of the same turn recorded approved and is making: two runs of one turn
// overlapped (on PostgreSQL, a thread's claim lost and taken over while
// the first instance still waited on the approval), and both saw the one
// click. Only the Run that recorded the approval makes the call.
func (e *Executor) callingElsewhere(s core.Spend) error {
	e.log.Warn().Str("spend", s.ID).Msg("execute: the call was approved and is being made by another run of this turn; not made here")
	return fmt.Errorf("the spend %s (%s/%s) was approved, and another run of this conversation (another neobot instance that took it over) recorded the approval and is making the call; it was not made again here. "+
		"Its outcome will be in the spend ledger (`neobot spends`). Tell the user; do not call core_execute again for it", s.ID, s.Server, s.Name)
}

// check refuses a planned call that is over its tool's limits before
// anyone is asked; otherwise it is asked.
func (e *Executor) check(ctx context.Context, s core.Spend, j *job) (core.Spend, error) {
	return e.moveDay(ctx, s.ID, core.SpendPlanned, func(s *core.Spend, day []core.Spend) {
		if why := overLimit(*s, day, j.limits); why != "" {
			s.State, s.Reason, s.Finished = core.SpendRefused, why, e.now()
			return
		}
		if _, err := quorum(*s, j); err != nil {
			s.State, s.Reason, s.Finished = core.SpendRefused, err.Error(), e.now()
			return
		}
		s.State = core.SpendAsked
	})
}

// overLimit says which limit the call s breaks, given the other calls of
// its workspace and day; "" when it is within them. While any currency
// has a limit, a call in a currency without one is refused.
func overLimit(s core.Spend, day []core.Spend, limits skill.Limits) string {
	if !limits.Active() {
		return ""
	}
	l, ok := limits.Limit(s.Currency)
	if !ok {
		return fmt.Sprintf("its currency %q has no spend limit here (limits are set for %s), so it cannot be made", s.Currency, limits.Names())
	}
	cur, _ := limits.Currency(s.Currency)
	amount, err := skill.ParseAmount(s.Amount)
	if err != nil {
		return fmt.Sprintf("its amount %q cannot be checked against the limits", s.Amount)
	}
	if l.PerCall != "" {
		max, err := skill.ParseAmount(l.PerCall)
		if err != nil || amount.Cmp(max) > 0 {
			return fmt.Sprintf("%s %s is over the limit of %s %s per call", s.Amount, cur, l.PerCall, cur)
		}
	}
	if l.PerDay != "" {
		max, err := skill.ParseAmount(l.PerDay)
		if err != nil {
			return fmt.Sprintf("the limit of %s %s per day cannot be read", l.PerDay, cur)
		}
		total := new(big.Rat).Set(amount)
		for _, o := range day {
			if c, ok := limits.Currency(o.Currency); ok && c == cur && o.ID != s.ID && o.Counts() {
				a, err := skill.ParseAmount(o.Amount)
				if err != nil {
					return fmt.Sprintf("today's call %s has an amount (%q) that cannot be added up", o.ID, o.Amount)
				}
				total.Add(total, a)
			}
		}
		if total.Cmp(max) > 0 {
			return fmt.Sprintf("%s %s would bring today's total (UTC) in %s in this workspace to %s %s, over its limit of %s %s per day",
				s.Amount, cur, cur, skill.FormatAmount(total), cur, l.PerDay, cur)
		}
	}
	return ""
}

// quorum returns what the skill's approval policy asks of the call s:
// its tier's approvers, quorum and times; nil without a policy. An error
// says why no tier covers the call, which is then refused.
func quorum(s core.Spend, j *job) (*core.Quorum, error) {
	if j.policy == nil {
		return nil, nil
	}
	amount, err := skill.ParseAmount(s.Amount)
	if err != nil {
		return nil, fmt.Errorf("its amount %q cannot be matched to an approval tier", s.Amount)
	}
	cur, ok := j.limits.Currency(s.Currency)
	if !ok {
		cur = s.Currency
	}
	return j.policy.Quorum(amount, cur, j.turn.Inbound.Thread.Platform)
}

// ask puts the call to a person through the turn's approver, and records
// the decision. An approval is rechecked against the day's limit in the
// same transaction (another call may have been approved meanwhile) and
// recorded as "calling": the caller makes the call next, but only when
// mine says this Run recorded it. A call found "calling" that this Run
// did not move there is another Run's to make.
func (e *Executor) ask(ctx context.Context, j *job, s core.Spend) (_ core.Spend, mine bool, _ error) {
	req := core.GateRequest{
		Thread: j.turn.Inbound.Thread, IntentID: s.IntentID, NodeID: strconv.Itoa(spendNumber(s.ID)), CallID: j.callID,
		Question: Question(s), Options: []core.Option{{Label: Approve, Approves: true}, {Label: Deny}}, Requester: s.Requester,
		PlaceApprovers: j.approvers,
	}
	q, err := quorum(s, j)
	if err != nil { // checked when the call was planned; a policy changed since refuses it now
		return e.transition(ctx, s.ID, core.SpendAsked, func(s *core.Spend, _ []core.Spend) {
			s.State, s.Reason, s.Finished = core.SpendRefused, err.Error(), e.now()
		})
	}
	req.Quorum = q
	ans := core.Ask(ctx, j.turn.Approver, req)
	if ctx.Err() != nil {
		if !errors.Is(context.Cause(ctx), core.ErrStopped) {
			return s, false, ErrInterrupted // shutting down: a resumed turn asks again
		}
		// Stopped by a person: the approval is denied, and the plan ends.
		return e.transition(ctx, s.ID, core.SpendAsked, func(s *core.Spend, _ []core.Spend) {
			s.State, s.Reason, s.Finished = core.SpendCancelled, "the turn was stopped before anyone approved it", e.now()
		})
	}
	return e.transition(ctx, s.ID, core.SpendAsked, func(s *core.Spend, day []core.Spend) {
		s.Decided, s.DecidedBy = e.now(), ans.By
		switch {
		case !ans.Approved && j.turn.Approver == nil:
			s.State, s.Reason = core.SpendDenied, "nobody can approve spends here"
		case !ans.Approved && ans.By == "":
			s.State, s.Reason = core.SpendDenied, "nobody approved it in time"
		case !ans.Approved:
			s.State, s.Reason = core.SpendDenied, fmt.Sprintf("<@%s> denied it", ans.By)
		default:
			// Approved, checked against the day's limit and recorded as
			// being made, in one transaction: the call follows at once.
			if why := overLimit(*s, day, j.limits); why != "" {
				s.State, s.Reason = core.SpendRefused, why+" (other spends were approved while this one waited)"
			} else {
				s.State, s.Called = core.SpendCalling, e.now()
			}
		}
		if s.State.Final() {
			s.Finished = e.now()
		}
	})
}

// invoke makes the call s, which this Run has just recorded as "calling",
// and records how it ended. A call its server answers with a task has
// the task's ID recorded before the task is followed.
func (e *Executor) invoke(ctx context.Context, s core.Spend) (core.Spend, error) {
	args, err := parseArgs(string(s.Args))
	if err != nil {
		return e.endNothing(ctx, s, "", fmt.Sprintf("its recorded arguments could not be read (%v); it was not made", err))
	}
	tw := &taskWatch{}
	tw.created = func(ctx context.Context, id string) error {
		_, err := e.ledger.UpdateSpend(context.WithoutCancel(ctx), s.ID, func(s *core.Spend, _ []core.Spend) error {
			if s.State != core.SpendCalling {
				return errMoved // recorded unknown by another run: this one still follows the task, and records its end
			}
			s.Task = id
			return nil
		})
		if errors.Is(err, errMoved) {
			err = nil
		}
		tw.mu.Lock()
		defer tw.mu.Unlock()
		tw.task, tw.lost = id, err
		return err
	}
	return e.settle(ctx, s, tw, args)
}

// tellIfCutOff tells the thread how the call s ended when its turn was
// stopped (or neobot began to shut down) while the call was made: the
// call went on, since it may already have been moving money, and the
// model, whose turn ended, will not say how it ended.
func (e *Executor) tellIfCutOff(ctx context.Context, j *job, s core.Spend) {
	if ctx.Err() == nil || !s.State.Final() {
		return
	}
	why := "neobot began to shut down"
	if errors.Is(context.Cause(ctx), core.ErrStopped) {
		why = "this turn was stopped"
	}
	j.notify(context.WithoutCancel(ctx), fmt.Sprintf("The spend %s (%s/%s) was already being made when %s, so it went on to its end:\n%s", s.ID, s.Server, s.Name, why, line(s)))
}

// follow takes a call an earlier run recorded as "calling" with its task
// to the task's end, reading it at the server: the call is not made
// again.
func (e *Executor) follow(ctx context.Context, s core.Spend) (core.Spend, error) {
	e.log.Info().Str("spend", s.ID).Str("task", s.Task).Msg("execute: following the task of a call made before a restart")
	args, err := parseArgs(string(s.Args))
	if err != nil {
		args = map[string]any{} // not sent: the task is only read
	}
	return e.settle(ctx, s, &taskWatch{task: s.Task, resume: true}, args)
}

// settle makes (or, with tw.resume, follows) the call s and records how
// it ended.
func (e *Executor) settle(ctx context.Context, s core.Spend, tw *taskWatch, args map[string]any) (core.Spend, error) {
	key := IdempotencyKey(s)
	// A call that outlives the turn (a stop) is left to finish and its
	// outcome recorded: it may already be moving money.
	res, err := e.tools.CallSpend(tw.hooks(context.WithoutCancel(ctx)), s.Function, args, map[string]any{"idempotency_key": key})
	task, status, lost := tw.state()
	switch {
	case lost != nil:
		return e.end(ctx, s, core.SpendUnknown, "", fmt.Sprintf("the tool started task %s, but the spend ledger could not record it (%v), so neobot did not follow it and whether it took effect is unknown", task, lost))
	case task != "" && err != nil && status == mcp.TaskFailed:
		return e.end(ctx, s, core.SpendFailed, "", fmt.Sprintf("its task %s failed (%v) without saying that nothing was done, so it counts toward today's limit", task, err))
	case task != "" && err != nil:
		e.log.Warn().Err(err).Str("spend", s.ID).Str("task", task).Msg("execute: a spend's task could not be followed to its end")
		return e.end(ctx, s, core.SpendUnknown, "", fmt.Sprintf("neobot stopped following its task %s before the task ended (%v), so whether it took effect is unknown", task, err))
	case task != "" && res.IsError && !finished(status):
		// neobot's own words, not the tool's: the server no longer knows
		// the task.
		return e.end(ctx, s, core.SpendUnknown, "", fmt.Sprintf("its task %s could not be followed to its end (%s), so whether it took effect is unknown", task, res.Text))
	case errors.As(err, new(*tools.NotConnectedError)):
		// A per_user tool the person has not connected: their link went
		// to them privately, and nothing was sent.
		return e.endNothing(ctx, s, "", err.Error())
	case mcp.NotSent(err):
		// Provably never left neobot (the server's process was gone, the
		// connection refused): nothing moved, and it is not made again.
		e.log.Warn().Err(err).Str("spend", s.ID).Msg("execute: spend call never reached its server")
		return e.endNothing(ctx, s, "", "the call never reached the tool's server (it was not running), so nothing was sent")
	case err != nil:
		e.log.Warn().Err(err).Str("spend", s.ID).Msg("execute: spend call failed on its way")
		return e.end(ctx, s, core.SpendUnknown, "", fmt.Sprintf("the call failed on its way to the tool (%v), so whether it took effect is unknown", err))
	case res.IsError && nothingDone(res.Structured):
		return e.endNothing(ctx, s, res.Text, "the tool reported an error and that nothing was done")
	case res.IsError:
		return e.end(ctx, s, core.SpendFailed, res.Text, "the tool reported an error without saying that nothing was done, so it counts toward today's limit")
	}
	return e.end(ctx, s, core.SpendCompleted, res.Text, "")
}

// taskWatch is what a spend call learns of the task it may become: its
// ID (recorded by created, or resumed from the ledger), the last status
// its server reported, and an error recording it.
type taskWatch struct {
	resume  bool
	created func(ctx context.Context, id string) error

	mu     sync.Mutex
	task   string
	status string
	lost   error
}

// hooks returns ctx carrying tw's task hooks.
func (tw *taskWatch) hooks(ctx context.Context) context.Context {
	h := mcp.TaskHooks{Created: tw.created, Progress: func(_ context.Context, st mcp.TaskStatus) {
		tw.mu.Lock()
		defer tw.mu.Unlock()
		tw.task, tw.status = st.ID, st.Status
	}}
	if tw.resume {
		h.Resume = tw.task
	}
	return mcp.WithTaskHooks(ctx, h)
}

// state returns the task's ID, its last status and the error recording
// it.
func (tw *taskWatch) state() (task, status string, lost error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.task, tw.status, tw.lost
}

// finished reports whether a task's status is one it ends in.
func finished(status string) bool {
	return status == mcp.TaskCompleted || status == mcp.TaskFailed || status == mcp.TaskCancelled
}

// nothingDone reports whether a tool's structured result says that the
// failed call did nothing: an object whose "done" is false.
func nothingDone(structured json.RawMessage) bool {
	var r struct {
		Done *bool `json:"done"`
	}
	return json.Unmarshal(structured, &r) == nil && r.Done != nil && !*r.Done
}

// endNothing records a call that failed having done nothing.
func (e *Executor) endNothing(ctx context.Context, s core.Spend, result, reason string) (core.Spend, error) {
	return e.move(ctx, s.ID, core.SpendCalling, func(s *core.Spend) {
		s.State, s.Reason, s.Result, s.Finished, s.NothingDone = core.SpendFailed, reason, cut(result, maxResult), e.now(), true
	})
}

// end records how a call that was being made ended.
func (e *Executor) end(ctx context.Context, s core.Spend, state core.SpendState, result, reason string) (core.Spend, error) {
	record := func(s *core.Spend, _ []core.Spend) {
		s.State, s.Reason, s.Result, s.Finished = state, reason, cut(result, maxResult), e.now()
	}
	out, mine, err := e.transition(ctx, s.ID, core.SpendCalling, record)
	if err == nil && !mine && out.State == core.SpendUnknown {
		// Another Run of this turn found the call "calling" while this
		// one made it and, unable to tell a live Run from a crashed one,
		// recorded it unknown. This Run made the call and knows how it
		// ended.
		out, _, err = e.transition(ctx, s.ID, core.SpendUnknown, record)
	}
	return out, err
}

// cancelRest ends the calls after one that did not complete: a plan whose
// call was denied, refused or failed goes no further.
func (e *Executor) cancelRest(ctx context.Context, rest []core.Spend, after core.Spend) {
	for i, s := range rest {
		if s.State != core.SpendPlanned && s.State != core.SpendAsked {
			continue
		}
		out, err := e.move(ctx, s.ID, s.State, func(s *core.Spend) {
			s.State, s.Finished = core.SpendCancelled, e.now()
			s.Reason = fmt.Sprintf("not asked: call %s of the plan was %s", after.ID, after.State)
		})
		if err != nil {
			e.log.Warn().Err(err).Str("spend", s.ID).Msg("execute: cancellation not recorded")
			continue
		}
		rest[i] = out
		e.observe(out.State)
	}
}

// spendNumber is n of the ID "<intent>/<n>".
func spendNumber(id string) int {
	_, n, _ := strings.Cut(id, "/")
	v, _ := strconv.Atoi(n)
	return v
}

// cut shortens s to at most n bytes, on a rune boundary, saying so.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("… (%d bytes in all)", len(s))
}
