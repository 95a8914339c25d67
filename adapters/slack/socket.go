package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

// Socket Mode is read here directly: one websocket, each envelope decoded
// once (parseCallback, shared with HTTP mode), handled on the goroutine
// that read it. slack-go's socketmode
// client decodes an envelope five or six times and hands it through three
// goroutines before anyone sees it, and every mention arrives twice (its
// app_mention and its message copy): that was the largest cost of a reply
// after the disk (docs/benchmarks.md). The Web API calls go through
// slack-go, the connection URL (apps.connections.open) included, except
// the two every reply makes (chat.go); events are read into the fields
// Neo uses (parseCallback).

const (
	// socketSilence is how long a connection may stay silent, with no
	// envelope and no ping from Slack, before it is taken for dead and
	// replaced: twice the 30 s slack-go's own client allows between
	// Slack's pings.
	socketSilence = 60 * time.Second
	// socketWriteTimeout bounds an ack or a pong.
	socketWriteTimeout = 10 * time.Second
	// socketReadLimit bounds one envelope; Slack's are a few KB, an
	// interaction carrying a large view some hundreds.
	socketReadLimit = 16 << 20
	// socketRetryMax caps the wait between failed attempts to connect.
	socketRetryMax = 5 * time.Minute
	// socketSteady is how long a connection must last for its end to be
	// routine (a refresh, a dropped link) rather than a failed attempt.
	socketSteady = 10 * time.Second
)

// frame is what every Socket Mode frame from Slack says besides its
// payload.
type frame struct {
	Type         string `json:"type"`
	EnvelopeID   string `json:"envelope_id"`
	RetryAttempt int    `json:"retry_attempt"`
	Reason       string `json:"reason"` // of a disconnect
}

// envelope is one Socket Mode frame from Slack.
type envelope struct {
	frame
	Payload json.RawMessage `json:"payload"`

	// callback is an events_api frame's payload as parseCallback reads
	// it, or callbackErr why it could not be read; decodeEnvelope sets
	// them, and leaves Payload unset when it read the callback with the
	// frame.
	callback    event
	callbackErr error
}

// decodeEnvelope reads a Socket Mode frame. An events_api frame, nearly
// every frame, is read with its callback in one pass (unionCallback); an
// interactive or slash_commands one, or one that pass cannot read, is
// read in two.
func decodeEnvelope(raw []byte) (envelope, error) {
	var f struct {
		frame
		Payload *unionCallback `json:"payload"`
	}
	if json.Unmarshal(raw, &f) == nil && f.Type != "interactive" && f.Type != "slash_commands" {
		env := envelope{frame: f.frame}
		if f.Type != "events_api" {
			return env, nil
		}
		if f.Payload != nil {
			var ok bool
			if env.callback, ok = f.Payload.event(); ok {
				return env, nil
			}
		}
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return env, err
	}
	if env.Type == "events_api" {
		// The one pass could not read the payload: the typed reading decides.
		env.callback, env.callbackErr = parseCallbackTyped(env.Payload)
	}
	return env, nil
}

// socket is one open Socket Mode connection.
type socket struct {
	ws *websocket.Conn
	mu sync.Mutex // one writer at a time
}

// ackFrame is the acknowledgement of envelope id. Slack's IDs are UUIDs,
// written as they are; any other ID is encoded by encoding/json.
func ackFrame(id string) ([]byte, error) {
	const head, tail = `{"envelope_id":"`, `"}`
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return json.Marshal(struct {
				EnvelopeID string `json:"envelope_id"`
			}{id})
		}
	}
	return append(append(append(make([]byte, 0, len(head)+len(id)+len(tail)), head...), id...), tail...), nil
}

// ack acknowledges an envelope on the connection that delivered it. If
// that connection is gone, Slack delivers the envelope again.
func (s *socket) ack(id string) error {
	raw, err := ackFrame(id)
	if err != nil {
		return err
	}
	return s.write(raw)
}

// write sends frame raw, one writer at a time, within socketWriteTimeout.
func (s *socket) write(raw []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ws.SetWriteDeadline(time.Now().Add(socketWriteTimeout)); err != nil {
		return err
	}
	return s.ws.WriteMessage(websocket.TextMessage, raw)
}

// runSocket keeps a Socket Mode connection open until ctx ends, and
// handles what arrives on it. A connection that drops, goes silent or is
// asked to refresh is replaced at once; failed attempts to connect, and
// connections that end soon after they open, are retried with a growing
// wait. It returns an error only when Slack refuses the app token.
func (a *Adapter) runSocket(ctx context.Context) error {
	failures := 0
	for ctx.Err() == nil {
		s, err := a.dialSocket(ctx, a.silence)
		switch {
		case ctx.Err() != nil:
			return nil
		case fatalSocketError(err):
			a.up.Store(false)
			return fmt.Errorf("slack: socket mode: Slack refused the app-level token; check SLACK_APP_TOKEN (xapp-..., with the connections:write scope): %w", err)
		case err != nil:
			a.up.Store(false)
			failures++
			wait := a.retryWait(failures)
			if rl, ok := errors.AsType[*slack.RateLimitedError](err); ok {
				wait = max(wait, rl.RetryAfter)
			}
			a.log.Warn().Err(err).Dur("retry_in_ms", wait).Msg("slack: socket mode connection trouble")
			if !sleepCtx(ctx, wait) {
				return nil
			}
			continue
		}
		opened := time.Now()
		err = a.readSocket(ctx, s, a.silence)
		a.up.Store(false)
		if ctx.Err() != nil {
			return nil
		}
		a.log.Debug().AnErr("cause", err).Msg("slack: socket mode reconnecting")
		// A connection that lasted is replaced at once. One that ended
		// soon after it opened counts as a failed attempt, so a
		// connection Slack keeps closing is not reopened in a tight loop.
		if time.Since(opened) >= socketSteady {
			failures = 0
			continue
		}
		failures++
		if !sleepCtx(ctx, a.retryWait(failures)) {
			return nil
		}
	}
	return nil
}

