package slack

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// env is one adapter running against one fake Slack.
type env struct {
	t       testing.TB
	ctx     context.Context
	slack   *slacktest.Server
	hub     *intaketest.Hub
	threads *intaketest.Threads
	a       *Adapter
	gates   *core.Gates
	store   *coretest.GateStore
}

// start runs an adapter in Socket Mode against a fresh slacktest server;
// edit may change the options before New.
func start(t testing.TB, edit func(*Options)) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	s := slacktest.New(t)
	threads := intaketest.NewThreads()
	hub := intaketest.NewHub(threads)
	store := coretest.NewGateStore()
	gates := core.NewGates(core.GatesOptions{Store: store, SelfApprove: true})
	opts := Options{
		BotToken: "xoxb-test", AppToken: "xapp-test", APIURL: s.APIURL(),
		Hub: hub, Threads: threads, Gates: gates,
	}
	if edit != nil {
		edit(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	hub.Prepare(a)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
		hub.Stop(t)
	})
	e := &env{t: t, ctx: ctx, slack: s, hub: hub, threads: threads, a: a, gates: gates, store: store}
	if opts.Mode != ModeHTTP {
		if err := s.WaitConnected(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// ack waits for the delivery's ack.
func (e *env) ack(d slacktest.Delivery) slacktest.Ack {
	e.t.Helper()
	a, err := e.slack.WaitAck(e.ctx, d)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// idle waits until every accepted message has been handled.
func (e *env) idle() {
	e.t.Helper()
	if err := e.a.work.WaitIdle(e.ctx); err != nil {
		e.t.Fatalf("adapter never idle: %v", err)
	}
}

// botReply waits for a bot message in the thread whose rendering contains want.
func (e *env) botReply(channel, thread, want string) slacktest.Message {
	e.t.Helper()
	m, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool {
		return m.FromBot() && m.Channel == channel && m.ThreadTS == thread && !m.Ephemeral &&
			strings.Contains(m.Rendered(), want)
	})
	if err != nil {
		e.t.Fatalf("no bot reply containing %q in %s/%s: %v\nmessages: %+v", want, channel, thread, err, e.slack.Messages())
	}
	return m
}

// botMessages returns the bot's visible messages in a thread.
func (e *env) botMessages(channel, thread string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.slack.Thread(channel, thread) {
		if m.FromBot() && !m.Ephemeral {
			out = append(out, m)
		}
	}
	return out
}

// echo answers every inbound with "echo: <text>".
func echo(a *Adapter) func(ctx context.Context, in core.Inbound) {
	return func(ctx context.Context, in core.Inbound) {
		_ = a.Reporter(in.Thread).Say(ctx, "echo: "+in.Text)
	}
}

var errBoom = errors.New("boom")
