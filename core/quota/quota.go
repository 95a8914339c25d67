// Package quota is each user's share of the bot, counted in one place for
// every adapter: how many messages a person may send a minute, how many
// bytes of text a UTC day, and (on the web) how many live event streams
// they may hold open. A user over a limit is told which one and when they
// may go on; the adapter words it for its platform (a 429 on the web, a
// short reply in Slack and Discord).
package quota

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/neobot/neobot/core"
)

// Defaults for [Limits], used when a field is zero.
const (
	// DefaultPerMinute is how many messages one user may send a minute.
	DefaultPerMinute = 20
	// DefaultBytesPerDay is how many bytes of message text one user may
	// send a UTC day.
	DefaultBytesPerDay = 4 << 20
	// DefaultStreams is how many live event streams one user may hold.
	DefaultStreams = 4
)

// streamRetry is what a user over the stream limit is told to wait: a
// stream ends when its page closes, which no clock can foresee.
const streamRetry = 10 * time.Second

// The limits a [Denial] names.
const (
	LimitRate    = "messages per minute"
	LimitBytes   = "bytes per day"
	LimitStreams = "live event streams"
)

// Limits are the per-user limits; a zero field takes its default and a
// negative one turns that limit off.
type Limits struct {
	PerMinute   int
	BytesPerDay int64
	Streams     int
}

// Denial says why a user may not go on. The zero Denial allows.
type Denial struct {
	// Limit is the limit reached (LimitRate, LimitBytes, LimitStreams),
	// or "" when nothing was denied.
	Limit string
	// Max is the limit's value.
	Max int64
	// RetryAfter is how long until the user may try again.
	RetryAfter time.Duration
	// First is true for the first denial since the user was last
	// allowed: the one worth answering in a chat, where a reply to every
	// message of a flood would be a flood of its own.
	First bool
}

// Denied reports whether d refuses.
func (d Denial) Denied() bool { return d.Limit != "" }

// Seconds is RetryAfter rounded up to whole seconds, at least 1, as a
// Retry-After header carries it.
func (d Denial) Seconds() int {
	return max(int((d.RetryAfter+time.Second-1)/time.Second), 1)
}

// Sentence tells the user, in words, what limit they reached and when
// they can write again.
func (d Denial) Sentence() string {
	switch d.Limit {
	case LimitRate:
		return fmt.Sprintf("You're sending messages faster than I can take them (at most %d a minute). Please slow down; you can write again in %d seconds.", d.Max, d.Seconds())
	case LimitBytes:
		return fmt.Sprintf("You've sent me as much text as I take from one person in a day (%d bytes). You can write again in %s, at midnight UTC.", d.Max, roundUp(d.RetryAfter))
	case LimitStreams:
		return fmt.Sprintf("You already have %d live event streams open, the most one person may hold. Close one, or try again in %d seconds.", d.Max, d.Seconds())
	}
	return ""
}

func roundUp(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d seconds", max(int(d.Seconds()+0.999), 1))
	}
	return (d + time.Minute - 1).Truncate(time.Minute).String()
}

// Account is one user's standing against the message and byte limits,
// as a [Store] keeps it.
type Account struct {
	// TAT is the theoretical arrival time of GCRA: the user is over the
	// rate while TAT - now exceeds the bucket's span.
	TAT time.Time
	// Day is the UTC day Bytes counts.
	Day   time.Time
	Bytes int64
	// Denied is true when the user was denied since last allowed
	// (Denial.First).
	Denied bool
}

// Charge is what one thing a user sends costs: a message is one message
// and its bytes, an upload its bytes alone.
type Charge struct {
	Messages int // 0 or 1
	Bytes    int64
}

// Take applies c to a at now: it returns the account after, and a zero
// Denial when c fits the limits, or the account unchanged but for Denied
// and why c does not fit. Every store applies these rules, so an account
// reads the same in any of them.
func (l Limits) Take(a Account, now time.Time, c Charge) (Account, Denial) {
	interval := l.Interval()
	tat := a.TAT
	if tat.Before(now) {
		tat = now
	}
	if l.PerMinute > 0 && c.Messages > 0 {
		// Allowed while the bucket holds a message: tat may run at most
		// a minute (less one message) ahead of now.
		if ahead := tat.Sub(now); ahead > time.Minute-interval {
			return deny(a, Denial{Limit: LimitRate, Max: int64(l.PerMinute), RetryAfter: ahead - (time.Minute - interval)})
		}
	}
	day := now.UTC().Truncate(24 * time.Hour)
	if !a.Day.Equal(day) {
		a.Day, a.Bytes = day, 0
	}
	if l.BytesPerDay > 0 && a.Bytes+c.Bytes > l.BytesPerDay {
		return deny(a, Denial{Limit: LimitBytes, Max: l.BytesPerDay, RetryAfter: day.Add(24 * time.Hour).Sub(now)})
	}
	if l.PerMinute > 0 && c.Messages > 0 {
		a.TAT = tat.Add(interval * time.Duration(c.Messages))
	}
	a.Bytes += c.Bytes
	a.Denied = false
	return a, Denial{}
}

// Interval is the time one message's allowance takes to come back: a
// minute over PerMinute (0 when the rate is off). The allowance is a
// token bucket of PerMinute messages, so a burst of PerMinute passes at
// once.
func (l Limits) Interval() time.Duration {
	if l.PerMinute <= 0 {
		return 0
	}
	return time.Minute / time.Duration(l.PerMinute)
}

