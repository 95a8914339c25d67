package discord

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// fakeHub is a conversation hub in miniature: it dedupes by EventID, marks
// the thread known, and runs respond (the "turn") on its own goroutine.
type fakeHub struct {
	mu       sync.Mutex
	seen     map[string]bool
	inbounds []core.Inbound
	changed  chan struct{}
	threads  *fakeThreads
	respond  func(ctx context.Context, in core.Inbound)
	wg       sync.WaitGroup
	failNext error
}

func newFakeHub(threads *fakeThreads) *fakeHub {
	return &fakeHub{seen: map[string]bool{}, changed: make(chan struct{}), threads: threads}
}

func (h *fakeHub) Submit(ctx context.Context, in core.Inbound) (bool, error) {
	h.mu.Lock()
	if err := h.failNext; err != nil {
		h.failNext = nil
		h.mu.Unlock()
		return false, err
	}
	if h.seen[in.EventID] {
		h.mu.Unlock()
		return false, nil
	}
	h.seen[in.EventID] = true
	respond := h.respond
	if respond != nil {
		h.wg.Add(1) // before the inbound is visible, so a test's wg.Wait covers its turn
	}
	h.threads.add(in.Thread)
	h.inbounds = append(h.inbounds, in)
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
	if respond != nil {
		go func() {
			defer h.wg.Done()
			respond(context.WithoutCancel(ctx), in)
		}()
	}
	return true, nil
}

func (h *fakeHub) all() []core.Inbound {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.inbounds)
}

// wait returns the n-th (1-based) inbound once it has arrived.
func (h *fakeHub) wait(ctx context.Context, t testing.TB, n int) core.Inbound {
	t.Helper()
	for {
		h.mu.Lock()
		got, ch := len(h.inbounds), h.changed
		if got >= n {
			in := h.inbounds[n-1]
			h.mu.Unlock()
			return in
		}
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("hub got %d inbound messages, want %d", got, n)
		}
	}
}

type fakeThreads struct {
	mu    sync.Mutex
	known map[string]bool
}

func (f *fakeThreads) add(t core.Thread) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.known[t.Key()] = true
}

func (f *fakeThreads) ThreadKnown(ctx context.Context, t core.Thread) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.known[t.Key()], nil
}

// env is one adapter running against one fake Discord.
type env struct {
	t       testing.TB
	ctx     context.Context
	discord *discordtest.Server
	hub     *fakeHub
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
	threads := &fakeThreads{known: map[string]bool{}}
	hub := newFakeHub(threads)
	gates := core.NewGates(core.GatesOptions{Store: coretest.NewGateStore(), SelfApprove: true})
	opts := Options{Token: "test-token", APIURL: s.URL(), Hub: hub, Threads: threads, Gates: gates}
	if edit != nil {
		edit(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
		hub.wg.Wait()
	})
	if err := s.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: ctx, discord: s, hub: hub, a: a, gates: gates}
}

// idle waits until every accepted message has been handled.
func (e *env) idle() {
	e.t.Helper()
	if err := e.a.queues.WaitIdle(e.ctx); err != nil {
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

// onTurn sets what the hub does with each accepted message.
func (h *fakeHub) onTurn(f func(ctx context.Context, in core.Inbound)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.respond = f
}
