// Package intake is the path every chat platform's messages take to the
// conversation hub, written once: whether Neo is part of the thread, the
// operator's allowlists and the sentences that refuse, the journaled
// submit, and what happens when journaling fails. An adapter maps its
// events to a [Message] and keeps only what is truly its own: the event
// shapes, threads, history and downloads.
//
// Nothing slow happens here: attachments and thread history travel as
// references in the Inbound and are read when the turn starts
// (core.Preparer), so a message is journaled before the platform is
// acknowledged.
package intake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/quota"
)

// Submitter takes a user's message for a turn. *conversation.Hub satisfies
// it: Submit returns once the message is journaled; false means a duplicate.
type Submitter interface {
	Submit(ctx context.Context, in core.Inbound) (bool, error)
}

// Threads tells whether Neo is part of a thread, across restarts; the store
// satisfies it.
type Threads interface {
	ThreadKnown(ctx context.Context, t core.Thread) (bool, error)
}

// Stops decides who may stop a thread's turn: *core.Gates, which lets only
// a turn's requester and approvers stop a turn waiting on an approval.
type Stops interface {
	// MayStop errs when it could not tell (a shared store that did not
	// answer): the stop is refused, saying so.
	MayStop(ctx context.Context, t core.Thread, user string, roles []string) (bool, error)
}

// Admins is implemented by a Platform whose administrators may stop any
// turn (Slack workspace admins and owners). IsAdmin is asked only when
// Stops refused, and false when it cannot tell.
type Admins interface {
	IsAdmin(ctx context.Context, user string) bool
}

// The sentences Neo answers with when it won't or can't take a message.
const (
	RefuseUser    = "Sorry, I can only help people my operator has added to my allowlist. Ask them if you'd like access."
	RefuseChannel = "Sorry, I'm not enabled in this channel. You can message me directly, or ask my operator to add this channel."
	Apology       = "Sorry, I couldn't take that message just now. Please send it again in a moment."
	DiskFull      = "Sorry, I can't take new messages right now: my server's disk is full, so nothing new can be saved. " +
		"My operator has to free space first; nothing said before is lost."
	RefuseStop = "Sorry, I can't stop this: it's waiting on an approval or running a long task, and only the person who asked (or, for an approval, an approver or an admin) can stop it. " +
		"Nothing was stopped."
	RefuseStopUnchecked = "Sorry, I couldn't check who may stop this turn (my database did not answer), so nothing was stopped. " +
		"Please try again in a moment."
)

// DefaultMaxText is the longest message text Neo takes, in characters, when
// Limits.MaxText is zero: far more than anyone types, far less than a
// model's window.
const DefaultMaxText = 32 << 10

// DefaultMaxFileBytes is the largest text attachment Neo reads when
// Limits.MaxFileBytes is zero.
const DefaultMaxFileBytes = 256 << 10

// tooLong is the sentence for a message over the cap.
func tooLong(n, max int) string {
	return fmt.Sprintf("That message is too long for me: %d characters, and I read at most %d. Please shorten it, or attach the long part as a text file.", n, max)
}

// Limits are what the operator lets through one chat adapter, set for
// each platform apart (SLACK_ALLOW_USERS, DISCORD_ALLOW_USERS, ...); each
// adapter's Options embeds them. An empty list allows everyone.
type Limits struct {
	// AllowChannels, when set, limits Neo to these channel IDs (a thread
	// counts as its parent channel; DMs are governed by AllowUsers only).
	AllowChannels []string
	// AllowUsers, when set, limits Neo to these user IDs, in DMs too.
	AllowUsers []string
	// MaxText caps a message's text in characters (DefaultMaxText when
	// zero): over it Neo says so in the thread and no turn starts.
	MaxText int
	// Quota is each user's share: messages a minute and bytes a day (nil:
	// no per-user limits). One limiter may serve every adapter; stops are
	// counted apart, so one gets through the author's flood.
	Quota *quota.Limiter
	// MaxFileBytes caps the size of a text attachment Neo reads
	// (DefaultMaxFileBytes when zero; negative reads none).
	MaxFileBytes int64
}