// sleepCtx waits d, or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dialSocket asks Slack for a Socket Mode URL and connects to it.
func (a *Adapter) dialSocket(ctx context.Context, silence time.Duration) (*socket, error) {
	_, url, err := a.api.StartSocketModeContext(ctx)
	if err != nil {
		return nil, err
	}
	dialer := websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 45 * time.Second}
	ws, resp, err := dialer.DialContext(ctx, url, http.Header{"Origin": {"https://api.slack.com"}})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("dial the socket mode URL: %w", err)
	}
	ws.SetReadLimit(socketReadLimit)
	ws.SetPingHandler(func(data string) error {
		_ = ws.SetReadDeadline(time.Now().Add(silence))
		err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(socketWriteTimeout))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			return nil
		}
		return err
	})
	return &socket{ws: ws}, nil
}

// readSocket handles envelopes until the connection fails, goes silent,
// Slack asks for a new one, or ctx ends; it closes the connection.
func (a *Adapter) readSocket(ctx context.Context, s *socket, silence time.Duration) error {
	var closer sync.WaitGroup
	done := make(chan struct{})
	closer.Go(func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		_ = s.ws.Close()
	})
	defer closer.Wait()
	defer close(done)
	for {
		if err := s.ws.SetReadDeadline(time.Now().Add(silence)); err != nil {
			return err
		}
		_, raw, err := s.ws.ReadMessage()
		if err != nil {
			return err
		}
		env, err := decodeEnvelope(raw)
		if err != nil {
			a.log.Debug().Err(err).Msg("slack: unreadable socket mode frame dropped")
			continue
		}
		switch env.Type {
		case "hello":
			a.up.Store(true)
			a.log.Debug().Msg("slack: socket mode connected")
		case "disconnect":
			return fmt.Errorf("slack asked for a new connection (%s)", env.Reason)
		default:
			a.onEnvelope(ctx, s, env)
		}
	}
}

// onEnvelope handles one envelope. Every envelope with an ID is acked,
// one Neo cannot read too, or Slack would deliver it again; a message is
// acked only once it is journaled (see onEvent).
func (a *Adapter) onEnvelope(ctx context.Context, s *socket, env envelope) {
	var once sync.Once
	ack := func() {
		once.Do(func() {
			if env.EnvelopeID == "" {
				return
			}
			if err := s.ack(env.EnvelopeID); err != nil && ctx.Err() == nil {
				a.log.Warn().Err(err).Msg("slack: ack")
			}
		})
	}
	switch env.Type {
	case "events_api":
		if err := env.callbackErr; err != nil {
			a.log.Debug().Err(err).Str("envelope", env.EnvelopeID).Msg("slack: unreadable envelope acked and dropped")
			ack()
			return
		}
		a.onEvent(env.callback, env.RetryAttempt > 0, ack)
	case "interactive":
		var cb slack.InteractionCallback
		if err := json.Unmarshal(env.Payload, &cb); err != nil {
			ack()
			a.log.Debug().Err(err).Str("envelope", env.EnvelopeID).Msg("slack: unreadable envelope acked and dropped")
			return
		}
		if isFormSubmission(cb) {
			// The ack is the answer: it closes the modal or shows what to fix.
			once.Do(func() {
				if err := s.ackWith(env.EnvelopeID, a.formAck(cb)); err != nil && ctx.Err() == nil {
					a.log.Warn().Err(err).Msg("slack: ack")
				}
			})
			return
		}
		a.onInteraction(cb, ack)
	case "slash_commands":
		var c command
		if err := json.Unmarshal(env.Payload, &c); err != nil {
			ack()
			return
		}
		once.Do(func() {
			if err := s.ackWith(env.EnvelopeID, a.commandReply(ctx, c)); err != nil && ctx.Err() == nil {
				a.log.Warn().Err(err).Msg("slack: ack")
			}
		})
	default: // whatever Slack adds: nothing Neo takes
		ack()
	}
}

// fatalSocketError reports an error that retrying cannot mend: Slack
// refuses the app token.
func fatalSocketError(err error) bool {
	if err == nil {
		return false
	}
	switch err.Error() {
	case "invalid_auth", "account_inactive", "not_authed", "token_revoked", "not_allowed_token_type":
		return true
	}
	code, ok := errors.AsType[slack.StatusCodeError](err)
	return ok && code.Code == http.StatusNotFound
}

// socketBackoff is the wait before attempt n+1 after n failures in a row:
// doubling from a quarter second, at most socketRetryMax, with jitter so
// instances do not retry in step.
func socketBackoff(n int) time.Duration {
	d := socketRetryMax
	if n < 20 {
		d = min(socketRetryMax, 250*time.Millisecond<<(n-1))
	}
	return d/2 + rand.N(d/2+1)
}
