package core

import (
	"context"
	"strings"
	"time"
)

// Inbound is one message from a person, translated from a platform event.
type Inbound struct {
	// Thread is the conversation the message belongs to.
	Thread Thread `json:"thread"`
	// User is the author's platform user ID.
	User string `json:"user"`
	// UserName is the author's display name, when the platform gives one.
	UserName string `json:"user_name,omitempty"`
	// Text is the message as the user wrote it, bot mention removed.
	Text string `json:"text"`
	// Context holds earlier messages of the thread, fetched once when Neo
	// is first mentioned in the middle of an existing thread; empty after.
	Context string `json:"context,omitempty"`
	// Files are the attachments offered to the agent: text files under
	// the adapter's size cap, and pictures.
	Files []File `json:"files,omitempty"`
	// MessageID is the platform's ID of the message itself (Slack ts,
	// Discord message ID), where EventID names the event that carried it.
	MessageID string `json:"message_id,omitempty"`
	// Attachments are the message's files as the platform describes them,
	// not yet read. They are journaled with the message and read into
	// Files when its turn starts (see [Preparer]), so a slow download
	// never holds up the platform's acknowledgement.
	Attachments []Attachment `json:"attachments,omitempty"`
	// FetchContext asks the platform to fill Context when the turn starts:
	// Neo was mentioned in the middle of a thread it is not part of.
	FetchContext bool `json:"fetch_context,omitempty"`
	// EventID is the platform's unique event identifier, used to drop
	// duplicates (Slack event_id, Discord message ID).
	EventID string `json:"event_id"`
	// DM is true for a direct message. Memory from a DM is never recalled in
	// a channel.
	DM bool `json:"dm,omitempty"`
	// Private is true in a thread only its members can read (a Discord
	// private thread): its memory stays in the thread, never reaching the
	// parent channel.
	Private bool `json:"private,omitempty"`
	// PrivateChannel is true in a channel only its members can read: a
	// Slack private channel or group DM, a Discord channel @everyone
	// cannot view, and the threads in one. Its memory, facts about the
	// author included, stays in the channel. The adapter says whether a
	// place is private; core/memory decides what that means for scope.
	PrivateChannel bool `json:"private_channel,omitempty"`
	// Viewing says, in words, what the person has open in their chat
	// client while they write to Neo (Slack's agent view reports it:
	// "channel #launch"); empty when the platform does not say. It is
	// the person's own context, told to Neo with this message only.
	Viewing string `json:"viewing,omitempty"`
	// Org is the Enterprise Grid organization the thread's workspace
	// belongs to (Slack's enterprise_id, "E0123"), "" outside one: a
	// place's settings may be set for the organization ("slack:E0123"),
	// applying to its workspaces that set none of their own.
	Org string `json:"org,omitempty"`
	// Roles are the author's platform roles (Discord role IDs), used to
	// decide who may approve a gate.
	Roles []string `json:"roles,omitempty"`
	// At is when the platform says the message was sent.
	At time.Time `json:"at"`
	// Redelivered is true when the platform sent the message again because
	// no process acknowledged an earlier delivery: one that died may have
	// started its turn, and left a status line in the thread.
	Redelivered bool `json:"redelivered,omitempty"`
	// AdminStop marks a stop let through because its author administers
	// the workspace (Slack admins and owners may stop any turn): the
	// instance running the turn, which checks a stop another instance
	// received once more, lets it through too.
	AdminStop bool `json:"admin_stop,omitempty"`
}

// File is an attachment whose content is offered to the agent: the text
// of a text file, or the bytes of a picture.
type File struct {
	Name     string `json:"name"`
	MIMEType string `json:"mime_type,omitempty"`
	Size     int64  `json:"size"`
	// Text is the file's content, empty when the file was declined.
	Text string `json:"text,omitempty"`
	// Image is a picture's content, its type found from the bytes (in
	// MIMEType); the agent shows it to a model that sees images and
	// names it to one that does not.
	Image []byte `json:"image,omitempty"`
}

// Attachment is a file a message carries, as the platform describes it.
type Attachment struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MIMEType string `json:"mime_type,omitempty"`
	// Kind is the platform's file type (Slack's filetype) or the name's
	// extension.
	Kind string `json:"kind,omitempty"`
	Size int64  `json:"size"`
	// URL is where the platform serves the content to the bot.
	URL string `json:"url,omitempty"`
}

// Preparer completes a journaled Inbound when its turn starts: it reads
// Attachments into Files and, when FetchContext is set, fills Context.
// Platforms whose messages carry either implement it. Prepare never fails:
// a file it cannot read is named in the text, and missing history leaves
// Context empty.
type Preparer interface {
	Prepare(ctx context.Context, in Inbound) Inbound
}

// IsStop reports whether text is the stop command: "stop" or "cancel" as the
// whole message, any case (every platform and the terminal alike), with surrounding space, trailing "." or "!", and
// a leading mention (<@U123>) ignored.
func IsStop(text string) bool {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "<@") {
		if i := strings.IndexByte(t, '>'); i >= 0 {
			t = t[i+1:]
		}
	}
	t = strings.ToLower(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t), ".!")))
	return t == "stop" || t == "cancel"
}

// Unprepared reports whether in still carries work for a [Preparer]:
// attachments to read or thread history to fetch.
func (in Inbound) Unprepared() bool { return len(in.Attachments) > 0 || in.FetchContext }