// Refusal returns the sentence refusing m, or "" when the allowlists
// allow it.
func (r Limits) Refusal(m Message) string {
	in := m.Inbound
	if len(r.AllowUsers) > 0 && !slices.Contains(r.AllowUsers, in.User) {
		return RefuseUser
	}
	if in.DM || len(r.AllowChannels) == 0 {
		return ""
	}
	for _, c := range m.Channels {
		if slices.Contains(r.AllowChannels, c) {
			return ""
		}
	}
	return RefuseChannel
}

// Message is one platform message on its way to the hub.
type Message struct {
	// Inbound is the message as the hub will journal it. Its Thread may
	// still change in Platform.Place.
	Inbound core.Inbound
	// Mention is true when the message mentions Neo.
	Mention bool
	// Channels are the IDs an AllowChannels entry may name: the channel,
	// and for a thread its parent too.
	Channels []string
	// Known is true when the adapter already knows Neo is part of the
	// thread (one it started); otherwise Threads is asked when Lookup is set.
	Known bool
	// Lookup asks Threads whether Neo is part of the thread.
	Lookup bool
	// Denial is set by Accept on a message refused as over its author's
	// share (Outcome Limited): which limit, and when to try again.
	Denial quota.Denial
}

// Platform is what the intake needs from an adapter.
type Platform interface {
	// Refuse tells the author why Neo won't answer, as privately as the
	// platform allows.
	Refuse(ctx context.Context, m Message, text string)
	// Place returns the thread an accepted message's conversation lives
	// in, creating it if the platform needs to (a Discord thread started
	// from a mention).
	Place(ctx context.Context, m Message) core.Thread
	// Reply posts text in a thread, as Neo.
	Reply(ctx context.Context, t core.Thread, text string) error
	// Forget drops the event from the adapter's duplicate filter, so a
	// redelivery is taken again.
	Forget(eventID string)
}

// Intake takes messages for one adapter.
type Intake struct {
	Hub     Submitter
	Threads Threads // nil: only mentions, DMs and known threads reach Neo
	Limits
	// Stops, when set, decides who may stop a turn; a "stop" from anyone
	// else is refused privately (Platform.Refuse) and never reaches the
	// hub. Nil lets anyone in the thread stop its turn.
	Stops Stops
	Log   zerolog.Logger
}

// Outcome is what became of a message.
type Outcome int

// Outcomes of [Intake.Accept].
const (
	// Ignored: chatter in a thread Neo is not part of.
	Ignored Outcome = iota
	// Refused: the allowlists keep the author or channel out, the text
	// is over the cap, or the author may not stop the thread's turn; the
	// author was told.
	Refused
	// Accepted: journaled for a turn (or a duplicate of one that was).
	Accepted
	// Failed: the hub could not journal it; the author was asked to send
	// it again.
	Failed
	// Limited: the author is over their share (Message.Denial says
	// which); at the first such message of a run they were told, in
	// words, to slow down and when they can write again. Nothing was
	// journaled.
	Limited
	// Busy: the thread's queue is full; the hub set the message aside
	// and told its author. Nothing was journaled.
	Busy
)

