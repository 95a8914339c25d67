package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Message is a message in the fake workspace: posted by a user through an
// event helper, or by the bot through the Web API.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	User     string
	BotID    string
	Text     string
	// Blocks is the Block Kit JSON the message was last posted or edited
	// with, or, for a streamed message, chat.stopStream's blocks (shown at
	// the bottom of the finished message).
	Blocks json.RawMessage
	// Markdown is a streamed message's markdown_text, appended to as it streams.
	Markdown string
	// Streaming is true between chat.startStream and chat.stopStream.
	Streaming bool
	// Chunks are the chunks the stream calls sent, in order (see Tasks).
	Chunks []Chunk
	// Ephemeral marks a chat.postEphemeral message, visible to Recipient only.
	Ephemeral bool
	Recipient string
	// Edits counts chat.update calls on the message.
	Edits int
	// Files are the files shared with the message
	// (files.completeUploadExternal).
	Files []File
}

// FromBot reports whether the bot posted the message.
func (m Message) FromBot() bool { return m.User == BotUserID }

// Button is one button of a message's actions blocks.
type Button struct {
	BlockID  string
	ActionID string
	Text     string
	Value    string
	Style    string
}

type blockJSON struct {
	Type     string          `json:"type"`
	BlockID  string          `json:"block_id"`
	Text     json.RawMessage `json:"text"` // an object, or a string in markdown blocks
	Elements json.RawMessage `json:"elements"`
	Fields   []textJSON      `json:"fields"`
}

type textJSON struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type elementJSON struct {
	Type     string          `json:"type"`
	ActionID string          `json:"action_id"`
	Value    string          `json:"value"`
	Style    string          `json:"style"`
	Text     json.RawMessage `json:"text"` // an object for buttons, a string for mrkdwn elements
}

func (m Message) blocks() []blockJSON {
	var bs []blockJSON
	_ = json.Unmarshal(m.Blocks, &bs)
	return bs
}

// Buttons returns the message's buttons, in order.
func (m Message) Buttons() []Button {
	var out []Button
	for _, b := range m.blocks() {
		if b.Type != "actions" {
			continue
		}
		var els []elementJSON
		_ = json.Unmarshal(b.Elements, &els)
		for _, e := range els {
			if e.Type != "button" {
				continue
			}
			out = append(out, Button{BlockID: b.BlockID, ActionID: e.ActionID, Text: textOf(e.Text), Value: e.Value, Style: e.Style})
		}
	}
	return out
}

// Rendered returns what a person would read: the text of every block
// (sections, headers, context and markdown blocks), else the message's
// text, else its streamed markdown.
func (m Message) Rendered() string {
	var parts []string
	for _, b := range m.blocks() {
		if t := textOf(b.Text); t != "" {
			parts = append(parts, t)
		}
		for _, f := range b.Fields {
			parts = append(parts, f.Text)
		}
		if b.Type == "context" {
			var els []elementJSON
			_ = json.Unmarshal(b.Elements, &els)
			for _, e := range els {
				if t := textOf(e.Text); t != "" {
					parts = append(parts, t)
				}
			}
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n")
	}
	if m.Text != "" {
		return m.Text
	}
	return m.Markdown
}

// textOf returns the text of a text object or of a plain string.
func textOf(raw json.RawMessage) string {
	var t textJSON
	if json.Unmarshal(raw, &t) == nil && t.Text != "" {
		return t.Text
	}
	var str string
	_ = json.Unmarshal(raw, &str)
	return str
}

// BlockTypes returns the types of the message's blocks, in order.
func (m Message) BlockTypes() []string {
	var out []string
	for _, b := range m.blocks() {
		out = append(out, b.Type)
	}
	return out
}

// Unrecorded stops keeping API calls (Calls returns only those made
// before), for long benchmarks, and keeps each ack for a minute or two
// only (long enough for WaitAck and for redelivery to see it). Messages
// are still kept; ForgetThread drops a finished thread's.
func (s *Server) Unrecorded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.UnrecordedLocked()
	s.ackAge, s.ackTurn = time.Minute, time.Now()
}

