package tools

import (
	"context"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/skill"
)

// authorize is the capability gate: every call of an MCP tool, by
// whatever name, is checked against the manifest and the place's skill
// before it can run. A call the skill asks about waits for a person's
// decision through the turn's approver. It returns asked true when a
// person allowed the call, a refusal for the model when the call must
// not run, and an error when ctx ended while waiting (the resumed turn's
// call finds the same approval).
func (s *Surface) authorize(ctx context.Context, call core.ToolCall, sk *skill.Skill, b binding) (asked bool, refusal string, err error) {
	switch v := s.verdict(sk, b); v.Rule {
	case skill.Deny:
		return false, s.refuse(call, sk, b.uriText, v), nil
	case skill.Ask:
		ok, refusal, err := s.approve(ctx, call, sk, b)
		if err != nil || !ok {
			return false, refusal, err
		}
		return true, "", nil
	}
	return false, "", nil
}
