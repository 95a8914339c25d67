package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Ack is the bot's acknowledgement of one delivery: a Socket Mode ack frame,
// or the HTTP response to a delivery in HTTP mode.
type Ack struct {
	EnvelopeID string
	// Payload is the ack's payload, if any.
	Payload json.RawMessage
	// Status is the HTTP status of an HTTP-mode delivery (0 in Socket Mode).
	Status int
	// Body is the HTTP response body of an HTTP-mode delivery.
	Body string
	// Conn is the Socket Mode connection that acked (1 for the first the
	// server accepted; 0 in HTTP mode).
	Conn int
	At   time.Time
}

// envelope is one Socket Mode frame waiting to be sent.
type envelope struct {
	ID   string
	Type string
	raw  []byte
}

// socketConn is one client connection; writes go through out so that one
// goroutine owns the websocket's writer.
type socketConn struct {
	n    int // 1 for the first connection the server accepted, and so on
	ws   *websocket.Conn
	out  chan []byte
	done chan struct{}
	once sync.Once
}

func (c *socketConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

// Connections returns how many Socket Mode connections the server has accepted.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Live returns how many Socket Mode connections are open now.
func (s *Server) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// Via sends every later delivery through connection n (1 for the first
// the server accepted) while it is open, as Slack may route an app's
// events to any of its connections; Via(0) spreads them again across the
// open connections.
func (s *Server) Via(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.via = n
}

// WaitConnected waits until a Socket Mode client is connected.
func (s *Server) WaitConnected(ctx context.Context) error {
	if err := s.wait(ctx, func() bool { return len(s.live) > 0 }); err != nil {
		return fmt.Errorf("slacktest: wait for a socket mode connection: %w", err)
	}
	return nil
}

// RequestRefresh sends the newest Socket Mode connection a disconnect
// envelope (reason refresh_requested), as Slack does before it retires a
// connection, and routes no more deliveries through it: they wait for the
// client's next connection. The connection stays open until the client
// closes it.
func (s *Server) RequestRefresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.live)
	if n == 0 {
		return
	}
	c := s.live[n-1]
	s.live = s.live[:n-1]
	raw, _ := json.Marshal(map[string]any{"type": "disconnect", "reason": "refresh_requested",
		"debug_info": map[string]any{"host": "slacktest"}})
	c.out <- raw
	s.notifyLocked()
}

// Disconnect drops the newest Socket Mode connection, as Slack does when
// it rotates connections; the client connects again.
func (s *Server) Disconnect() {
	s.mu.Lock()
	var c *socketConn
	if n := len(s.live); n > 0 {
		c = s.live[n-1]
		s.live = s.live[:n-1]
	}
	s.notifyLocked()
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// dropLocked forgets a closed connection.
func (s *Server) dropLocked(c *socketConn) {
	s.live = slices.DeleteFunc(s.live, func(l *socketConn) bool { return l == c })
}

// targetLocked picks the connection a delivery goes through: the one Via
// names while it is open, else any open one, as Slack spreads events (a
// seeded random choice: the same run repeats, and a mention and its
// message copy do not always land apart); nil when none is open.
func (s *Server) targetLocked() *socketConn {
	if len(s.live) == 0 {
		return nil
	}
	if s.via > 0 {
		for _, c := range s.live {
			if c.n == s.via {
				return c
			}
		}
	}
	return s.live[s.spread.IntN(len(s.live))]
}

var upgrader = websocket.Upgrader{
	// slack-go sends Origin: https://api.slack.com; accept any origin.
	CheckOrigin: func(*http.Request) bool { return true },
}

// serveSocket accepts a Socket Mode connection: hello, then queued and new
// envelopes, pings, and acks read back.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &socketConn{ws: ws, out: make(chan []byte, 4096), done: make(chan struct{})}
	hello, _ := json.Marshal(map[string]any{
		"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": AppID},
		"debug_info":      map[string]any{"host": "slacktest", "approximate_connection_time": 3600},
	})
	c.out <- hello

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.conns++
	c.n = s.conns
	s.live = append(s.live, c)
	queued := s.queue
	s.queue = nil
	for _, e := range queued {
		c.out <- e.raw
	}
	s.notifyLocked()
	ping := s.PingInterval
	s.wg.Add(2)
	s.mu.Unlock()

	go s.writeLoop(c, ping)
	go s.readLoop(c)
}

func (s *Server) writeLoop(c *socketConn, ping time.Duration) {
	defer s.wg.Done()
	defer c.close()
	if ping <= 0 {
		ping = 5 * time.Second
	}
	t := time.NewTicker(ping)
	defer t.Stop()
	for {
		select {
		case msg := <-c.out:
			if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
				return
			}
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)); err != nil {
				return
			}
		case <-c.done:
			return
		}
	}
}