func deny(a Account, d Denial) (Account, Denial) {
	d.First = !a.Denied
	a.Denied = true
	return a, d
}

// Store keeps every user's account where all of neobot's instances see
// it, so that N instances give one limit, not N. Take must be atomic: two
// instances charging one user at once are applied one after the other.
type Store interface {
	// TakeShare applies c to user's account at now under limits
	// ([Limits.Take]) and returns the denial, zero when c was counted.
	TakeShare(ctx context.Context, user string, now time.Time, limits Limits, c Charge) (Denial, error)
}

// Streams keeps live event streams where every instance counts them, so
// that N instances give one limit. A stream ends with the process that
// holds it: the store must forget a dead process's streams by itself.
type Streams interface {
	// OpenStream takes one of user's max live streams and returns its
	// release; ok is false when user holds max already, on any instance.
	OpenStream(ctx context.Context, user string, max int) (release func(), ok bool, err error)
}

// Limiter counts every user's share. It is safe for concurrent use; the
// zero value is not usable: make one with [New].
type Limiter struct {
	limits Limits
	clock  core.Clock
	// store, when set, keeps the accounts instead of this process (see
	// [Limiter.Share]).
	store Store
	// streams, when set, counts live streams instead of this process
	// (see [Limiter.ShareStreams]).
	streams Streams

	mu    sync.Mutex
	users map[string]*usage
	swept time.Time
}

// usage is one user's account in this process.
type usage struct {
	Account
	streams int
}

// New returns a limiter for limits; a nil clock is the real one.
func New(limits Limits, clock core.Clock) *Limiter {
	if limits.PerMinute == 0 {
		limits.PerMinute = DefaultPerMinute
	}
	if limits.BytesPerDay == 0 {
		limits.BytesPerDay = DefaultBytesPerDay
	}
	if limits.Streams == 0 {
		limits.Streams = DefaultStreams
	}
	if clock == nil {
		clock = realClock{}
	}
	return &Limiter{limits: limits, clock: clock, users: map[string]*usage{}}
}

// Share makes l count messages and bytes in s, which every instance
// shares, instead of in this process; live streams are shared apart
// ([Limiter.ShareStreams]). Call it before l is used.
// While s fails (the database is unreachable) l counts in this process,
// so a user is still held to the limits of each instance.
func (l *Limiter) Share(s Store) { l.store = s }

// ShareStreams makes l count live streams in s, which every instance
// shares, instead of in this process. Call it before l is used. While s
// fails, l counts the streams of this process alone.
func (l *Limiter) ShareStreams(s Streams) { l.streams = s }

// Limits returns the limits in force, defaults filled in.
func (l *Limiter) Limits() Limits { return l.limits }

// Message counts one message of size bytes from user (a key that names
// the platform and workspace as well as the person), or says why it may
// not be sent; a denied message is not counted.
func (l *Limiter) Message(ctx context.Context, user string, size int) Denial {
	return l.Take(ctx, user, Charge{Messages: 1, Bytes: int64(size)})
}

// Take counts c against user's share, or says why it does not fit; a
// denied charge is not counted. Uploads are charged their bytes alone.
func (l *Limiter) Take(ctx context.Context, user string, c Charge) Denial {
	now := l.clock.Now()
	if l.store != nil {
		if d, err := l.store.TakeShare(ctx, user, now, l.limits, c); err == nil {
			return d
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.userLocked(user, now)
	var d Denial
	u.Account, d = l.limits.Take(u.Account, now, c)
	return d
}

// Open takes one of user's live streams, counted in the shared store when
// there is one (see [Limiter.ShareStreams]); the caller calls release
// when the stream ends. A denied Open has nothing to release.
func (l *Limiter) Open(ctx context.Context, user string) (release func(), d Denial) {
	if l.streams != nil && l.limits.Streams > 0 {
		if release, ok, err := l.streams.OpenStream(ctx, user, l.limits.Streams); err == nil {
			if ok {
				return release, Denial{}
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			u := l.userLocked(user, l.clock.Now())
			u.Account, d = deny(u.Account, Denial{Limit: LimitStreams, Max: int64(l.limits.Streams), RetryAfter: streamRetry})
			return nil, d
		}
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.userLocked(user, now)
	if l.limits.Streams > 0 && u.streams >= l.limits.Streams {
		var d Denial
		u.Account, d = deny(u.Account, Denial{Limit: LimitStreams, Max: int64(l.limits.Streams), RetryAfter: streamRetry})
		return nil, d
	}
	u.streams++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			u.streams--
		})
	}, Denial{}
}

// userLocked returns user's account, forgetting once a minute the
// accounts that hold nothing: a user whose allowance is back in full,
// with no stream open and no bytes counted today.
func (l *Limiter) userLocked(user string, now time.Time) *usage {
	if now.Sub(l.swept) >= time.Minute {
		l.swept = now
		day := now.UTC().Truncate(24 * time.Hour)
		for k, u := range l.users {
			if u.streams == 0 && !u.TAT.After(now) && (u.Bytes == 0 || !u.Day.Equal(day)) {
				delete(l.users, k)
			}
		}
	}
	u := l.users[user]
	if u == nil {
		u = &usage{}
		l.users[user] = u
	}
	return u
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}
