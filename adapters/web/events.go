package web

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	EventAnswer        = "answer"           // the whole answer, final: {"text", "turn"}
	EventAnswerRetract = "answer.retracted" // the words written so far were not the answer
	EventAnswerStopped = "answer.stopped"   // Stop cut the answer short; these words stay: {"text"}
	EventNotice        = "notice"           // a note that is not an answer: {"text"}
	EventStep          = "step"             // a tool call started or ended: {"id", "plan", "title", "state", "output"}
	EventGateInvoked   = "gate.invoked"     // an approval waits: {"token", "question", "options", ...}
	EventGateDecided   = "gate.decided"     // an approval ended: {"token", "state", "answer", "by"}
	EventGateUpdated   = "gate.updated"     // an approval under a quorum got a vote: {"token", "progress", "approvals", "need"}
	EventReset         = "reset"            // events were missed: reload the conversation
)

// maxEvents is how many events a conversation keeps for clients that
// reconnect; maxConversations how many conversations keep them. The
// bytes kept are capped too (Options.FeedBytes and
// FeedConversationBytes): a count alone lets a few large events hold
// gigabytes.
const (
	maxEvents        = 1024
	maxConversations = 4096
)

// Defaults for the feed's byte caps.
const (
	// DefaultFeedBytes caps the events kept across all conversations.
	DefaultFeedBytes = 32 << 20
	// DefaultFeedConversationBytes caps the events one conversation keeps.
	DefaultFeedConversationBytes = 1 << 20
)

// eventOverhead is what an event costs besides its data: its ID, type
// and slice slot, roughly.
const eventOverhead = 64

// feed is the live events of every conversation since neobot started.
type feed struct {
	epoch string
	// cluster is set when several instances show the same events
	// (Options.Relay): a relayed event's ID is given by the instance it
	// came from, the same on every instance, and a stream resumes at
	// that ID on any of them.
	cluster bool
	minted  atomic.Int64 // IDs this instance gave relayed events
	// seen is, per instance run (the epoch an ID starts with), the
	// highest number of its IDs shown here: an ID above it names an
	// event on its way here (see coming).
	seen map[string]int64
	// maxBytes and maxConvBytes cap the bytes kept overall and per
	// conversation; the newest event of a conversation is always kept.
	maxBytes, maxConvBytes int64

	mu    sync.Mutex
	convs map[string]*convFeed
	bytes int64 // kept across all conversations
}

type convFeed struct {
	events []Event
	bytes  int64
	seq    int64
	// base is the ID of the latest event every instance has (cluster):
	// an event only this instance shows (a piece of an answer) is named
	// after it, so a stream resuming from it elsewhere resumes there.
	base string
	last time.Time
	wake chan struct{} // closed and replaced on every event
}

func newFeed(now time.Time, maxBytes, maxConvBytes int64) *feed {
	if maxBytes <= 0 {
		maxBytes = DefaultFeedBytes
	}
	if maxConvBytes <= 0 {
		maxConvBytes = DefaultFeedConversationBytes
	}
	return &feed{epoch: strconv.FormatInt(now.UnixNano(), 36), convs: map[string]*convFeed{}, seen: map[string]int64{},
		maxBytes: maxBytes, maxConvBytes: maxConvBytes}
}

// conv returns the feed of conversation id; f.mu must be held.
func (f *feed) convLocked(id string) *convFeed {
	c := f.convs[id]
	if c == nil {
		if len(f.convs) >= maxConversations {
			f.evictLocked("")
		}
		c = &convFeed{wake: make(chan struct{})}
		f.convs[id] = c
	}
	return c
}

// evictLocked forgets the conversation idle longest but keep; it
// reports whether there was one.
func (f *feed) evictLocked(keep string) bool {
	var oldest string
	var at time.Time
	for id, c := range f.convs {
		if id != keep && (oldest == "" || c.last.Before(at)) {
			oldest, at = id, c.last
		}
	}
	if oldest == "" {
		return false
	}
	c := f.convs[oldest]
	f.bytes -= c.bytes
	close(c.wake)
	delete(f.convs, oldest)
	return true
}

func eventSize(e Event) int64 {
	return int64(len(e.ID)+len(e.Type)+len(e.Data)) + eventOverhead
}

// dropOldestLocked forgets c's oldest event.
func (f *feed) dropOldestLocked(c *convFeed) {
	n := eventSize(c.events[0])
	c.events[0] = Event{}
	c.events = c.events[1:]
	c.bytes -= n
	f.bytes -= n
}

