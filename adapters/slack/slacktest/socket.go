package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

// WaitConnected waits until a Socket Mode client is connected.
func (s *Server) WaitConnected(ctx context.Context) error {
	if err := s.wait(ctx, func() bool { return s.conn != nil }); err != nil {
		return fmt.Errorf("slacktest: wait for a socket mode connection: %w", err)
	}
	return nil
}

// Disconnect drops the current Socket Mode connection, as Slack does when it
// rotates connections; slack-go reconnects.
func (s *Server) Disconnect() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.notifyLocked()
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
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
	old := s.conn
	s.conn = c
	s.conns++
	queued := s.queue
	s.queue = nil
	for _, e := range queued {
		c.out <- e.raw
	}
	s.notifyLocked()
	ping := s.PingInterval
	s.wg.Add(2)
	s.mu.Unlock()
	if old != nil {
		old.close()
	}

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
		if s.conn == c {
			s.conn = nil
			s.notifyLocked()
		}
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
		s.mu.Lock()
		if _, dup := s.acks[a.EnvelopeID]; !dup {
			s.acks[a.EnvelopeID] = Ack{EnvelopeID: a.EnvelopeID, Payload: a.Payload, At: time.Now()}
		}
		s.notifyLocked()
		s.mu.Unlock()
	}
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
	if s.conn == nil {
		s.queue = append(s.queue, envelope{ID: id, Type: typ, raw: raw})
		s.mu.Unlock()
		return d
	}
	c := s.conn
	s.mu.Unlock()
	select {
	case c.out <- raw:
		s.redeliverUnacked(d)
	case <-c.done:
		s.mu.Lock()
		s.queue = append(s.queue, envelope{ID: id, Type: typ, raw: raw})
		s.mu.Unlock()
	}
	return d
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
		_, acked := s.acks[d.EnvelopeID]
		delete(s.retries, t)
		closed := s.closed
		s.mu.Unlock()
		if !acked && !closed {
			s.sendEnvelope(d.Type, d.Payload, d.Retry+1)
		}
	})
	s.retries[t] = true
}

// Acks returns every ack received so far, keyed by envelope ID.
func (s *Server) Acks() map[string]Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Ack, len(s.acks))
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
		a, ok = s.acks[d.EnvelopeID]
		return ok
	})
	if err != nil {
		return Ack{}, fmt.Errorf("slacktest: wait for ack of %s: %w", d.EnvelopeID, err)
	}
	return a, nil
}
