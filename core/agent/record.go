package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
)

// recordVersion is written into every entry so a later encoding can read
// an older one.
const recordVersion = 1

// record is one transcript entry as core/agent encodes it into Entry.Data:
// a message, plus what the resume contract needs to find a turn again.
type record struct {
	V   int          `json:"v"`
	Msg *llm.Message `json:"msg,omitempty"`
	// EventID is set on a turn's user message, on its final answer, and on
	// an anchor.
	EventID string `json:"event_id,omitempty"`
	User    string `json:"user,omitempty"`
	// Final marks the answer that ended the turn of EventID; Partial marks
	// an honest partial.
	Final   bool `json:"final,omitempty"`
	Partial bool `json:"partial,omitempty"`
	// Anchor stands for a turn whose user message was compacted into the
	// summary while the turn was still running, so a resume finds it.
	Anchor bool `json:"anchor,omitempty"`
	// ToolPictures marks the user message that shows a model the
	// pictures tools returned (chat-completions takes images only in user
	// messages): part of the turn, not a new one.
	ToolPictures bool `json:"tool_pictures,omitempty"`
	// Of is set on an entry appended again when the entries before it
	// were archived to make room (setAside): the Seq of the archived
	// original it stands for. The archive search skips such entries; the
	// original is there.
	Of uint64 `json:"of,omitempty"`
	// Stub marks a tool result set aside: its Msg is the one-line stub
	// the model sees in the original's place.
	Stub bool `json:"stub,omitempty"`
	// Moved opens a set-aside's appended entries: the entries up to this
	// Seq are archived. A load that finds them still live (archiving them
	// was interrupted) archives them.
	Moved uint64 `json:"moved,omitempty"`
}

// item is a decoded live entry.
type item struct {
	seq    uint64
	rec    record
	msg    llm.Message // zero Role for an anchor
	tokens int
}

// state is a thread's working transcript: the summary and the live items.
type state struct {
	thread  core.Thread
	summary core.Summary
	// goal is the GOAL section of summary, derived once per summary
	// rather than on every step.
	goal  string
	items []item
	// usage is the provider's count for the window as of item usageAt
	// (exclusive); 0 when unknown.
	usage   int
	usageAt int
}

// load reads the thread's transcript.
func (a *Agent) load(ctx context.Context, t core.Thread) (*state, error) {
	sum, entries, err := a.opts.Transcript.LoadTranscript(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("agent: load transcript %s: %w", t, err)
	}
	st := &state{thread: t, items: make([]item, 0, len(entries)+8)}
	st.setSummary(sum)
	var moved uint64
	for _, e := range entries {
		var r record
		if err := json.Unmarshal(e.Data, &r); err != nil {
			return nil, fmt.Errorf("agent: decode entry %d of %s: %w", e.Seq, t, err)
		}
		if r.Moved > 0 {
			moved = max(moved, r.Moved)
			continue
		}
		st.items = append(st.items, a.newItem(e.Seq, r))
	}
	if len(st.items) > 0 && st.items[0].seq <= moved {
		// A set-aside appended its entries but stopped before archiving
		// the ones they replace: archive them now.
		st.summary.UpTo = moved
		if err := a.opts.Transcript.Compact(ctx, t, st.summary); err != nil {
			return nil, fmt.Errorf("agent: finish setting aside in %s: %w", t, err)
		}
		st.items = slices.DeleteFunc(st.items, func(it item) bool { return it.seq <= moved })
	}
	return st, nil
}

func (a *Agent) newItem(seq uint64, r record) item {
	it := item{seq: seq, rec: r}
	if r.Msg != nil {
		it.msg = *r.Msg
		it.tokens = compact.MessageTokens(a.opts.Counter, it.msg)
	}
	return it
}

// tokens estimates m as the model is shown it: a tool result capped at
// ResultCap. (An item's tokens count a result whole, which errs on the
// side of compacting early.)
func (a *Agent) tokens(m llm.Message) int {
	if m.Role == llm.RoleTool {
		m.Content = capResult(m.Content, a.opts.ResultCap)
	}
	return compact.MessageTokens(a.opts.Counter, m)
}

// appendRecords persists recs, in order, and adds them to the live items.
func (a *Agent) appendRecords(ctx context.Context, st *state, recs ...record) error {
	return a.appendWith(ctx, st, a.opts.Transcript.AppendEntries, recs)
}

// appendRecordsLater is appendRecords for a turn's user message: on a
// LaterAppender it does not wait for the disk.
func (a *Agent) appendRecordsLater(ctx context.Context, st *state, recs ...record) error {
	if la, ok := a.opts.Transcript.(LaterAppender); ok {
		return a.appendWith(ctx, st, la.AppendEntriesLater, recs)
	}
	return a.appendRecords(ctx, st, recs...)
}

