package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
)

// appendLog is a durable JSON-lines file: every record is written with one
// write and fsynced before the call returns. A line torn by a crash is cut
// off when the file is opened again.
type appendLog struct {
	mu sync.Mutex
	f  *os.File
}

// openAppendLog opens path for appending and returns its complete lines.
func openAppendLog(path string) (*appendLog, [][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, err
	}
	if i := bytes.LastIndexByte(data, '\n'); i+1 != len(data) {
		data = data[:i+1] // drop a torn last line
		if err := os.Truncate(path, int64(len(data))); err != nil {
			return nil, nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return &appendLog{f: f}, bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")), nil
}

// append writes v as one line and syncs it to disk.
func (l *appendLog) append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return l.f.Sync()
}

func (l *appendLog) Close() error { return l.f.Close() }

// journalRecord is one line of a fileJournal.
type journalRecord struct {
	In   *core.Inbound `json:"in,omitempty"`
	Done string        `json:"done,omitempty"` // eventKey of a completed message
}

// fileJournal is a durable Journal for the crash test: an append-only
// JSON-lines file, fsynced on every write, standing in for the bbolt store.
type fileJournal struct {
	log *appendLog

	mu      sync.Mutex
	order   []core.Inbound
	seen    map[string]bool
	done    map[string]bool
	changed chan struct{}
}

func openFileJournal(path string) (*fileJournal, error) {
	l, lines, err := openAppendLog(path)
	if err != nil {
		return nil, err
	}
	j := &fileJournal{log: l, seen: map[string]bool{}, done: map[string]bool{}}
	for _, line := range lines {
		if len(line) == 0 {
			continue
		}
		var r journalRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("journal line %q: %w", line, err)
		}
		if r.In != nil {
			j.seen[eventKey(*r.In)] = true
			j.order = append(j.order, *r.In)
		}
		if r.Done != "" {
			j.done[r.Done] = true
		}
	}
	return j, nil
}

func (j *fileJournal) JournalInbound(ctx context.Context, in core.Inbound) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := eventKey(in)
	if j.seen[k] {
		return false, nil
	}
	if err := j.log.append(journalRecord{In: &in}); err != nil {
		return false, err
	}
	j.seen[k] = true
	j.order = append(j.order, in)
	return true, nil
}

func (j *fileJournal) CompleteInbound(ctx context.Context, t core.Thread, eventID string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := t.Platform + "\x00" + eventID
	if j.done[k] {
		return nil
	}
	if err := j.log.append(journalRecord{Done: k}); err != nil {
		return err
	}
	j.done[k] = true
	if j.changed != nil {
		close(j.changed)
		j.changed = nil
	}
	return nil
}

func (j *fileJournal) PendingInbound(ctx context.Context) ([]core.Inbound, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []core.Inbound
	for _, in := range j.order {
		if !j.done[eventKey(in)] {
			out = append(out, in)
		}
	}
	return out, nil
}

// waitDone blocks until n messages are completed or ctx ends.
func (j *fileJournal) waitDone(ctx context.Context, n int) error {
	for {
		j.mu.Lock()
		got := len(j.done)
		if got >= n {
			j.mu.Unlock()
			return nil
		}
		if j.changed == nil {
			j.changed = make(chan struct{})
		}
		ch := j.changed
		j.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d messages completed: %w", got, n, ctx.Err())
		}
	}
}

// outputRecord is one line of an outputLog: something a user saw.
type outputRecord struct {
	Thread string `json:"thread"`
	Event  string `json:"event"` // the message it answers, from core.TurnFrom
	Kind   string `json:"kind"`  // "say" or "notice"
	Text   string `json:"text"`
}

// outputLog is a Platform whose reporters write what users see to a
// durable file: a Say is on disk before it returns. It also knows which
// messages were answered, as the agent's transcript would.
type outputLog struct {
	log *appendLog

	mu       sync.Mutex
	answered map[string]bool
}

func openOutputLog(path string) (*outputLog, error) {
	l, lines, err := openAppendLog(path)
	if err != nil {
		return nil, err
	}
	o := &outputLog{log: l, answered: map[string]bool{}}
	recs, err := parseOutput(lines)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.Kind == "say" {
			o.answered[r.Event] = true
		}
	}
	return o, nil
}

func parseOutput(lines [][]byte) ([]outputRecord, error) {
	var out []outputRecord
	for _, line := range lines {
		if len(line) == 0 {
			continue
		}
		var r outputRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("output line %q: %w", line, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (o *outputLog) isAnswered(event string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.answered[event]
}

func (o *outputLog) Reporter(t core.Thread) core.Reporter { return threadOutput{o, t} }

func (o *outputLog) Approver(core.Thread, string) core.Approver { return nil }

// threadOutput is one thread's Reporter over an outputLog.
type threadOutput struct {
	o *outputLog
	t core.Thread
}

func (r threadOutput) write(ctx context.Context, kind, text string) error {
	var event string
	if turn, ok := core.TurnFrom(ctx); ok {
		event = turn.Inbound.EventID
	}
	if err := r.o.log.append(outputRecord{Thread: r.t.Key(), Event: event, Kind: kind, Text: text}); err != nil {
		return err
	}
	if kind == "say" {
		r.o.mu.Lock()
		r.o.answered[event] = true
		r.o.mu.Unlock()
	}
	return nil
}

func (r threadOutput) Say(ctx context.Context, text string) error {
	return r.write(ctx, "say", text)
}

func (r threadOutput) Status(ctx context.Context, text string) error { return nil }

func (r threadOutput) Notice(ctx context.Context, text string) error {
	return r.write(ctx, "notice", text)
}

// TestFileJournalTornLine checks the crash test's journal survives a line
// cut short by a kill.
func TestFileJournalTornLine(t *testing.T) {
	path := t.TempDir() + "/journal.jsonl"
	j, err := openFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	in := msg("A", "E1", "hi")
	if _, err := j.JournalInbound(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	j.log.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"done":"test`)
	f.Close()

	j, err = openFileJournal(path)
	if err != nil {
		t.Fatalf("openFileJournal(torn) = %v, want the torn line dropped", err)
	}
	defer j.log.Close()
	p, _ := j.PendingInbound(t.Context())
	if len(p) != 1 || p[0].EventID != "E1" {
		t.Errorf("PendingInbound() = %v, want [E1]", p)
	}
	if fresh, _ := j.JournalInbound(t.Context(), in); fresh {
		t.Error("JournalInbound(seen before the crash) = fresh, want duplicate")
	}
}
