package execute

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/tools"
)

// Model plans: the main model, through the same client the agent uses.
type Model interface {
	Chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatResult, error)
}

// Toolbox is the spend side of the tool surface (*tools.Surface).
type Toolbox interface {
	SpendTools(ctx context.Context) []tools.SpendTool
	CallSpend(ctx context.Context, function string, args, meta map[string]any) (tools.SpendResult, error)
}

// Delegations records intents in flight as the daemon client does, so
// start-up lists them (the write half of delegate.Ledger).
type Delegations interface {
	SaveDelegation(ctx context.Context, d core.Delegation) error
	FinishDelegation(ctx context.Context, t core.Thread, callID string) error
}

// Labels of a spend call's gate options. Approve is created with Approves
// set, Deny without (see Executor.ask).
const (
	Approve = "Approve"
	Deny    = "Deny"
)

// DefaultMaxCalls bounds the calls one intent may plan.
const DefaultMaxCalls = 8

// Options configures [New].
type Options struct {
	// Model plans; required. Give it the main model: the cheap one is not
	// trusted with money.
	Model Model
	// Tools lists and calls the spend-class tools; required.
	Tools Toolbox
	// Ledger is the spend ledger; required.
	Ledger core.SpendLedger
	// Delegations, when set, records each intent while it runs.
	Delegations Delegations
	// Skills give each place its spend limits; nil gives none.
	Skills *skill.Set
	// Authorize decides whether the turn's requester may ask for a spend
	// at all (core.SpendPolicy.Authorize); a refusal comes back as Run's
	// error and nothing is planned. Nil allows every requester.
	Authorize func(core.Inbound) error
	// Observe is told each call's final state, for a metric.
	Observe func(core.SpendState)
	// MaxCalls bounds the calls of one plan (default DefaultMaxCalls).
	MaxCalls int
	// Logger receives diagnostics; the zero value is silent.
	Logger zerolog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Executor runs core_execute's intents with neobot's own spend tools. It
// is immutable after New and safe for concurrent use.
type Executor struct {
	model       Model
	tools       Toolbox
	ledger      core.SpendLedger
	delegations Delegations
	skills      *skill.Set
	authorize   func(core.Inbound) error
	observe     func(core.SpendState)
	maxCalls    int
	log         zerolog.Logger
	now         func() time.Time
}

// New returns an Executor.
func New(opts Options) (*Executor, error) {
	switch {
	case opts.Model == nil:
		return nil, errors.New("execute: no model to plan spends with")
	case opts.Tools == nil:
		return nil, errors.New("execute: no tool surface to spend with")
	case opts.Ledger == nil:
		return nil, errors.New("execute: no spend ledger")
	}
	e := &Executor{
		model: opts.Model, tools: opts.Tools, ledger: opts.Ledger, delegations: opts.Delegations,
		skills: opts.Skills, authorize: opts.Authorize, observe: opts.Observe,
		maxCalls: opts.MaxCalls, log: opts.Logger, now: opts.Now,
	}
	if e.maxCalls <= 0 {
		e.maxCalls = DefaultMaxCalls
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.observe == nil {
		e.observe = func(core.SpendState) {}
	}
	return e, nil
}

// job is what one Run knows about its caller.
type job struct {
	turn     *core.Turn
	callID   string
	intentID string
	intent   string
	limits   skill.Limits
	policy   *skill.Policy
	// approvers are the people the place's stored settings add to the
	// configured approvers (skill.Skill.Approvers).
	approvers []string
}

func (j *job) notify(ctx context.Context, text string) {
	if j.turn.Reporter != nil {
		_ = j.turn.Reporter.Notice(ctx, text) // best effort: the outcome also reaches the model
	}
}

// Run plans intent, asks a person to approve each planned call, makes the
// approved ones once, and returns the outcome: the tools' results when
// every call completed, else an error whose text tells the model what
// happened (*ClarifyError, *OutcomeError, ErrInterrupted, a
// *core.SpendRefusal). A Run for a turn and tool call that ran before (a
// turn resumed after a restart) picks the recorded plan up where it
// stopped, without planning again.
func (e *Executor) Run(ctx context.Context, intent string) (string, error) {
	intent = strings.TrimSpace(intent)
	if intent == "" {
		return "", errors.New("core_execute needs a description of what to do")
	}
	t, ok := core.TurnFrom(ctx)
	if !ok {
		return "", errors.New("a spend needs a person who asks for it and a person who approves it; outside a conversation nothing is planned or run")
	}
	if e.authorize != nil {
		if err := e.authorize(t.Inbound); err != nil {
			return "", err
		}
	}
	j := &job{turn: t, callID: core.ToolCallFrom(ctx), intent: intent}
	j.intentID = IntentID(t.Inbound, j.callID)
	sk := e.skills.For(t.Inbound)
	j.limits, j.policy, j.approvers = sk.SpendLimits, sk.Approvals, sk.Approvers
	log := e.log.With().Str("intent", j.intentID).Str("thread", t.Inbound.Thread.Key()).Logger()

	calls, err := e.ledger.PlanSpends(ctx, j.intentID, nil)
	if err != nil {
		return "", fmt.Errorf("the spend ledger could not be read, so nothing was planned or run (%v); tell the user to try again later", err)
	}
	if len(calls) == 0 {
		planned, err := e.plan(ctx, j)
		if err != nil {
			log.Info().Err(err).Msg("execute: nothing planned")
			return "", err
		}
		if calls, err = e.ledger.PlanSpends(ctx, j.intentID, planned); err != nil {
			return "", fmt.Errorf("the plan could not be recorded, so nothing was asked or run (%v); tell the user to try again later", err)
		}
		log.Info().Int("calls", len(calls)).Msg("execute: planned")
	} else {
		log.Info().Int("calls", len(calls)).Msg("execute: resuming a recorded plan")
	}
	if e.delegations != nil && j.callID != "" {
		d := core.Delegation{Thread: t.Inbound.Thread, CallID: j.callID, EventID: t.Inbound.EventID, IntentID: j.intentID,
			Prose: intent, Requester: t.Inbound.User, Started: calls[0].Created}
		if err := e.delegations.SaveDelegation(ctx, d); err != nil {
			log.Warn().Err(err).Msg("execute: delegation not recorded")
		}
	}

	for i := range calls {
		s, err := e.advance(ctx, j, calls[i])
		calls[i] = s
		if err != nil {
			return "", err
		}
		if s.State != core.SpendCompleted {
			e.cancelRest(ctx, calls[i+1:], s)
			break
		}
	}
	if e.delegations != nil && j.callID != "" {
		if err := e.delegations.FinishDelegation(context.WithoutCancel(ctx), t.Inbound.Thread, j.callID); err != nil {
			log.Warn().Err(err).Msg("execute: delegation not finished")
		}
	}
	return outcome(j.intentID, calls)
}

// IntentID names the intent of a turn's core_execute call: the same for
// the call resumed after a restart, different for every other call.
func IntentID(in core.Inbound, callID string) string {
	sum := sha256.Sum256([]byte(in.Thread.Key() + "\x00" + in.EventID + "\x00" + callID))
	return "x" + hex.EncodeToString(sum[:8])
}

// IdempotencyKey is the key a call carries to its tool.
func IdempotencyKey(s core.Spend) string {
	intent, n, _ := strings.Cut(s.ID, "/")
	return "neobot:" + intent + ":" + n
}
