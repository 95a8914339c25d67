package web

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event is one thing that happened in a conversation, as the event stream
// sends it.
type Event struct {
	// ID is "<epoch>.<seq>": seq orders a conversation's events; epoch
	// changes when neobot restarts, so a client resuming across a restart
	// is told to reload (event "reset").
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Event types.
const (
	EventMessage       = "message"          // a user's message was taken: {"text", "user"}
	EventStatus        = "status"           // Neo is working: {"text"}
	EventAnswerDelta   = "answer.delta"     // more of the answer being written: {"text"}
	EventAnswer        = "answer"           // the whole answer, final: {"text"}
	EventAnswerRetract = "answer.retracted" // the words written so far were not the answer
	EventNotice        = "notice"           // a note that is not an answer: {"text"}
	EventGateInvoked   = "gate.invoked"     // an approval waits: {"token", "question", "options", ...}
	EventGateDecided   = "gate.decided"     // an approval ended: {"token", "state", "answer", "by"}
	EventReset         = "reset"            // events were missed: reload the conversation
)

// maxEvents is how many events a conversation keeps for clients that
// reconnect; maxConversations how many conversations keep them.
const (
	maxEvents        = 1024
	maxConversations = 4096
)

// feed is the live events of every conversation since neobot started.
type feed struct {
	epoch string

	mu    sync.Mutex
	convs map[string]*convFeed
}

type convFeed struct {
	events []Event
	seq    int64
	last   time.Time
	wake   chan struct{} // closed and replaced on every event
}

func newFeed(now time.Time) *feed {
	return &feed{epoch: strconv.FormatInt(now.UnixNano(), 36), convs: map[string]*convFeed{}}
}

// conv returns the feed of conversation id; f.mu must be held.
func (f *feed) convLocked(id string) *convFeed {
	c := f.convs[id]
	if c == nil {
		if len(f.convs) >= maxConversations {
			f.evictLocked()
		}
		c = &convFeed{wake: make(chan struct{})}
		f.convs[id] = c
	}
	return c
}

// evictLocked forgets the conversation idle longest.
func (f *feed) evictLocked() {
	var oldest string
	var at time.Time
	for id, c := range f.convs {
		if oldest == "" || c.last.Before(at) {
			oldest, at = id, c.last
		}
	}
	close(f.convs[oldest].wake)
	delete(f.convs, oldest)
}

// publish appends an encoded event to conversation id and wakes its
// listeners.
func (f *feed) publish(id, typ string, raw json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.convLocked(id)
	c.seq++
	c.events = append(c.events, Event{ID: f.epoch + "." + strconv.FormatInt(c.seq, 10), Type: typ, Data: raw})
	if len(c.events) > maxEvents {
		c.events = append(c.events[:0:0], c.events[len(c.events)-maxEvents:]...)
	}
	c.last = time.Now()
	close(c.wake)
	c.wake = make(chan struct{})
}

// since returns the events of conversation id after lastID ("" for all
// kept), and a channel closed at the next event. reset is true when
// lastID names events no longer kept, or another run of neobot: the
// client missed something and should reload the transcript.
func (f *feed) since(id, lastID string) (events []Event, reset bool, wake <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.convLocked(id)
	after := int64(0)
	if lastID != "" {
		epoch, seqText, _ := strings.Cut(lastID, ".")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		switch {
		case err != nil || epoch != f.epoch || seq > c.seq:
			reset = true
		case len(c.events) > 0 && seq < c.seq-int64(len(c.events)):
			reset, after = true, seq
		default:
			after = seq
		}
	}
	for _, e := range c.events {
		if seqOf(e.ID) > after {
			events = append(events, e)
		}
	}
	return events, reset, c.wake
}

// lastID is the ID of conversation id's latest event, or one that
// resumes from its start when it has none.
func (f *feed) lastID(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.convs[id]
	if c == nil {
		return f.epoch + ".0"
	}
	return f.epoch + "." + strconv.FormatInt(c.seq, 10)
}

// show publishes an event of conversation conv here, and tells the other
// instances (Options.Relay).
func (a *Adapter) show(conv, typ string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw = []byte(`{}`)
	}
	a.feed.publish(conv, typ, raw)
	if relayed(typ) {
		a.tell(note{Conv: conv, Type: typ, Data: raw})
	}
}

func seqOf(id string) int64 {
	_, s, _ := strings.Cut(id, ".")
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// writeSSE renders e as one Server-Sent Event.
func writeSSE(b *strings.Builder, e Event) {
	fmt.Fprintf(b, "id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data)
}
