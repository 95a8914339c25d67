package compact

import "github.com/neobot/neobot/core/llm"

// Split returns where to cut msgs: msgs[:i] are compacted, msgs[i:] stay.
// counts[i] is the token estimate of msgs[i]. The tail kept holds at least
// keep tokens, and the cut is clean: msgs[i] is never a tool message, so a
// tool call is never separated from its result. With preferUser the cut is
// placed before a user message (a turn boundary) when one qualifies, else
// before any clean message. Split returns 0 when no clean cut exists.
func Split(msgs []llm.Message, counts []int, keep int, preferUser bool) int {
	best, tail := 0, 0
	for i := len(msgs) - 1; i >= 1; i-- {
		if i < len(counts) {
			tail += counts[i]
		}
		if tail < keep || msgs[i].Role == llm.RoleTool {
			continue
		}
		if !preferUser || msgs[i].Role == llm.RoleUser {
			return i
		}
		if best == 0 {
			best = i
		}
	}
	return best
}

// SafeTail returns the index of the last user message: the transcript from
// there on is what survives when no summary can be written. It returns 0
// when msgs hold no user message.
func SafeTail(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return i
		}
	}
	return 0
}
