package slack

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/core"
)

// maxStreamChars bounds one chat.startStream/appendStream markdown_text,
// under the 12,000 characters of a markdown block.
const maxStreamChars = 10000

// Reporter returns how Neo speaks in thread t: Status as the assistant
// pane's status line (assistant.threads.setStatus) in DMs, else one
// placeholder message edited in place at most once per StatusInterval;
// Say as thread replies converted to mrkdwn and split under Slack's
// limits, streamed in DMs where the workspace supports it, replacing the
// placeholder; Notice as a context block, which retires the placeholder.
func (a *Adapter) Reporter(t core.Thread) core.Reporter {
	return reporter{a: a, t: t}
}

type reporter struct {
	a *Adapter
	t core.Thread
}

func (r reporter) Say(ctx context.Context, text string) error    { return r.a.say(ctx, r.t, text) }
func (r reporter) Status(ctx context.Context, text string) error { return r.a.status(ctx, r.t, text) }
func (r reporter) Notice(ctx context.Context, text string) error { return r.a.notice(ctx, r.t, text) }

// threadState is what the reporter remembers about a thread between calls
// within a turn.
type threadState struct {
	mu          sync.Mutex
	placeholder string // ts of the status message, "" when none
	lastEdit    time.Time
	pending     string      // latest status not shown yet
	timer       *time.Timer // flushes pending
	noAssistant bool        // setStatus failed here: use the placeholder
	noStream    bool        // chat.startStream failed here: post instead
}

type reporterStates struct {
	mu sync.Mutex
	m  map[string]*threadState
}

func newReporterStates() *reporterStates { return &reporterStates{m: map[string]*threadState{}} }

func (rs *reporterStates) get(t core.Thread) *threadState {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	st, ok := rs.m[t.Key()]
	if !ok {
		st = &threadState{}
		rs.m[t.Key()] = st
	}
	return st
}

// drop forgets a thread whose turn has answered, unless it learned
// something worth keeping.
func (rs *reporterStates) drop(t core.Thread, st *threadState) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.placeholder == "" && st.timer == nil && !st.noAssistant && !st.noStream {
		delete(rs.m, t.Key())
	}
}

// assistantThread reports whether t may be an assistant-pane thread: only
// DMs can be.
func assistantThread(t core.Thread) bool { return strings.HasPrefix(t.Channel, "D") }

func (a *Adapter) status(ctx context.Context, t core.Thread, text string) error {
	st := a.rstate.get(t)
	st.mu.Lock()
	defer st.mu.Unlock()
	if assistantThread(t) && !st.noAssistant && st.placeholder == "" {
		err := a.retry(ctx, "assistant.threads.setStatus", func(ctx context.Context) error {
			return a.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
				ChannelID: t.Channel, ThreadTS: t.ID, Status: text})
		})
		if err == nil {
			return nil
		}
		a.log.Debug().Err(err).Str("thread", t.Key()).Msg("slack: no assistant status here; using a status message")
		st.noAssistant = true
	}
	if st.placeholder == "" {
		ts, err := a.postTS(ctx, t, statusMessage(text)...)
		if err != nil {
			return err
		}
		st.placeholder, st.lastEdit = ts, time.Now()
		return nil
	}
	wait := a.opts.StatusInterval - time.Since(st.lastEdit)
	if wait <= 0 && st.timer == nil {
		return a.editStatusLocked(ctx, t, st, text)
	}
	st.pending = text // latest wins
	// After Run has returned nobody would wait for the flush: the latest
	// status waits for the next Status or Say instead.
	if st.timer == nil && a.goLate() {
		st.timer = time.AfterFunc(max(wait, 0), func() {
			defer a.wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
			defer cancel()
			st.mu.Lock()
			defer st.mu.Unlock()
			st.timer = nil
			if st.pending != "" && st.placeholder != "" {
				if err := a.editStatusLocked(ctx, t, st, st.pending); err != nil {
					a.log.Warn().Err(err).Str("thread", t.Key()).Msg("slack: update status")
				}
			}
			st.pending = ""
		})
	}
	return nil
}

func (a *Adapter) editStatusLocked(ctx context.Context, t core.Thread, st *threadState, text string) error {
	st.lastEdit = time.Now()
	return a.update(ctx, t.Channel, st.placeholder, statusMessage(text)...)
}

// statusMessage renders a status line as a small grey context block.
func statusMessage(text string) []slack.MsgOption {
	line := "_" + escape(strings.TrimSpace(text)) + "_"
	return []slack.MsgOption{
		slack.MsgOptionText(text, false),
		slack.MsgOptionBlocks(slack.NewContextBlock("status", slack.NewTextBlockObject(slack.MarkdownType, ":hourglass_flowing_sand: "+line, false, false))),
	}
}