// appendWith encodes recs, appends them with add, and adds them to the
// live items.
func (a *Agent) appendWith(ctx context.Context, st *state, add func(context.Context, core.Thread, ...[]byte) (uint64, error), recs []record) error {
	data := make([][]byte, len(recs))
	for i, r := range recs {
		r.V = recordVersion
		r.Msg = storedPictures(r.Msg)
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("agent: encode entry: %w", err)
		}
		data[i] = b
	}
	last, err := add(ctx, st.thread, data...)
	if err != nil {
		return fmt.Errorf("agent: persist step of %s: %w", st.thread, err)
	}
	first := last + 1 - uint64(len(recs))
	for i, r := range recs {
		st.items = append(st.items, a.newItem(first+uint64(i), r))
	}
	return nil
}

// turnPlace is where an event's turn stands in the transcript.
type turnPlace int

const (
	turnNew      turnPlace = iota // not in the transcript
	turnOpen                      // user message stored, no final answer
	turnAnswered                  // final answer stored, or superseded
)

// locate finds the turn of eventID among the live items and returns its
// place and the index of its user message (or anchor).
func (st *state) locate(eventID string) (turnPlace, int) {
	if eventID == "" {
		return turnNew, -1
	}
	start := -1
	for i, it := range st.items {
		switch {
		case it.rec.EventID == eventID && it.rec.Final:
			return turnAnswered, i
		case it.rec.EventID == eventID && (it.rec.Anchor || it.msg.Role == llm.RoleUser):
			if start < 0 {
				start = i
			}
		case start >= 0 && it.msg.Role == llm.RoleUser && !it.rec.ToolPictures:
			// A later message started another turn: this one is over.
			return turnAnswered, start
		}
	}
	if start >= 0 {
		return turnOpen, start
	}
	return turnNew, -1
}

// setSummary installs s and the active goal it states.
func (st *state) setSummary(s core.Summary) {
	st.summary, st.goal = s, compact.Goal(s.Text)
}

// dangling returns the tool calls of the last assistant message that have
// no result yet, in order.
func (st *state) dangling() []llm.ToolCall {
	last := -1
	for i := len(st.items) - 1; i >= 0; i-- {
		if r := st.items[i].msg.Role; r == llm.RoleAssistant {
			last = i
			break
		} else if r == llm.RoleUser {
			return nil
		}
	}
	if last < 0 || len(st.items[last].msg.ToolCalls) == 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, it := range st.items[last+1:] {
		if it.msg.Role == llm.RoleTool {
			answered[it.msg.ToolCallID] = true
		}
	}
	var out []llm.ToolCall
	for _, c := range st.items[last].msg.ToolCalls {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// messages renders the live items for the model: tool results capped,
// anchors skipped. Reasoning has one rule, the client's: it goes back on
// the wire only on an assistant tool-call turn, and only to a provider
// that rejects that turn without it (llm.Config.EchoReasoning). So a
// tool-call turn keeps its reasoning here and the client decides; an
// answer's reasoning is never needed and never sent.
func (st *state) messages(system string, resultCap int, hint string) []llm.Message {
	out := make([]llm.Message, 0, len(st.items)+2)
	out = append(out, llm.SystemMessage(system))
	for _, it := range st.items {
		if it.msg.Role == "" {
			continue
		}
		m := it.msg
		if len(m.ToolCalls) == 0 {
			m.Reasoning = ""
		}
		if m.Role == llm.RoleTool {
			m.Content = capResult(m.Content, resultCap)
		}
		out = append(out, m)
	}
	if hint != "" {
		out = append(out, llm.UserMessage(hint))
	}
	return out
}

// used estimates the tokens of the next request: the provider's last count
// plus what was appended since, else the offline estimate of everything.
func (st *state) used(fixed int) int {
	n, from := fixed, 0
	if st.usage > 0 {
		n, from = st.usage, st.usageAt
	}
	for _, it := range st.items[min(from, len(st.items)):] {
		n += it.tokens
	}
	return n
}

// capResult caps a tool result shown to the model, with a marker that says
// what was cut.
func capResult(s string, limit int) string {
	return cutResult(s, limit, "the full result is kept in the transcript")
}

// keepResult caps a tool result as the transcript keeps it.
func keepResult(s string, limit int) string {
	return cutResult(s, limit, "the rest was not kept")
}

// cutResult cuts s at limit bytes on a rune boundary, saying how much
// was shown and what became of the rest.
func cutResult(s string, limit int, rest string) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n\n[truncated: showing the first %d of %d bytes; %s]", cut, len(s), rest)
}