// keepAckLocked records a, unless an ack of its envelope is kept already.
// An Unrecorded server starts a new generation of acks every ackAge (a
// minute) and drops the one before, so an ack is kept one to two minutes.
func (s *Server) keepAckLocked(a Ack) {
	if _, dup := s.ackLocked(a.EnvelopeID); dup {
		return
	}
	if s.ackAge > 0 && time.Since(s.ackTurn) > s.ackAge {
		s.oldAcks, s.acks, s.ackTurn = s.acks, map[string]Ack{}, time.Now()
	}
	s.acks[a.EnvelopeID] = a
}

// ackLocked returns the ack kept for an envelope.
func (s *Server) ackLocked(id string) (Ack, bool) {
	if a, ok := s.acks[id]; ok {
		return a, true
	}
	a, ok := s.oldAcks[id]
	return a, ok
}

// ForgetThread drops the messages of the thread rooted at ts in channel,
// as if it had never been: for long benchmarks, once a thread is done
// with.
func (s *Server) ForgetThread(channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = slices.DeleteFunc(s.messages, func(m Message) bool {
		return m.Channel == channel && (m.TS == ts || m.ThreadTS == ts)
	})
	s.reindexLocked()
}

// Messages returns every message of the workspace, in posting order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Thread returns the messages of the thread rooted at ts in channel,
// ephemeral ones included, in posting order.
func (s *Server) Thread(channel, ts string) []Message {
	var out []Message
	for _, m := range s.Messages() {
		if m.Channel == channel && (m.TS == ts || m.ThreadTS == ts) {
			out = append(out, m)
		}
	}
	return out
}

// MessageAt returns the message with ts in channel.
func (s *Server) MessageAt(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			return m, true
		}
	}
	return Message{}, false
}

// WaitMessage waits for a message that satisfies pred and returns it as it
// is then. Messages are checked in posting order, including edits made
// since they were posted.
func (s *Server) WaitMessage(ctx context.Context, pred func(Message) bool) (Message, error) {
	var found Message
	err := s.wait(ctx, func() bool {
		for _, m := range s.messages {
			if pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	if err != nil {
		return Message{}, fmt.Errorf("slacktest: wait for message: %w", err)
	}
	return found, nil
}

// WaitMessages waits until cond holds over every message posted so far,
// and returns them.
func (s *Server) WaitMessages(ctx context.Context, cond func([]Message) bool) ([]Message, error) {
	var out []Message
	err := s.wait(ctx, func() bool {
		if cond(s.messages) {
			out = slices.Clone(s.messages)
			return true
		}
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("slacktest: wait for messages: %w", err)
	}
	return out, nil
}

// AddMessage seeds the workspace with a message (history that existed
// before the bot was mentioned) and returns it with its TS filled in.
func (s *Server) AddMessage(m Message) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.TS == "" {
		m.TS = s.nextTSLocked()
	}
	s.addLocked(m)
	s.notifyLocked()
	return m
}

// File is an uploaded file, served to holders of a bot token at its
// url_private_download.
type File struct {
	ID       string
	Name     string
	MIMEType string
	FileType string
	Content  []byte
	// Size is reported in events; len(Content) when zero.
	Size int
}

// AddFile uploads a file and returns it, ready to attach to a [Msg].
func (s *Server) AddFile(name, mimeType string, content []byte) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := File{ID: s.nextIDLocked("F"), Name: name, MIMEType: mimeType, Content: content, Size: len(content)}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		f.FileType = name[i+1:]
	}
	s.files[f.ID] = f
	return f
}

// DownloadURL returns the file's url_private_download on this server.
func (s *Server) DownloadURL(f File) string {
	return s.srv.URL + "/files/" + f.ID + "/" + f.Name
}
