package discordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Identify is what a client sent in its op 2 identify.
type Identify struct {
	Token   string `json:"token"`
	Intents int    `json:"intents"`
}

// gateway is the websocket side of the server; guarded by Server.mu.
type gateway struct {
	conn       *gwConn
	conns      int
	seq        int64
	queue      [][]byte // dispatches waiting for an identified client
	identifies []Identify
	resumes    int
	heartbeats int
}

// gwConn is one client connection; writes go through out so that one
// goroutine owns the websocket's writer.
type gwConn struct {
	ws   *websocket.Conn
	out  chan []byte
	done chan struct{}
	once sync.Once
	// beating is set, under Server.mu, at the first heartbeat: the
	// client has read READY and finished connecting.
	beating bool
}

func (c *gwConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// frame is a gateway payload.
type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d,omitempty"`
	S  *int64          `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// serveGateway runs one gateway session: hello, identify (or resume),
// READY (or RESUMED), then heartbeats acked and dispatches sent.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	interval, token := s.heartbeat, s.token
	s.mu.Unlock()
	hello, _ := json.Marshal(map[string]any{"heartbeat_interval": interval.Milliseconds()})
	if err := ws.WriteJSON(frame{Op: 10, D: hello}); err != nil {
		_ = ws.Close()
		return
	}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var first frame
	if err := ws.ReadJSON(&first); err != nil {
		_ = ws.Close()
		return
	}
	_ = ws.SetReadDeadline(time.Time{})
	var ready []byte
	switch first.Op {
	case 2:
		var id Identify
		_ = json.Unmarshal(first.D, &id)
		if token != "" && id.Token != token && id.Token != "Bot "+token {
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
			_ = ws.Close()
			return
		}
		s.mu.Lock()
		s.gw.identifies = append(s.gw.identifies, id)
		s.mu.Unlock()
		d, _ := json.Marshal(map[string]any{
			"v": 9, "user": userJSON(BotUserID, true), "session_id": "fake-session",
			"resume_gateway_url": "ws" + s.srv.URL[len("http"):] + "/gateway",
			"guilds":             []any{map[string]any{"id": GuildID, "unavailable": true}},
			"application":        map[string]any{"id": AppID, "flags": 0},
		})
		ready = s.frame("READY", d)
	case 6:
		s.mu.Lock()
		s.gw.resumes++
		s.mu.Unlock()
		ready = s.frame("RESUMED", json.RawMessage(`{}`))
	default:
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4003, "Not authenticated."), time.Now().Add(time.Second))
		_ = ws.Close()
		return
	}

	c := &gwConn{ws: ws, out: make(chan []byte, 4096), done: make(chan struct{})}
	c.out <- ready
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	old := s.gw.conn
	s.gw.conn = c
	s.gw.conns++
	for _, q := range s.gw.queue {
		c.out <- q
	}
	s.gw.queue = nil
	s.notifyLocked()
	s.wg.Add(2)
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	go s.writeLoop(c)
	go s.readLoop(c)
}

// frame numbers a dispatch with the next sequence.
func (s *Server) frame(typ string, d json.RawMessage) []byte {
	s.mu.Lock()
	s.gw.seq++
	seq := s.gw.seq
	s.mu.Unlock()
	raw, _ := json.Marshal(frame{Op: 0, T: typ, S: &seq, D: d})
	return raw
}

func (s *Server) writeLoop(c *gwConn) {
	defer s.wg.Done()
	defer c.close()
	for {
		select {
		case msg := <-c.out:
			if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
				return
			}
		case <-c.done:
			return
		}
	}
}

func (s *Server) readLoop(c *gwConn) {
	defer s.wg.Done()
	defer func() {
		c.close()
		s.mu.Lock()
		if s.gw.conn == c {
			s.gw.conn = nil
			s.notifyLocked()
		}
		s.mu.Unlock()
	}()
	ack, _ := json.Marshal(frame{Op: 11})
	for {
		var f frame
		if err := c.ws.ReadJSON(&f); err != nil {
			return
		}
		if f.Op != 1 {
			continue
		}
		s.mu.Lock()
		s.gw.heartbeats++
		c.beating = true
		s.notifyLocked()
		s.mu.Unlock()
		select {
		case c.out <- ack:
		case <-c.done:
			return
		}
	}
}

// Dispatch sends an event (op 0, type typ, data d) to the connected
// client, or queues it until one identifies. It returns the event's
// sequence number and when it was handed to the connection.
func (s *Server) Dispatch(typ string, d any) (seq int64, sent time.Time) {
	data, _ := json.Marshal(d) // the helpers' own maps always marshal
	s.mu.Lock()
	s.gw.seq++
	seq = s.gw.seq
	raw, _ := json.Marshal(frame{Op: 0, T: typ, S: &seq, D: data})
	c := s.gw.conn
	if c == nil {
		s.gw.queue = append(s.gw.queue, raw)
		s.mu.Unlock()
		return seq, time.Now()
	}
	s.mu.Unlock()
	sent = time.Now()
	select {
	case c.out <- raw:
	case <-c.done:
		s.mu.Lock()
		s.gw.queue = append(s.gw.queue, raw)
		s.mu.Unlock()
	}
	return seq, sent
}

// Connections returns how many gateway sessions have been established.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gw.conns
}

// WaitConnected waits until a client has identified (or resumed), read
// READY (or RESUMED) and sent its first heartbeat: it is fully connected.
func (s *Server) WaitConnected(ctx context.Context) error {
	if err := s.wait(ctx, func() bool { return s.gw.conn != nil && s.gw.conn.beating }); err != nil {
		return fmt.Errorf("discordtest: wait for a gateway connection: %w", err)
	}
	return nil
}

// Disconnect drops the current gateway connection, as Discord does when it
// moves a session; discordgo reconnects and resumes.
func (s *Server) Disconnect() {
	s.mu.Lock()
	c := s.gw.conn
	s.gw.conn = nil
	s.notifyLocked()
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// Identifies returns every identify received, in order.
func (s *Server) Identifies() []Identify {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Identify(nil), s.gw.identifies...)
}

// Resumes returns how many sessions were resumed (op 6).
func (s *Server) Resumes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gw.resumes
}

// Heartbeats returns how many heartbeats (op 1) the server has acked.
func (s *Server) Heartbeats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gw.heartbeats
}
