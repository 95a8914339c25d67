package discord

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

// writingMark ends every message of an answer still being written, so a
// process that restarts mid-answer finds the unfinished messages and
// removes them (see Tidy) before the resumed turn answers again.
const writingMark = "\n-# ✍️ writing…"

// streamLimit keeps a message and its writing mark under Discord's limit.
var streamLimit = sayLimit - utf8.RuneCountInString(writingMark) - len("\n```")

// StreamAnswer shows an answer while it is written: the status message
// becomes the answer's first message, edited in place at most once per
// StatusInterval; past 2,000 characters it continues in a new message,
// with code blocks closed and reopened across messages.
func (r reporter) StreamAnswer(ctx context.Context) (core.AnswerStream, error) {
	return &answerStream{a: r.a, t: r.t}, nil
}

// answerStream is one answer being written.
type answerStream struct {
	a       *Adapter
	t       core.Thread
	written strings.Builder
	sent    []string // the answer's messages, in order
	shown   []string // what each message was last set to
}

func (s *answerStream) Write(ctx context.Context, text string) error {
	s.written.WriteString(text)
	chunks := split(inert(s.written.String()), streamLimit)
	return s.a.lines.With(s.t.Key(), func(st *statusline.Line[struct{}]) error {
		last := len(chunks) - 1
		// Earlier messages are complete: they show their text at once.
		for i, c := range chunks[:last] {
			if err := s.set(ctx, st, i, writing(c), false); err != nil {
				return err
			}
		}
		return s.set(ctx, st, last, writing(chunks[last]), true)
	})
}

// set makes message i show content: a new message is posted (the first
// takes over the status message), the last one is edited through the
// status line's pace when paced.
func (s *answerStream) set(ctx context.Context, st *statusline.Line[struct{}], i int, content string, paced bool) error {
	if i == len(s.sent) {
		if i == 0 && st.ID() != "" {
			// The status message becomes the answer at once: the first
			// words do not wait for the status line's pace.
			id := st.ID()
			if err := s.a.edit(ctx, &discordgo.MessageEdit{Channel: s.t.ID, ID: id, Content: &content, AllowedMentions: answerMentions()}); err != nil {
				return err
			}
			s.sent, s.shown = append(s.sent, id), append(s.shown, content)
			st.Posted(id)
			return nil
		} else {
			m, err := s.a.send(ctx, s.t.ID, &discordgo.MessageSend{Content: content, AllowedMentions: answerMentions()})
			if err != nil {
				return err
			}
			s.sent, s.shown = append(s.sent, m.ID), append(s.shown, content)
			if paced {
				st.Posted(m.ID)
			}
			return nil
		}
	}
	if s.shown[i] == content {
		return nil
	}
	s.shown[i] = content
	if !paced {
		return s.a.edit(ctx, &discordgo.MessageEdit{Channel: s.t.ID, ID: s.sent[i], Content: &content, AllowedMentions: answerMentions()})
	}
	if st.ID() != s.sent[i] {
		st.Posted(s.sent[i]) // the line now paces this message's edits
	}
	return st.Update(ctx, content, func(ctx context.Context, id, text string) error {
		return s.a.edit(ctx, &discordgo.MessageEdit{Channel: s.t.ID, ID: id, Content: &text, AllowedMentions: answerMentions()})
	})
}

// Close makes the answer's messages say exactly final: edited, added to or
// removed, and the writing marks gone.
func (s *answerStream) Close(ctx context.Context, final string) error {
	chunks := split(inert(final), sayLimit)
	return s.a.lines.Finish(s.t.Key(), func(st *statusline.Line[struct{}]) error {
		st.Clear()
		for i, c := range chunks {
			if i < len(s.sent) {
				content := c
				if err := s.a.edit(ctx, &discordgo.MessageEdit{Channel: s.t.ID, ID: s.sent[i], Content: &content, AllowedMentions: answerMentions()}); err != nil {
					return err
				}
				continue
			}
			if err := s.a.post(ctx, s.t.ID, &discordgo.MessageSend{Content: c, AllowedMentions: answerMentions()}); err != nil {
				return err
			}
		}
		for _, id := range s.sent[min(len(chunks), len(s.sent)):] {
			if err := s.a.s.ChannelMessageDelete(s.t.ID, id, call(ctx)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Abort deletes the messages written so far.
func (s *answerStream) Abort(ctx context.Context) error {
	return s.a.lines.With(s.t.Key(), func(st *statusline.Line[struct{}]) error {
		st.Clear()
		var first error
		for _, id := range s.sent {
			if err := s.a.s.ChannelMessageDelete(s.t.ID, id, call(ctx)); err != nil && first == nil {
				first = err
			}
		}
		s.sent, s.shown = nil, nil
		return first
	})
}

// writing renders a piece of an unfinished answer: code blocks closed,
// and the writing mark.
func writing(chunk string) string {
	chunk = strings.TrimRight(chunk, " \t")
	fences := 0
	for _, line := range strings.Split(chunk, "\n") {
		if mdsplit.Fence(strings.TrimLeft(line, " \t")) != "" {
			fences++
		}
	}
	if fences%2 == 1 {
		chunk += "\n```"
	}
	return chunk + writingMark
}
