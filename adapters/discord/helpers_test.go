package discord

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// env is one adapter running against one fake Discord.
type env struct {
	t       testing.TB
	ctx     context.Context
	discord *discordtest.Server
	hub     *intaketest.Hub
	threads *intaketest.Threads
	a       *Adapter
	gates   *core.Gates
}

// start runs an adapter against a fresh discordtest server; edit may
// change the options before New. Closing a discordgo session takes a
// second, so tests that start one run in parallel.
func start(t testing.TB, edit func(*Options)) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	s := discordtest.New(t)
	threads := intaketest.NewThreads()
	hub := intaketest.NewHub(threads)
	gates := core.NewGates(core.GatesOptions{Store: coretest.NewGateStore(), SelfApprove: true})
	opts := Options{Token: "test-token", APIURL: s.URL(), Hub: hub, Threads: threads, Gates: gates}
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
	if err := s.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: ctx, discord: s, hub: hub, threads: threads, a: a, gates: gates}
}

// idle waits until every accepted message has been handled.
func (e *env) idle() {
	e.t.Helper()
	if err := e.a.work.WaitIdle(e.ctx); err != nil {
		e.t.Fatalf("adapter never idle: %v", err)
	}
}

// botReply waits for a visible bot message in channel whose content
// contains want.
func (e *env) botReply(channel, want string) discordtest.Message {
	e.t.Helper()
	m, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool {
		return m.FromBot() && m.ChannelID == channel && !m.Ephemeral && strings.Contains(m.Content, want)
	})
	if err != nil {
		e.t.Fatalf("no bot reply containing %q in %s: %v\nmessages: %+v", want, channel, err, e.discord.Messages())
	}
	return m
}

// botMessages returns the bot's visible messages in a channel.
func (e *env) botMessages(channel string) []discordtest.Message {
	var out []discordtest.Message
	for _, m := range e.discord.In(channel) {
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
