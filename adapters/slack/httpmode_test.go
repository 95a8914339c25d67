package slack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
)

const testSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// startHTTP runs an adapter in HTTP mode, its handler served on loopback,
// and points slacktest's deliveries at it.
func startHTTP(t testing.TB) (*env, string) {
	t.Helper()
	e := start(t, func(o *Options) {
		o.Mode, o.SigningSecret, o.AppToken, o.ListenAddr = ModeHTTP, testSecret, "", "127.0.0.1:0"
	})
	srv := httptest.NewServer(e.a.HTTPHandler())
	t.Cleanup(srv.Close)
	e.slack.UseHTTP(srv.URL+"/slack/events", srv.URL+"/slack/interactive", testSecret)
	return e, srv.URL + "/slack/events"
}

func TestHTTPModeSignatures(t *testing.T) {
	e, url := startHTTP(t)
	body := []byte(`{"token":"x","type":"url_verification","challenge":"c-123"}`)
	now := time.Now()
	tests := []struct {
		name     string
		secret   string
		at       time.Time
		unsigned bool
		want     int
	}{
		{"good signature", testSecret, now, false, http.StatusOK},
		{"wrong secret", "not-the-secret", now, false, http.StatusUnauthorized},
		{"stale timestamp", testSecret, now.Add(-10 * time.Minute), false, http.StatusUnauthorized},
		{"future timestamp", testSecret, now.Add(10 * time.Minute), false, http.StatusUnauthorized},
		{"unsigned", "", now, true, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := slacktest.NewEventRequest(url, tt.secret, tt.at, body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.unsigned {
				req.Header.Del("X-Slack-Signature")
				req.Header.Del("X-Slack-Request-Timestamp")
			}
			resp, err := http.DefaultClient.Do(req.WithContext(e.ctx))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("POST = %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == http.StatusOK && string(got) != "c-123" {
				t.Errorf("url_verification body = %q, want the challenge", got)
			}
		})
	}
}

func TestHTTPModeConversation(t *testing.T) {
	e, _ := startHTTP(t)
	askOnTurn(e)
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "pay bob"})
	if a := e.ack(d); a.Status != http.StatusOK {
		t.Fatalf("event delivery = %d %q, want 200", a.Status, a.Body)
	}
	// Slack's retry (X-Slack-Retry-Num) is acked and dropped.
	if a := e.ack(e.slack.Redeliver(d)); a.Status != http.StatusOK {
		t.Errorf("retried delivery = %d, want 200", a.Status)
	}
	msg := e.gateMessageIn("C0GENERAL", d.TS)
	if a := e.ack(e.slack.Click("UALICE", msg, 0)); a.Status != http.StatusOK {
		t.Errorf("interaction delivery = %d %q, want 200", a.Status, a.Body)
	}
	e.botReply("C0GENERAL", d.TS, "approved=true by UALICE")
	e.idle()
	if n := len(e.hub.Journaled()); n != 1 {
		t.Errorf("hub got %d messages, want 1", n)
	}
}

func TestHTTPModeRunListens(t *testing.T) {
	s := slacktest.New(t)
	a, err := New(Options{BotToken: "xoxb-1", SigningSecret: testSecret, Mode: ModeHTTP, APIURL: s.APIURL(),
		ListenAddr: "127.0.0.1:0", Hub: intaketest.NewHub(intaketest.NewThreads())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	if _, err := s.WaitCall(t.Context(), "auth.test", nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	busy, err := New(Options{BotToken: "xoxb-1", SigningSecret: testSecret, Mode: ModeHTTP, APIURL: s.APIURL(),
		ListenAddr: "256.0.0.1:1", Hub: intaketest.NewHub(intaketest.NewThreads())})
	if err != nil {
		t.Fatal(err)
	}
	if err := busy.Run(t.Context()); err == nil {
		t.Errorf("Run on an impossible address = nil, want an error")
	}
}

func TestRevokedTokenStopsRun(t *testing.T) {
	s := slacktest.New(t)
	s.Script("auth.test", slacktest.Reply{Error: "token_revoked"})
	a, err := New(Options{BotToken: "xoxb-1", AppToken: "xapp-1", APIURL: s.APIURL(), Hub: intaketest.NewHub(intaketest.NewThreads())})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Run(t.Context()); err == nil {
		t.Errorf("Run with a revoked token = nil, want an error")
	}
}

// TestHTTPModeBodyLimit: a body over the limit is refused with 413 before
// anything reads it whole, signed or not.
func TestHTTPModeBodyLimit(t *testing.T) {
	e, url := startHTTP(t)
	big := []byte(`{"type":"event_callback","event":{"type":"app_mention","text":"` + strings.Repeat("x", maxRequestBytes) + `"}}`)
	req, err := slacktest.NewEventRequest(url, testSecret, time.Now(), big)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req.WithContext(e.ctx))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status = %d, want 413", resp.StatusCode)
	}
	if n := len(e.hub.Journaled()); n != 0 {
		t.Errorf("hub took %d messages from an oversized body", n)
	}
}

// TestRefusalLogRateLimited: a flood of unsigned requests logs one line
// per interval, counting the rest, instead of one line each.
func TestRefusalLogRateLimited(t *testing.T) {
	logs := &syncWriter{w: &bytes.Buffer{}}
	e := start(t, func(o *Options) {
		o.Mode, o.SigningSecret, o.AppToken, o.ListenAddr = ModeHTTP, testSecret, "", "127.0.0.1:0"
		o.Logger = zerolog.New(logs)
	})
	srv := httptest.NewServer(e.a.HTTPHandler())
	t.Cleanup(srv.Close)
	for range 50 {
		resp, err := http.Post(srv.URL+"/slack/events", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if n := strings.Count(logs.String(), "refused an unsigned"); n < 1 || n > 2 {
		t.Errorf("50 unsigned requests logged %d lines, want one (two if the interval passed)", n)
	}
	// The rate limiter itself, on its own clock.
	l := logEvery{interval: 10 * time.Second}
	t0 := time.Unix(1700000000, 0)
	if n, ok := l.Allow(t0); !ok || n != 0 {
		t.Errorf("first Allow = %d, %v", n, ok)
	}
	for i := range 5 {
		if _, ok := l.Allow(t0.Add(time.Duration(i) * time.Second)); ok {
			t.Errorf("Allow within the interval let a line through")
		}
	}
	if n, ok := l.Allow(t0.Add(11 * time.Second)); !ok || n != 5 {
		t.Errorf("Allow after the interval = %d, %v; want it through with 5 held back", n, ok)
	}
}

// syncWriter serialises writes to a buffer shared with the test.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// String returns what was written so far, while the adapter may still be
// writing.
func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.w)
}