// Accept decides on m and, when Neo should answer it, journals it through
// the hub. It returns m as decided on: Known filled in, and Inbound as
// submitted.
func (k *Intake) Accept(ctx context.Context, m Message, p Platform) (Message, Outcome) {
	in := &m.Inbound
	if !m.Known && m.Lookup && k.Threads != nil {
		known, err := k.Threads.ThreadKnown(ctx, in.Thread)
		if err != nil {
			k.Log.Error().Err(err).Str("thread", in.Thread.Key()).Msg("intake: look up thread")
		}
		m.Known = known
	}
	if !m.Mention && !in.DM && !m.Known {
		return m, Ignored
	}
	if reason := k.Refusal(m); reason != "" {
		p.Refuse(ctx, m, reason)
		return m, Refused
	}
	if k.Quota != nil {
		if d := k.Quota.Message(ctx, userKey(*in), len(in.Text)); d.Denied() {
			m.Denial = d
			if d.First { // once per run of refusals: a flood must not flood the log or the chat
				k.Log.Info().Str("thread", in.Thread.Key()).Str("user", in.User).Str("limit", d.Limit).Msg("intake: a user over their share")
				p.Refuse(ctx, m, d.Sentence())
			}
			return m, Limited
		}
	}
	in.Thread = p.Place(ctx, m)
	if n, max := utf8.RuneCountInString(in.Text), cmp.Or(k.MaxText, DefaultMaxText); n > max {
		k.Log.Info().Str("thread", in.Thread.Key()).Int("chars", n).Msg("intake: message over the text cap")
		if err := p.Reply(ctx, in.Thread, tooLong(n, max)); err != nil {
			k.Log.Warn().Err(err).Str("thread", in.Thread.Key()).Msg("intake: say a message is too long")
		}
		return m, Refused
	}
	if core.IsStop(in.Text) {
		switch ok, err := k.mayStop(ctx, in, p); {
		case err != nil:
			k.Log.Warn().Err(err).Str("thread", in.Thread.Key()).Str("user", in.User).Msg("intake: stop refused: who may stop could not be checked")
			p.Refuse(ctx, m, RefuseStopUnchecked)
			return m, Refused
		case !ok:
			k.Log.Info().Str("thread", in.Thread.Key()).Str("user", in.User).Msg("intake: stop refused: the turn waits on an approval")
			p.Refuse(ctx, m, RefuseStop)
			return m, Refused
		}
	}
	in.FetchContext = in.FetchContext && !m.Known
	if _, err := k.Hub.Submit(ctx, *in); err != nil {
		if errors.Is(err, core.ErrQueueFull) {
			return m, Busy // the hub told the author
		}
		p.Forget(in.EventID)
		k.Log.Error().Err(err).Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("intake: submit message")
		say := Apology
		if errors.Is(err, core.ErrDiskFull) {
			say = DiskFull
		}
		if err := p.Reply(ctx, in.Thread, say); err != nil {
			k.Log.Warn().Err(err).Str("thread", in.Thread.Key()).Msg("intake: apologise for a lost message")
		}
		return m, Failed
	}
	return m, Accepted
}

// userKey names in's author across platforms and workspaces, for the
// quota. A stop has an allowance of its own, so it gets through the
// author's own flood; stops are still counted, as each is journaled.
func userKey(in core.Inbound) string {
	k := UserKey(in.Thread.Platform, in.Thread.Workspace, in.User)
	if core.IsStop(in.Text) {
		k += "#stop"
	}
	return k
}

// UserKey names a person across platforms and workspaces, for the quota:
// what else they send (a web upload) counts in the same share.
func UserKey(platform, workspace, user string) string {
	return platform + "/" + workspace + "/" + user
}

// mayStop reports whether in's author may stop the turn of in's thread:
// Stops allows it, or the platform's admins include them (marked on in,
// for the instance running the turn). It errs when Stops could not tell
// and the author is no admin.
func (k *Intake) mayStop(ctx context.Context, in *core.Inbound, p Platform) (bool, error) {
	if k.Stops == nil {
		return true, nil
	}
	ok, err := k.Stops.MayStop(ctx, in.Thread, in.User, in.Roles)
	if ok {
		return true, nil
	}
	if a, isAdmins := p.(Admins); isAdmins && a.IsAdmin(ctx, in.User) {
		in.AdminStop = true
		return true, nil
	}
	return false, err
}

// Prepare completes a journaled Inbound when its turn starts, for an
// adapter's core.Preparer: history fills Context when the message asks for
// it, and read turns Attachments into Files, naming what it declined in
// the text.
func Prepare(ctx context.Context, in core.Inbound, history func(context.Context, core.Inbound) string,
	read func(context.Context, []core.Attachment) ([]core.File, string)) core.Inbound {
	if in.FetchContext {
		in.Context = history(ctx, in)
		in.FetchContext = false
	}
	if len(in.Attachments) > 0 {
		files, notes := read(ctx, in.Attachments)
		in.Files = append(in.Files, files...)
		if notes != "" {
			in.Text = strings.TrimSpace(in.Text + "\n\n" + notes)
		}
		in.Attachments = nil
	}
	return in
}

// Guard keeps a panic in an event handler from taking the process down
// (and with it every thread, again after each restart while the event is
// redelivered): it logs the panic with its stack, and the event changes
// nothing. Defer it directly in each handler goroutine.
func Guard(log zerolog.Logger, what string) {
	if r := recover(); r != nil {
		log.Error().Str("stack", string(debug.Stack())).Str("panic", fmt.Sprint(r)).Msgf("%s handler panicked; it changed nothing", what)
	}
}
