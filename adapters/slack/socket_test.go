package slack

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// TestSocketRefresh: when Slack asks for a new connection (a disconnect
// envelope), the adapter opens one, and a mention sent meanwhile is
// answered through it.
func TestSocketRefresh(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	e.slack.RequestRefresh()
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "after the refresh"})
	if a := e.ack(d); a.Conn != 2 {
		t.Errorf("acked on connection %d, want the new one (2)", a.Conn)
	}
	e.botReply("C0GENERAL", d.TS, "echo: after the refresh")
	if n := e.slack.Connections(); n != 2 {
		t.Errorf("connections = %d, want 2", n)
	}
}

// TestSocketSilenceReplaced: a connection on which Slack sends nothing,
// not even a ping, is taken for dead and replaced. Connections that end
// this soon after they open count as failed attempts: the adapter waits
// longer before each next one instead of reconnecting in a tight loop.
func TestSocketSilenceReplaced(t *testing.T) {
	s := slacktest.New(t)
	s.PingInterval = time.Hour
	var mu sync.Mutex
	var waits []int
	run := runAdapter(t, s, func(a *Adapter) {
		a.silence = 100 * time.Millisecond
		a.retryWait = func(n int) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, n)
			return time.Millisecond
		}
	})
	ctx := waitCtx(t)
	for s.Connections() < 3 {
		select {
		case <-ctx.Done():
			t.Fatalf("a silent connection was never replaced (%d connections)", s.Connections())
		case <-time.After(10 * time.Millisecond): // polling the fake, not timing the adapter
		}
	}
	run.stop(t)
	mu.Lock()
	defer mu.Unlock()
	if len(waits) < 2 || waits[0] != 1 || waits[1] != 2 {
		t.Errorf("waits after short-lived connections, by failures in a row = %v, want 1, 2, ...", waits)
	}
}

// TestSocketConnectRetried: apps.connections.open failing for a while is
// retried until it succeeds; a refused token ends Run with an error that
// names it.
func TestSocketConnectRetried(t *testing.T) {
	s := slacktest.New(t)
	s.Script("apps.connections.open", slacktest.Reply{Status: 500}, slacktest.Reply{Error: "internal_error"})
	run := runAdapter(t, s, nil)
	if err := s.WaitConnected(waitCtx(t)); err != nil {
		t.Fatalf("never connected after two failed attempts: %v", err)
	}
	if n := len(s.Calls("apps.connections.open")); n != 3 {
		t.Errorf("apps.connections.open called %d times, want 3", n)
	}
	run.stop(t)

	refused := slacktest.New(t)
	refused.Script("apps.connections.open", slacktest.Reply{Error: "invalid_auth"})
	run = runAdapter(t, refused, nil)
	select {
	case <-run.exited:
		err := run.err
		if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
			t.Errorf("Run = %v, want the refused token named", err)
		}
	case <-waitCtx(t).Done():
		t.Fatal("Run kept going with a refused app token")
	}
}

// running is an adapter's Run in the background.
type running struct {
	cancel context.CancelFunc
	exited chan struct{} // closed when Run has returned err
	err    error
}

// stop ends Run and checks it returned nil.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	<-r.exited
	if r.err != nil {
		t.Errorf("Run = %v, want nil after cancel", r.err)
	}
}

// runAdapter starts an adapter against s in Socket Mode; edit may change
// it before Run. Run is stopped when the test ends.
func runAdapter(t *testing.T, s *slacktest.Server, edit func(*Adapter)) *running {
	t.Helper()
	threads := intaketest.NewThreads()
	hub := intaketest.NewHub(threads)
	gates := core.NewGates(core.GatesOptions{Store: coretest.NewGateStore(), SelfApprove: true})
	a, err := New(Options{BotToken: "xoxb-test", AppToken: "xapp-test", APIURL: s.APIURL(), Hub: hub, Threads: threads, Gates: gates})
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, exited: make(chan struct{})}
	go func() {
		defer close(r.exited)
		r.err = a.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.exited
		hub.Stop(t)
	})
	return r
}

// waitCtx bounds a test's waits.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
