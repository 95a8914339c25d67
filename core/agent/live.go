package agent

import (
	"context"
	"strings"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// StreamModel is a Model that can stream its answer (*llm.Client).
type StreamModel interface {
	ChatStream(ctx context.Context, req llm.ChatRequest, onText func(string)) (*llm.ChatResult, error)
}

// model returns the main model of in's place: the one its stored
// settings choose (Options.Models), read at each call so a change applies
// from the next, else Options.Model.
func (a *Agent) model(in core.Inbound) Model {
	if m, ok := a.opts.Models[a.opts.Skills.For(in).Model]; ok && m != nil {
		return m
	}
	return a.opts.Model
}

// holdBack is how much text a step writes before it is shown: a step that
// says a few words and then calls tools shows nothing.
const holdBack = 24

// chat calls the main model. When both the model and the thread's
// Reporter can stream, the answer shows while it is written; a step that
// turns out to call tools (or fails, or is cut off) takes back what it
// showed, and the final answer's stream stays open for finish to close.
func (tr *turn) chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatResult, error) {
	model := tr.a.model(tr.t.Inbound)
	sm, ok := model.(StreamModel)
	streamer, ok2 := tr.rep.(core.Streamer)
	if !ok || !ok2 {
		return model.Chat(ctx, req)
	}
	live := &liveAnswer{streamer: streamer, ctx: ctx, log: tr, ready: func() { tr.reporter() }}
	res, err := sm.ChatStream(ctx, req, live.write)
	if err != nil || res.FinishReason == llm.FinishLength || len(res.Message.ToolCalls) > 0 || strings.TrimSpace(res.Message.Content) == "" {
		live.abort()
		return res, err
	}
	tr.answer = live.stream // nil when nothing was shown: finish says it
	return res, nil
}

// liveAnswer opens the stream once enough text has come, and stops
// streaming for good when the platform fails.
type liveAnswer struct {
	streamer core.Streamer
	ctx      context.Context
	log      *turn
	held     strings.Builder
	stream   core.AnswerStream
	broken   bool
	ready    func() // waits for the turn's first status to be out
}

func (l *liveAnswer) write(text string) {
	if l.broken {
		return
	}
	if l.stream == nil {
		l.held.WriteString(text)
		if l.held.Len() < holdBack {
			return
		}
		l.ready()
		s, err := l.streamer.StreamAnswer(l.ctx)
		if err != nil {
			l.fail(err)
			return
		}
		l.stream, text = s, l.held.String()
	}
	if err := l.stream.Write(l.ctx, text); err != nil {
		l.fail(err)
	}
}

// fail stops streaming: what was shown is taken back, and the answer will
// be said whole.
func (l *liveAnswer) fail(err error) {
	l.log.a.log.Debug().Err(err).Str("thread", l.log.st.thread.Key()).Msg("agent: streaming the answer failed; it will be said whole")
	l.abort()
	l.broken = true
}

func (l *liveAnswer) abort() {
	if l.stream == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), 10*time.Second)
	defer cancel()
	if err := l.stream.Abort(ctx); err != nil {
		l.log.a.log.Warn().Err(err).Str("thread", l.log.st.thread.Key()).Msg("agent: take back a streamed answer")
	}
	l.stream = nil
}
