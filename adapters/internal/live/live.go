// Package live shows an answer while the model writes it, the way every
// chat adapter does: the thread's status message becomes the answer at
// once, then is edited in place at the status line's pace; past a
// message's limit the answer continues in new messages; Close makes the
// messages say exactly the final text, the last one finished (a Finisher
// puts the feedback buttons on it), and Abort deletes them. The platform
// calls and renderings stay in the adapter.
package live

import (
	"context"
	"strings"

	"github.com/neobot/neobot/adapters/internal/statusline"
)

// Platform makes the calls: post a message, edit one, delete one.
type Platform interface {
	Post(ctx context.Context, content string) (id string, err error)
	Edit(ctx context.Context, id, content string) error
	Delete(ctx context.Context, id string) error
}

// Finisher is a Platform whose finished answer's last message shows more
// than its text: the feedback buttons under the answer, in the same
// message. PostLast and EditLast stand in for Post and Edit there.
type Finisher interface {
	PostLast(ctx context.Context, content string) (id string, err error)
	EditLast(ctx context.Context, id, content string) error
}

// post posts content, as the finished answer's last message when last.
func post(ctx context.Context, p Platform, content string, last bool) (string, error) {
	if f, ok := p.(Finisher); ok && last {
		return f.PostLast(ctx, content)
	}
	return p.Post(ctx, content)
}

// edit edits message id into content, as the finished answer's last
// message when last.
func edit(ctx context.Context, p Platform, id, content string, last bool) error {
	if f, ok := p.(Finisher); ok && last {
		return f.EditLast(ctx, id, content)
	}
	return p.Edit(ctx, id, content)
}

// Render turns answer text into the contents of its messages.
type Render struct {
	// Final splits a finished answer into messages.
	Final func(text string) []string
	// Writing splits an answer still being written; each piece must leave
	// room for what Mark adds.
	Writing func(text string) []string
	// Mark renders a message of an unfinished answer (closing an open code
	// block, adding a "writing" mark an adapter can find after a crash).
	Mark func(piece string) string
}

// Cut is the Render of answers written in a platform's markup, format,
// and cut by split into messages of at most final characters once done,
// and writing characters while still written (leaving room for what mark
// adds).
func Cut(format func(string) string, split func(string, int) []string, final, writing int, mark func(string) string) Render {
	return Render{
		Final:   func(text string) []string { return split(format(text), final) },
		Writing: func(text string) []string { return split(format(text), writing) },
		Mark:    mark,
	}
}

// Say shows a finished answer, text, at once: the thread's status
// message placeholder ("" for none) becomes its first message, or a new
// one when that edit fails (the status message was deleted). The caller
// holds the thread's status line, cleared. An answer of several messages
// goes out marked as still being written, each message then made final:
// a crash in between leaves marked messages for the adapter to find and
// remove after a restart, and the resumed turn says the whole answer
// again, where the thread would otherwise show its first part as if it
// were all.
func Say(ctx context.Context, p Platform, r Render, placeholder, text string) error {
	pieces := r.Final(text)
	if len(pieces) <= 1 {
		for _, piece := range pieces {
			if _, err := show(ctx, p, placeholder, piece, true); err != nil {
				return err
			}
		}
		return nil
	}
	pieces = r.Writing(text)
	sent := make([]string, len(pieces))
	for i, piece := range pieces {
		id, err := show(ctx, p, placeholder, r.Mark(piece), false)
		if err != nil {
			return err
		}
		sent[i], placeholder = id, ""
	}
	for i, piece := range pieces {
		if err := edit(ctx, p, sent[i], piece, i == len(pieces)-1); err != nil {
			return err
		}
	}
	return nil
}

// show puts content in message id, or in a new message when id is "" or
// cannot be edited, and returns the message's ID; last marks the
// finished answer's last message.
func show(ctx context.Context, p Platform, id, content string, last bool) (string, error) {
	if id != "" && edit(ctx, p, id, content, last) == nil {
		return id, nil
	}
	return post(ctx, p, content, last)
}

// Answer is one answer being written in a thread. T is the adapter's own
// status-line state.
type Answer[T any] struct {
	lines  *statusline.Lines[T]
	key    string
	p      Platform
	render Render

	written strings.Builder
	sent    []string // the answer's messages, in order
	shown   []string // what each message was last set to
}

// New starts an answer in the thread whose status line is lines' key.
func New[T any](lines *statusline.Lines[T], key string, p Platform, r Render) *Answer[T] {
	return &Answer[T]{lines: lines, key: key, p: p, render: r}
}

// Write appends text and shows the answer so far: earlier messages at
// once, the last one at the status line's pace.
func (a *Answer[T]) Write(ctx context.Context, text string) error {
	a.written.WriteString(text)
	pieces := a.render.Writing(a.written.String())
	return a.lines.With(a.key, func(st *statusline.Line[T]) error {
		last := len(pieces) - 1
		for i, p := range pieces[:last] {
			if err := a.set(ctx, st, i, a.render.Mark(p), false); err != nil {
				return err
			}
		}
		return a.set(ctx, st, last, a.render.Mark(pieces[last]), true)
	})
}

// set makes message i show content. A new message is posted, except that
// the first takes over the status message; both show at once. Later
// edits of the last message go through the status line's pace.
func (a *Answer[T]) set(ctx context.Context, st *statusline.Line[T], i int, content string, paced bool) error {
	if i == len(a.sent) {
		id := st.ID()
		if i == 0 && id != "" {
			if err := a.p.Edit(ctx, id, content); err != nil {
				return err
			}
		} else {
			var err error
			if id, err = a.p.Post(ctx, content); err != nil {
				return err
			}
		}
		a.sent, a.shown = append(a.sent, id), append(a.shown, content)
		if paced {
			st.Posted(id)
		}
		return nil
	}
	if a.shown[i] == content {
		return nil
	}
	a.shown[i] = content
	if !paced {
		return a.p.Edit(ctx, a.sent[i], content)
	}
	if st.ID() != a.sent[i] {
		st.Posted(a.sent[i]) // the line now paces this message's edits
	}
	return st.Update(ctx, content, a.p.Edit)
}

// Close makes the answer's messages say exactly final: edited, added to or
// removed. The thread's turn is over: its status line is forgotten.
func (a *Answer[T]) Close(ctx context.Context, final string) error {
	pieces := a.render.Final(final)
	return a.lines.Finish(a.key, func(st *statusline.Line[T]) error {
		st.Clear()
		return Replace(ctx, a.p, a.sent, pieces)
	})
}

// Replace makes messages ids say exactly pieces, the finished answer:
// each edited into its piece, the last one finished (Finisher), pieces
// beyond them posted, messages beyond them deleted.
func Replace(ctx context.Context, p Platform, ids, pieces []string) error {
	for i, piece := range pieces {
		last := i == len(pieces)-1
		if i < len(ids) {
			if err := edit(ctx, p, ids[i], piece, last); err != nil {
				return err
			}
			continue
		}
		if _, err := post(ctx, p, piece, last); err != nil {
			return err
		}
	}
	for _, id := range ids[min(len(pieces), len(ids)):] {
		if err := p.Delete(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// Abort deletes the messages written so far; the next status line starts
// a new message.
func (a *Answer[T]) Abort(ctx context.Context) error {
	return a.lines.With(a.key, func(st *statusline.Line[T]) error {
		st.Clear()
		var first error
		for _, id := range a.sent {
			if err := a.p.Delete(ctx, id); err != nil && first == nil {
				first = err
			}
		}
		a.sent, a.shown = nil, nil
		return first
	})
}