func (s *Server) readLoop(c *socketConn) {
	defer s.wg.Done()
	defer func() {
		c.close()
		s.mu.Lock()
		s.closedConns[c.n] = true
		s.dropLocked(c)
		s.notifyLocked()
		s.mu.Unlock()
	}()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var a struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &a) != nil || a.EnvelopeID == "" {
			continue
		}
		ack := Ack{EnvelopeID: a.EnvelopeID, Payload: a.Payload, Conn: c.n, At: time.Now()}
		s.mu.Lock()
		s.keepAckLocked(ack)
		s.notifyLocked()
		hooks := s.ackHooks
		s.mu.Unlock()
		for _, fn := range hooks {
			fn(ack)
		}
	}
}

// OnAck calls fn with every Socket Mode ack as it arrives, in the
// connection's reader before it reads the next frame: a test that kills
// the bot from fn kills it the moment Slack would take an envelope as
// handled, before the bot can do anything more.
func (s *Server) OnAck(fn func(Ack)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ackHooks = append(s.ackHooks, fn)
}

// sendEnvelope delivers one envelope over the websocket, or queues it until
// a client connects.
func (s *Server) sendEnvelope(typ string, payload json.RawMessage, retry int) Delivery {
	s.mu.Lock()
	id := s.nextIDLocked("env-")
	frame := map[string]any{
		"envelope_id": id, "type": typ, "payload": payload,
		"accepts_response_payload": false,
	}
	if retry > 0 {
		frame["retry_attempt"] = retry
		frame["retry_reason"] = "timeout"
	}
	raw, _ := json.Marshal(frame)
	d := Delivery{EnvelopeID: id, Type: typ, Payload: payload, Retry: retry, Sent: time.Now()}
	for {
		c := s.targetLocked()
		if c == nil {
			s.queue = append(s.queue, envelope{ID: id, Type: typ, raw: raw})
			s.mu.Unlock()
			return d
		}
		s.mu.Unlock()
		select {
		case c.out <- raw:
			d.Conn = c.n
			s.redeliverUnacked(d)
			return d
		case <-c.done:
			// Closed as it was picked: as Slack does, the event goes to
			// another open connection, or waits for one.
			s.mu.Lock()
			s.dropLocked(c)
		}
	}
}

// redeliverUnacked sends event delivery d again, as Slack does, when it is
// not acked within AckTimeout: a new envelope, retry_attempt one higher,
// at most three retries.
func (s *Server) redeliverUnacked(d Delivery) {
	if d.Type != "events_api" || d.Retry >= 3 || s.AckTimeout < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(s.AckTimeout, func() {
		s.mu.Lock()
		_, acked := s.ackLocked(d.EnvelopeID)
		delete(s.retries, t)
		closed := s.closed
		s.mu.Unlock()
		if !acked && !closed {
			s.sendEnvelope(d.Type, d.Payload, d.Retry+1)
		}
	})
	s.retries[t] = true
}

// ErrUnacked is WaitAckOrClose's answer for a delivery whose connection
// closed before the bot acked it.
var ErrUnacked = errors.New("slacktest: the connection closed before the bot acked the delivery")

// WaitAckOrClose waits for the bot to acknowledge d or, when d went
// through a Socket Mode connection, for that connection to close without
// acknowledging it: then it returns ErrUnacked. Slack redelivers an
// unacked event (see AckTimeout) but not an unacked interaction: it shows
// the person that the click failed, and only their next click reaches the
// app; a test clicks again.
func (s *Server) WaitAckOrClose(ctx context.Context, d Delivery) (Ack, error) {
	var (
		a    Ack
		lost bool
	)
	err := s.wait(ctx, func() bool {
		var ok bool
		if a, ok = s.ackLocked(d.EnvelopeID); ok {
			return true
		}
		lost = d.Conn > 0 && s.closedConns[d.Conn]
		return lost
	})
	switch {
	case err != nil:
		return Ack{}, fmt.Errorf("slacktest: wait for ack of %s: %w", d.EnvelopeID, err)
	case lost:
		return Ack{}, ErrUnacked
	}
	return a, nil
}

// Acks returns every ack received so far, keyed by envelope ID.
func (s *Server) Acks() map[string]Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Ack, len(s.acks)+len(s.oldAcks))
	for k, v := range s.oldAcks {
		out[k] = v
	}
	for k, v := range s.acks {
		out[k] = v
	}
	return out
}

// WaitAck waits for the bot to acknowledge the delivery.
func (s *Server) WaitAck(ctx context.Context, d Delivery) (Ack, error) {
	var a Ack
	err := s.wait(ctx, func() bool {
		var ok bool
		a, ok = s.ackLocked(d.EnvelopeID)
		return ok
	})
	if err != nil {
		return Ack{}, fmt.Errorf("slacktest: wait for ack of %s: %w", d.EnvelopeID, err)
	}
	return a, nil
}
