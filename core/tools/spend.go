package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// SpendTool is a spend-class tool as core_execute's planner sees it.
type SpendTool struct {
	// Function is the tool's function name on the surface.
	Function string
	// URI is its pinned URI; URI.Alias and URI.Tool name it in the
	// manifest and on its server.
	URI         mcp.ToolURI
	Description string
	// InputSchema is the JSON Schema of its arguments.
	InputSchema map[string]any
}

// offersExecute reports whether core_execute is offered in a place with
// skill sk: the skill may spend, and there is something to spend with —
// the execution daemon, or a spend-class tool the skill lists.
func (s *Surface) offersExecute(sk *skill.Skill) bool {
	if s.spendVerdict(sk).Rule != skill.Allow {
		return false
	}
	if s.delegate != nil {
		return true
	}
	if s.execute == nil {
		return false
	}
	for _, b := range s.byFunc {
		if b.class == Escalate && sk.Lists(b.uri) {
			return true
		}
	}
	return false
}

// HasSpendTools reports whether the manifest has a spend-class tool:
// declared spend, or named like one (an escalate pattern).
func (s *Surface) HasSpendTools() bool {
	for _, b := range s.byFunc {
		if b.class == Escalate {
			return true
		}
	}
	return false
}

// SpendTools returns the spend-class tools that the place of ctx's turn
// may use, of the servers that are up, sorted by function name: nothing
// where its skill may not spend.
func (s *Surface) SpendTools(ctx context.Context) []SpendTool {
	sk, ok := s.skillOf(ctx)
	if !ok || s.mgr == nil || s.spendVerdict(sk).Rule != skill.Allow {
		return nil
	}
	var out []SpendTool
	for _, t := range s.mgr.Tools() {
		name, ok := s.funcOf[toolRef{t.Alias, t.Name}]
		if !ok {
			continue
		}
		if b := s.byFunc[name]; b.class == Escalate && sk.Lists(b.uri) {
			out = append(out, SpendTool{Function: name, URI: b.uri, Description: t.Description, InputSchema: parameters(t.InputSchema)})
		}
	}
	slices.SortFunc(out, func(a, b SpendTool) int { return cmp.Compare(a.Function, b.Function) })
	return out
}

// CallSpend calls the spend-class tool named function with args, and
// meta as the request's _meta. Only core_execute's executor calls it,
// once a person approved this exact call; it refuses any other tool, and
// any tool the place of ctx's turn may not spend with. It never retries:
// an error means the outcome may be unknown, and the caller decides.
func (s *Surface) CallSpend(ctx context.Context, function string, args, meta map[string]any) (SpendResult, error) {
	b, ok := s.byFunc[function]
	if !ok || s.mgr == nil || b.class != Escalate {
		return SpendResult{}, fmt.Errorf("tools: %s is not a spend-class tool", function)
	}
	t, ok := core.TurnFrom(ctx)
	if !ok {
		return SpendResult{}, fmt.Errorf("tools: %s refused: it was not made in a conversation's turn, so no place's skill allows it", function)
	}
	sk := s.skills.For(t.Inbound)
	if v := s.spendVerdict(sk); v.Rule != skill.Allow {
		return SpendResult{}, fmt.Errorf("tools: %s refused: %s", function, v.Reason)
	}
	if !sk.Lists(b.uri) {
		return SpendResult{}, fmt.Errorf("tools: %s refused: skill %q does not list %s", function, sk.Name, b.uri)
	}
	if meta != nil {
		ctx = mcp.WithMeta(ctx, meta)
	}
	callCtx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	res, err := s.mgr.CallIn(callCtx, placeOf(t.Inbound), b.alias, b.tool, args)
	if ce, ok := errors.AsType[*mcp.ConnectError](err); ok {
		text, what := connectWords(function, ce)
		return SpendResult{}, &NotConnectedError{Alias: ce.Alias, What: what, Sent: sendConnect(ctx, t, text)}
	}
	if err != nil {
		return SpendResult{}, fmt.Errorf("tools: %s: %w", function, err)
	}
	return SpendResult{Text: render(res), IsError: res.IsError, Structured: res.Structured}, nil
}

// SpendResult is a spend tool's answer.
type SpendResult struct {
	// Text is the result as the model would read it.
	Text string
	// IsError is the tool's own report of an error.
	IsError bool
	// Structured is the result's structured content (JSON), if any.
	Structured json.RawMessage
}
