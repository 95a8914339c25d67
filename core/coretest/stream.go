package coretest

import (
	"context"
	"slices"
	"sync"

	"github.com/neobot/neobot/core"
)

// Streamed is what one answer stream showed: the pieces written, and how
// it ended.
type Streamed struct {
	Writes  []string
	Final   string // Close's text
	Closed  bool
	Aborted bool
}

// StreamRecorder is a Recorder that can also stream answers (a
// core.Streamer). A closed stream's final text is recorded as a Say too:
// it is the answer the user ends up with.
type StreamRecorder struct {
	*Recorder
	mu      sync.Mutex
	streams []*Streamed
}

// NewStreamRecorder returns an empty StreamRecorder.
func NewStreamRecorder() *StreamRecorder { return &StreamRecorder{Recorder: NewRecorder()} }

// StreamAnswer starts recording a stream.
func (r *StreamRecorder) StreamAnswer(ctx context.Context) (core.AnswerStream, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &Streamed{}
	r.streams = append(r.streams, s)
	return &recordedStream{r: r, s: s}, nil
}

// Streams returns a copy of every stream so far, in order.
func (r *StreamRecorder) Streams() []Streamed {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Streamed, len(r.streams))
	for i, s := range r.streams {
		out[i] = *s
		out[i].Writes = slices.Clone(s.Writes)
	}
	return out
}

type recordedStream struct {
	r *StreamRecorder
	s *Streamed
}

func (w *recordedStream) Write(ctx context.Context, text string) error {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	w.s.Writes = append(w.s.Writes, text)
	return nil
}

func (w *recordedStream) Close(ctx context.Context, final string) error {
	w.r.mu.Lock()
	w.s.Final, w.s.Closed = final, true
	w.r.mu.Unlock()
	return w.r.Say(ctx, final)
}

func (w *recordedStream) Abort(ctx context.Context) error {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	w.s.Aborted = true
	return nil
}