// stopStatusLocked cancels a pending status edit and returns the
// placeholder's ts, forgetting it.
func (a *Adapter) stopStatusLocked(st *threadState) string {
	if st.timer != nil && st.timer.Stop() {
		a.wg.Done()
	}
	st.timer, st.pending = nil, ""
	ts := st.placeholder
	st.placeholder = ""
	return ts
}

func (a *Adapter) say(ctx context.Context, t core.Thread, text string) error {
	st := a.rstate.get(t)
	st.mu.Lock()
	defer func() {
		st.mu.Unlock()
		a.rstate.drop(t, st)
	}()
	placeholder := a.stopStatusLocked(st)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if assistantThread(t) && placeholder == "" && !st.noStream {
		err := a.stream(ctx, t, text)
		if err == nil {
			return nil
		}
		a.log.Debug().Err(err).Str("thread", t.Key()).Msg("slack: streaming not available; posting")
		st.noStream = true
	}
	chunks := Split(Mrkdwn(text), maxMessageChars)
	for i, c := range chunks {
		opts := []slack.MsgOption{slack.MsgOptionText(c, false)}
		if i == 0 && placeholder != "" {
			// No blocks: the status block goes, the text shows.
			if err := a.update(ctx, t.Channel, placeholder, slack.MsgOptionText(c, false), slack.MsgOptionBlocks()); err == nil {
				continue
			}
			// The placeholder is gone (deleted by someone): post instead.
		}
		if err := a.post(ctx, t, opts...); err != nil {
			return err
		}
	}
	return nil
}

// stream posts text with chat.startStream/appendStream/stopStream, which
// Slack renders from standard markdown.
func (a *Adapter) stream(ctx context.Context, t core.Thread, text string) error {
	parts := Split(text, maxStreamChars)
	var ts string
	err := a.retry(ctx, "chat.startStream", func(ctx context.Context) (err error) {
		_, ts, err = a.api.StartStreamContext(ctx, t.Channel,
			slack.MsgOptionTS(t.ID), slack.MsgOptionMarkdownText(parts[0]))
		return err
	})
	if err != nil {
		return err
	}
	for _, p := range parts[1:] {
		if err := a.retry(ctx, "chat.appendStream", func(ctx context.Context) error {
			_, _, err := a.api.AppendStreamContext(ctx, t.Channel, ts, slack.MsgOptionMarkdownText("\n\n"+p))
			return err
		}); err != nil {
			return err
		}
	}
	return a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := a.api.StopStreamContext(ctx, t.Channel, ts)
		return err
	})
}

// notice posts text as a context block. A status placeholder showing in the
// thread is deleted first: a notice often ends a turn that gives no answer
// (stopped, failed), whose "working" line would otherwise stay forever and
// be edited into the next turn's answer, above this notice. Mid-turn, the
// next Status simply posts a fresh placeholder below the notice.
func (a *Adapter) notice(ctx context.Context, t core.Thread, text string) error {
	body := Mrkdwn(text)
	if len(body) > 3000 { // a context element's limit
		body = Split(body, 2990)[0] + "…"
	}
	st := a.rstate.get(t)
	st.mu.Lock()
	defer func() {
		st.mu.Unlock()
		a.rstate.drop(t, st)
	}()
	if placeholder := a.stopStatusLocked(st); placeholder != "" {
		err := a.retry(ctx, "chat.delete", func(ctx context.Context) error {
			_, _, err := a.api.DeleteMessageContext(ctx, t.Channel, placeholder)
			return err
		})
		if err != nil {
			a.log.Warn().Err(err).Str("thread", t.Key()).Msg("slack: delete status message")
		}
	}
	return a.post(ctx, t, slack.MsgOptionText(text, false),
		slack.MsgOptionBlocks(slack.NewContextBlock("notice", slack.NewTextBlockObject(slack.MarkdownType, body, false, false))))
}

// post replies in the thread.
func (a *Adapter) post(ctx context.Context, t core.Thread, opts ...slack.MsgOption) error {
	_, err := a.postTS(ctx, t, opts...)
	return err
}

// postTS replies in the thread and returns the new message's ts.
func (a *Adapter) postTS(ctx context.Context, t core.Thread, opts ...slack.MsgOption) (string, error) {
	var ts string
	err := a.retry(ctx, "chat.postMessage", func(ctx context.Context) (err error) {
		_, ts, err = a.api.PostMessageContext(ctx, t.Channel, append(opts, slack.MsgOptionTS(t.ID))...)
		return err
	})
	return ts, err
}

func (a *Adapter) update(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	return a.retry(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, channel, ts, opts...)
		return err
	})
}

// ephemeral tells user something only they see, in the thread when there is one.
func (a *Adapter) ephemeral(ctx context.Context, channel, user, threadTS, text string) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	err := a.retry(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := a.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		a.log.Warn().Err(err).Str("channel", channel).Msg("slack: ephemeral reply")
	}
}
