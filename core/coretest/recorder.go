package coretest

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Kind says which Reporter method produced a [Call].
type Kind string

// Reporter methods.
const (
	KindSay    Kind = "say"
	KindStatus Kind = "status"
	KindNotice Kind = "notice"
)

// Call is one recorded Reporter call.
type Call struct {
	Kind Kind
	Text string
}

// Recorder is a core.Reporter that records every call. Tests wait for
// output with [Recorder.WaitSays] (or WaitNotices, WaitStatuses) instead of
// sleeping. The zero value is ready to use.
type Recorder struct {
	mu      sync.Mutex
	calls   []Call
	changed chan struct{} // closed and replaced on every call
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Say records an answer.
func (r *Recorder) Say(ctx context.Context, text string) error {
	r.record(KindSay, text)
	return nil
}

// Status records a progress line.
func (r *Recorder) Status(ctx context.Context, text string) error {
	r.record(KindStatus, text)
	return nil
}

// Notice records a notice.
func (r *Recorder) Notice(ctx context.Context, text string) error {
	r.record(KindNotice, text)
	return nil
}

// Notify records text as a notice; it has the shape of
// delegate.Options.Notify.
func (r *Recorder) Notify(ctx context.Context, text string) {
	r.record(KindNotice, text)
}

// Calls returns every call so far, in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Says returns the texts passed to Say, in order.
func (r *Recorder) Says() []string { return r.texts(KindSay) }

// Statuses returns the texts passed to Status, in order.
func (r *Recorder) Statuses() []string { return r.texts(KindStatus) }

// Notices returns the texts passed to Notice, in order.
func (r *Recorder) Notices() []string { return r.texts(KindNotice) }

// WaitSays blocks until at least n answers were said, then returns them
// all; it returns an error naming what was recorded when ctx ends first.
func (r *Recorder) WaitSays(ctx context.Context, n int) ([]string, error) {
	return r.wait(ctx, KindSay, n)
}

// WaitStatuses is [Recorder.WaitSays] for Status calls.
func (r *Recorder) WaitStatuses(ctx context.Context, n int) ([]string, error) {
	return r.wait(ctx, KindStatus, n)
}

// WaitNotices is [Recorder.WaitSays] for Notice calls.
func (r *Recorder) WaitNotices(ctx context.Context, n int) ([]string, error) {
	return r.wait(ctx, KindNotice, n)
}

func (r *Recorder) record(k Kind, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, Call{Kind: k, Text: text})
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

func (r *Recorder) texts(k Kind) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.textsLocked(k)
}

func (r *Recorder) textsLocked(k Kind) []string {
	var out []string
	for _, c := range r.calls {
		if c.Kind == k {
			out = append(out, c.Text)
		}
	}
	return out
}

func (r *Recorder) wait(ctx context.Context, k Kind, n int) ([]string, error) {
	for {
		r.mu.Lock()
		got := r.textsLocked(k)
		if len(got) >= n {
			r.mu.Unlock()
			return got, nil
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return got, fmt.Errorf("coretest: waiting for %d %s calls, got %d %q: %w", n, k, len(got), got, ctx.Err())
		}
	}
}
