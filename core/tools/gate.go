package tools

import (
	"context"
	"fmt"
	"sync"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
	"github.com/rs/zerolog"
)

// Labels of an asked call's approval options. The two allowing options
// are created with Approves set; Deny without (see approve).
const (
	AllowOnce      = "Allow once"
	AllowForThread = "Allow for this thread"
	DenyCall       = "Deny"
)

// maxRemembered bounds the refusals logged once and the thread grants
// kept: past it the oldest half is forgotten, which only means a refusal
// is logged again or a call is asked again.
const maxRemembered = 4096

// gate is the capability gate's memory: which refusals were logged, and
// which threads allowed a tool for the rest of the thread.
type gate struct {
	log zerolog.Logger

	mu      sync.Mutex
	logged  *bounded
	granted *bounded
}

func newGate(log zerolog.Logger) gate {
	return gate{log: log, logged: newBounded(), granted: newBounded()}
}

// skillOf returns the skill of the place of ctx's turn, for callers that
// learn the turn from the context (the executor's spend tools); outside a
// turn, ok is false and nothing may be done: no place's skill is assumed.
func (s *Surface) skillOf(ctx context.Context) (sk *skill.Skill, ok bool) {
	t, ok := core.TurnFrom(ctx)
	if !ok {
		return nil, false
	}
	return s.skills.For(t.Inbound), true
}

// verdict decides a call of the MCP tool b in a place with skill sk: the
// manifest's allowed_side_effects first, then the skill.
func (s *Surface) verdict(sk *skill.Skill, b binding) skill.Verdict {
	if s.manifest != nil && !s.manifest.Allows(b.effect) {
		return skill.Verdict{Rule: skill.Deny, Reason: fmt.Sprintf("the manifest's allowed_side_effects does not include %s", b.effect)}
	}
	if !b.declared {
		return sk.CheckUndeclared(b.uri) // unknown is asked, never run outright
	}
	return sk.Check(b.uri, b.effect)
}

// spendVerdict decides core_execute in a place with skill sk.
func (s *Surface) spendVerdict(sk *skill.Skill) skill.Verdict {
	switch {
	case s.manifest != nil && !s.manifest.Allows(mcp.EffectSpend):
		return skill.Verdict{Rule: skill.Deny, Reason: "the manifest's allowed_side_effects does not include spend"}
	case !sk.Spend:
		return skill.Verdict{Rule: skill.Deny, Reason: fmt.Sprintf("skill %q may not spend", sk.Name)}
	}
	return skill.Verdict{Rule: skill.Allow}
}

// refuse is the in-band answer to a refused call, logged once per thread,
// skill and tool.
func (s *Surface) refuse(call core.ToolCall, sk *skill.Skill, uri string, v skill.Verdict) string {
	thread := ""
	if t := call.Turn(); t != nil {
		thread = t.Inbound.Thread.Key()
	}
	s.gate.mu.Lock()
	first := s.gate.logged.add(thread + "\x00" + sk.Name + "\x00" + uri)
	s.gate.mu.Unlock()
	if first {
		s.gate.log.Warn().Str("thread", thread).Str("skill", sk.Name).Str("tool", uri).Str("rule", v.Reason).Msg("tools: call refused by the capability gate")
	}
	return fmt.Sprintf("%s was refused before it ran: %s. It is not available here; do not call it again, and tell the user if it matters.", call.Name(), v.Reason)
}

// approve puts an asked call to a person through the turn's approver.
// It returns ok true to run the call; a refusal is the in-band text for
// the model. An error means ctx ended while waiting: the turn was stopped
// or the process is shutting down, and a resumed turn asks again (the
// same gate, found by its binding, so a click after a restart counts).
func (s *Surface) approve(ctx context.Context, call core.ToolCall, sk *skill.Skill, b binding) (ok bool, refusal string, err error) {
	name, args, t := call.Name(), call.Args(), call.Turn()
	if t == nil || t.Approver == nil {
		return false, fmt.Sprintf("%s was not run: %s, and nobody can approve calls here. Tell the user it needs an approver.", name, s.verdict(sk, b).Reason), nil
	}
	grant := t.Inbound.Thread.Key() + "\x00" + b.uriText
	s.gate.mu.Lock()
	granted := s.gate.granted.has(grant)
	s.gate.mu.Unlock()
	if granted {
		return true, "", nil
	}
	options := []core.Option{{Label: AllowOnce, Approves: true}}
	if sk.AllowForThread {
		options = append(options, core.Option{Label: AllowForThread, Approves: true})
	}
	options = append(options, core.Option{Label: DenyCall})
	callID := call.ID()
	// The decision is bound to this turn's message as well as the call:
	// call IDs come from the model, and one reused in a later turn must
	// be asked again, not find the earlier "Allow once".
	req := core.GateRequest{
		IntentID: "call:" + b.uriText, NodeID: t.Inbound.EventID + "/" + callID, CallID: callID, Options: options,
		Question: callQuestion(b.alias, b.tool, string(b.effect), args),
	}
	ans := core.Ask(ctx, t.Approver, req)
	if err := ctx.Err(); err != nil {
		return false, "", fmt.Errorf("tools: %s: waiting for approval: %w", name, err)
	}
	if !ans.Approved {
		who := "nobody approved it in time"
		if ans.By != "" {
			who = fmt.Sprintf("<@%s> denied it", ans.By)
		}
		return false, fmt.Sprintf("%s was not run: %s. Do not call it again unless the user asks you to.", name, who), nil
	}
	if ans.Answer == AllowForThread {
		s.gate.mu.Lock()
		s.gate.granted.add(grant)
		s.gate.mu.Unlock()
	}
	return true, "", nil
}

// callQuestion asks whether Neo may make a call, showing every argument;
// a call without any says so rather than show an empty block.
func callQuestion(alias, tool, effect string, args map[string]any) string {
	if len(args) == 0 {
		return fmt.Sprintf("Neo wants to run %s/%s (%s), with no arguments.\nAllow this call?", alias, tool, effect)
	}
	shown, _ := ShowArgs(args, ArgsBudget)
	return fmt.Sprintf("Neo wants to run %s/%s (%s):\n```\n%s\n```\nAllow this call?", alias, tool, effect, shown)
}

// bounded is a set of at most maxRemembered keys; when full, the older
// half goes.
type bounded struct {
	cur, old map[string]bool
}

func newBounded() *bounded { return &bounded{cur: map[string]bool{}} }

// add adds key and reports whether it was new.
func (b *bounded) add(key string) bool {
	if b.has(key) {
		return false
	}
	if len(b.cur) >= maxRemembered/2 {
		b.old, b.cur = b.cur, map[string]bool{}
	}
	b.cur[key] = true
	return true
}

func (b *bounded) has(key string) bool { return b.cur[key] || b.old[key] }
