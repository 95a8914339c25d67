package core

import "context"

// PrivateNoticer is a [Reporter] that can tell one person something no one
// else in the thread sees: a Slack ephemeral message, a Discord ephemeral
// reply or direct message. Neo uses it for what must not be posted to a
// shared thread, such as a person's "connect your account" link.
type PrivateNoticer interface {
	PrivateNotice(ctx context.Context, user, text string) error
}
