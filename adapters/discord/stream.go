package discord

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/internal/live"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/core"
)

// writingMark ends every message of an answer still being written, so a
// process that restarts mid-answer finds the unfinished messages and
// removes them (see Tidy) before the resumed turn answers again.
const writingMark = "\n-# ✍️ writing…"

// streamLimit keeps a message, a closing fence and the writing mark under
// Discord's limit.
var streamLimit = sayLimit - utf8.RuneCountInString(writingMark) - len("\n```")

// StreamAnswer shows an answer in thread t while it is written: the
// status message, or the turn's progress message, becomes the answer's
// first message, edited in place at most once per StatusInterval; past
// 2,000 characters it continues in a new message, with code blocks closed
// and reopened across messages. The last message, once final, carries the
// feedback buttons.
func (a *Adapter) StreamAnswer(ctx context.Context, t core.Thread) (core.AnswerStream, error) {
	a.handOver(ctx, t)
	return live.New(a.lines, t.Key(), a.messages(ctx, t), answerRender), nil
}

// messages are the thread's answer messages for the turn in ctx.
func (a *Adapter) messages(ctx context.Context, t core.Thread) messages {
	rate, _ := a.feedbackTurn(ctx)
	return messages{a: a, channel: t.ID, rate: rate}
}

// answerRender renders answers made inert, split under Discord's limit,
// code blocks closed and reopened across messages.
var answerRender = live.Cut(inert, split, sayLimit, streamLimit, writing)

// messages are a channel's answer messages, for live; the last carries
// the feedback buttons for turn rate ("" for none).
type messages struct {
	a       *Adapter
	channel string
	rate    string
}

var _ live.Finisher = messages{}

func (m messages) Post(ctx context.Context, content string) (string, error) {
	msg, err := m.a.send(ctx, m.channel, &discordgo.MessageSend{Content: content, AllowedMentions: answerMentions()})
	if err != nil {
		return "", err
	}
	return msg.ID, nil
}

func (m messages) Edit(ctx context.Context, id, content string) error {
	return m.a.edit(ctx, &discordgo.MessageEdit{Channel: m.channel, ID: id, Content: &content, AllowedMentions: answerMentions()})
}

// PostLast posts the answer's last message, with the feedback buttons.
func (m messages) PostLast(ctx context.Context, content string) (string, error) {
	msg, err := m.a.send(ctx, m.channel, &discordgo.MessageSend{Content: content, AllowedMentions: answerMentions(),
		Components: feedbackRow(m.rate)})
	if err != nil {
		return "", err
	}
	return msg.ID, nil
}

// EditLast edits a message into the answer's last one, with the
// feedback buttons.
func (m messages) EditLast(ctx context.Context, id, content string) error {
	e := &discordgo.MessageEdit{Channel: m.channel, ID: id, Content: &content, AllowedMentions: answerMentions()}
	if row := feedbackRow(m.rate); row != nil {
		e.Components = &row
	}
	return m.a.edit(ctx, e)
}

func (m messages) Delete(ctx context.Context, id string) error {
	return m.a.s.ChannelMessageDelete(m.channel, id, call(ctx))
}

// writing renders a piece of an unfinished answer: code blocks closed,
// and the writing mark.
func writing(piece string) string {
	piece = strings.TrimRight(piece, " \t")
	if f := mdsplit.OpenFence(piece); f != "" {
		piece += "\n" + f
	}
	return piece + writingMark
}
