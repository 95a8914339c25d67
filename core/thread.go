package core

import (
	"fmt"
	"strings"
)

// Thread identifies one conversation: a Slack thread, a Discord thread or
// channel, a terminal session. Its key, platform/workspace/channel/id, is the
// conversation's identity and the prefix of everything stored for it.
type Thread struct {
	// Platform names the adapter that owns the thread: "slack", "discord",
	// "terminal".
	Platform string `json:"platform"`
	// Workspace is the Slack team ID or Discord guild ID. Memory never
	// crosses workspaces.
	Workspace string `json:"workspace"`
	// Channel is the channel (or DM channel) the thread lives in.
	Channel string `json:"channel"`
	// ID is the thread itself: Slack's thread_ts, a Discord thread ID.
	ID string `json:"id"`
}

// Key returns the thread's durable key, platform/workspace/channel/id.
func (t Thread) Key() string {
	return t.Platform + "/" + t.Workspace + "/" + t.Channel + "/" + t.ID
}

// String returns the thread's key.
func (t Thread) String() string { return t.Key() }

// Validate reports whether every part of the thread is present and free of
// the '/' separator.
func (t Thread) Validate() error {
	parts := []struct{ name, value string }{
		{"platform", t.Platform}, {"workspace", t.Workspace}, {"channel", t.Channel}, {"id", t.ID},
	}
	for _, p := range parts {
		if p.value == "" {
			return fmt.Errorf("thread %q: %s is empty", t.Key(), p.name)
		}
		if strings.Contains(p.value, "/") {
			return fmt.Errorf("thread %q: %s %q contains '/'", t.Key(), p.name, p.value)
		}
	}
	return nil
}

// ParseThread parses a key written by [Thread.Key].
func ParseThread(key string) (Thread, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 4 {
		return Thread{}, fmt.Errorf("thread key %q: want platform/workspace/channel/id", key)
	}
	t := Thread{Platform: parts[0], Workspace: parts[1], Channel: parts[2], ID: parts[3]}
	if err := t.Validate(); err != nil {
		return Thread{}, err
	}
	return t, nil
}
