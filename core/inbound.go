package core

import "time"

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
	// Files are the attachments offered to the agent (text files under the
	// adapter's size cap).
	Files []File `json:"files,omitempty"`
	// EventID is the platform's unique event identifier, used to drop
	// duplicates (Slack event_id, Discord message ID).
	EventID string `json:"event_id"`
	// DM is true for a direct message. Memory from a DM is never recalled in
	// a channel.
	DM bool `json:"dm,omitempty"`
	// Roles are the author's platform roles (Discord role IDs), used to
	// decide who may approve a gate.
	Roles []string `json:"roles,omitempty"`
	// At is when the platform says the message was sent.
	At time.Time `json:"at"`
}

// File is an attachment whose text content is offered to the agent.
type File struct {
	Name     string `json:"name"`
	MIMEType string `json:"mime_type,omitempty"`
	Size     int64  `json:"size"`
	// Text is the file's content, empty when the file was declined.
	Text string `json:"text,omitempty"`
}
