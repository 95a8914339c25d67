package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// ticket is a call begun in the calls log; end records how it ended. A
// nil ticket (a call that is not recorded) ends without a word.
type ticket struct {
	s   *Surface
	key string
	b   binding
}

// changes reports whether a call of b may change something.
func changes(b binding) bool { return b.effect != mcp.EffectNone && b.effect != mcp.EffectRead }

// once makes a call that changes something, or that a person was asked
// about, at most once: it is recorded in the calls log as being made
// before it is made, and a call found recorded is never made again
// ("Allow once" means once for the same reason). found is the in-band
// answer when the call must not be made: found begun, or not recorded.
func (s *Surface) once(ctx context.Context, call core.ToolCall, b binding, asked bool) (tk *ticket, found string) {
	if s.calls == nil {
		// Without the log, a resumed turn's call whose server's question
		// was cut off by the restart still is not made again.
		if text, lost := s.lostQuestion(ctx, call, b); lost {
			return nil, text
		}
		return nil, ""
	}
	if !asked && !changes(b) {
		return nil, ""
	}
	key := call.Key()
	begun, err := s.calls.BeginCall(ctx, key, s.run)
	if err != nil {
		return nil, fmt.Sprintf("%s was not run: neobot could not record that it is being made (%v), so it did not risk making it twice. Tell the user and try again later.", call.Name(), err)
	}
	if begun.Fresh {
		return &ticket{s: s, key: key, b: b}, ""
	}
	if begun.Run == s.run {
		// This run began it: the same call dispatched twice, never a stop.
		return nil, s.foundBegun(ctx, call, b, asked, failRepeated)
	}
	if text, lost := s.lostQuestion(ctx, call, b); lost {
		return nil, text // its question, cut off by the restart, now says so
	}
	return nil, s.foundBegun(ctx, call, b, asked, failStopped)
}

// end records how the call ended, given its error. A call that never
// reached its server is forgotten, so that a retry records it again and
// runs it. One cut off by a shutdown, or by a lost claim, while it may
// have run stays begun: the resumed turn reports its outcome unknown
// instead of making it again. Any other call is ended.
func (tk *ticket) end(ctx context.Context, err error) {
	if tk == nil {
		return
	}
	log := tk.s.gate.log
	switch {
	case mcp.NotSent(err):
		if err := tk.s.calls.DropCall(context.WithoutCancel(ctx), tk.key); err != nil {
			log.Warn().Err(err).Str("tool", tk.b.uriText).Msg("tools: a call that was not sent stays in the calls log")
		}
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), core.ErrStopped):
	default:
		if err := tk.s.calls.EndCall(context.WithoutCancel(ctx), tk.key); err != nil {
			log.Warn().Err(err).Str("tool", tk.b.uriText).Msg("tools: the end of a changing call was not recorded")
		}
	}
}