// publish appends an encoded event to conversation id and wakes its
// listeners. Past a byte cap, the conversation's oldest events go first,
// then (overall) the conversations idle longest; a client that resumes
// from an event no longer kept is told to reload.
func (f *feed) publish(id, typ string, raw json.RawMessage) {
	f.publishAs(id, "", typ, raw)
}

// mint returns the ID of a relayed event shown first here: unique to
// this run of this instance, and the same on every instance that shows
// the event.
func (f *feed) mint() string {
	return f.epoch + "-" + strconv.FormatInt(f.minted.Add(1), 10)
}

// publishAs is publish with the event's ID given (eventID, a relayed
// event's), or made here when "".
func (f *feed) publishAs(id, eventID, typ string, raw json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.convLocked(id)
	c.seq++
	switch {
	case eventID != "":
		c.base = eventID
		if origin, n, ok := mintedID(eventID); ok {
			f.seen[origin] = max(f.seen[origin], n)
		}
	case f.cluster:
		eventID = c.base + "~" + strconv.FormatInt(c.seq, 10)
	default:
		eventID = f.epoch + "." + strconv.FormatInt(c.seq, 10)
	}
	e := Event{ID: eventID, Type: typ, Data: raw}
	c.events = append(c.events, e)
	n := eventSize(e)
	c.bytes += n
	f.bytes += n
	for len(c.events) > 1 && (len(c.events) > maxEvents || c.bytes > f.maxConvBytes) {
		f.dropOldestLocked(c)
	}
	for f.bytes > f.maxBytes && f.evictLocked(id) {
	}
	for len(c.events) > 1 && f.bytes > f.maxBytes {
		f.dropOldestLocked(c)
	}
	if cap(c.events) > 2*maxEvents || (len(c.events) < cap(c.events)/4 && cap(c.events) > 64) {
		c.events = append([]Event(nil), c.events...) // let go of the dropped events' backing array
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
	if f.cluster {
		if lastID == "" {
			return slices.Clone(c.events), false, c.wake
		}
		return f.sinceIDLocked(c, lastID)
	}
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

// sinceIDLocked is since for a feed the instances share: the events
// after lastID, found by its ID, which every instance gives the same
// event. An ID this instance does not hold (its events were dropped, or
// it started after them) resets the client. f.mu must be held.
func (f *feed) sinceIDLocked(c *convFeed, lastID string) (events []Event, reset bool, wake <-chan struct{}) {
	at := func(id string) int {
		for i := len(c.events) - 1; i >= 0; i-- {
			if c.events[i].ID == id {
				return i
			}
		}
		return -1
	}
	i := at(lastID)
	if base, _, local := strings.Cut(lastID, "~"); i < 0 && local {
		// A piece of an answer another instance streamed: resume after
		// the event it followed (the whole answer comes as "answer").
		i = at(base)
		if i < 0 && base == "" { // streamed before any event every instance has
			return slices.Clone(c.events), false, c.wake
		}
	}
	if i < 0 {
		return slices.Clone(c.events), true, c.wake
	}
	return slices.Clone(c.events[i+1:]), false, c.wake
}

// mintedID splits an ID feed.mint made (or a piece of an answer named
// after one) into its instance run and number.
func mintedID(id string) (origin string, n int64, ok bool) {
	id, _, _ = strings.Cut(id, "~")
	origin, num, ok := strings.Cut(id, "-")
	if !ok {
		return "", 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	return origin, n, err == nil
}

// coming reports whether lastID names an event of conversation id that
// is not here yet but on its way: a page that saw it on the instance
// that showed it first reconnected here before the database delivered
// it here. Such a stream waits for it rather than have the page reload.
func (f *feed) coming(id, lastID string) bool {
	if !f.cluster {
		return false
	}
	origin, n, ok := mintedID(lastID)
	if !ok {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[origin] < n
}

// lastID is the ID of conversation id's latest event, or one that
// resumes from its start when it has none ("" when the instances share
// the feed: every instance reads it as the start).
func (f *feed) lastID(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.convs[id]
	if f.cluster {
		if c == nil || len(c.events) == 0 {
			return ""
		}
		return c.events[len(c.events)-1].ID
	}
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
	if a.opts.Relay == nil || !relayed(typ) {
		a.feed.publish(conv, typ, raw)
		return
	}
	// Shown here when its notification comes back, in the order every
	// instance shows it, under the ID every instance gives it.
	a.tell(note{Conv: conv, Type: typ, Data: raw, ID: a.feed.mint()})
}

func seqOf(id string) int64 {
	_, s, _ := strings.Cut(id, ".")
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// writeSSE writes e to w as one Server-Sent Event.
func writeSSE(w io.Writer, e Event) error {
	if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data); err != nil {
		return fmt.Errorf("web: write event %s: %w", e.ID, err)
	}
	return nil
}
