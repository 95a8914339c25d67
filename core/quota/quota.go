// Package quota is each user's share of the bot, counted in one place for
// every adapter: how many messages a person may send a minute, how many
// bytes of text a UTC day, and (on the web) how many live event streams
// they may hold open. A user over a limit is told which one and when they
// may go on; the adapter words it for its platform (a 429 on the web, a
// short reply in Slack and Discord).
package quota

import (
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

// Limiter counts every user's share. It is safe for concurrent use; the
// zero value is not usable: make one with [New].
type Limiter struct {
	limits Limits
	clock  core.Clock
	// interval is the time one message's allowance takes to come back:
	// a minute over PerMinute. The allowance is a token bucket of
	// PerMinute messages, so a burst of PerMinute passes at once.
	interval time.Duration

	mu    sync.Mutex
	users map[string]*usage
	swept time.Time
}

// usage is one user's account.
type usage struct {
	// tat is the theoretical arrival time of GCRA: the user is over the
	// rate while tat - now exceeds the bucket's span.
	tat     time.Time
	day     time.Time // the UTC day bytes counts
	bytes   int64
	streams int
	denied  bool // denied since last allowed (Denial.First)
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
	l := &Limiter{limits: limits, clock: clock, users: map[string]*usage{}}
	if limits.PerMinute > 0 {
		l.interval = time.Minute / time.Duration(limits.PerMinute)
	}
	return l
}

// Limits returns the limits in force, defaults filled in.
func (l *Limiter) Limits() Limits { return l.limits }

// Message counts one message of size bytes from user (a key that names
// the platform and workspace as well as the person), or says why it may
// not be sent; a denied message is not counted.
func (l *Limiter) Message(user string, size int) Denial {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.userLocked(user, now)
	var tat time.Time
	if l.limits.PerMinute > 0 {
		tat = u.tat
		if tat.Before(now) {
			tat = now
		}
		// Allowed while the bucket holds a message: tat may run at most
		// a minute (less one message) ahead of now.
		if ahead := tat.Sub(now); ahead > time.Minute-l.interval {
			return l.denyLocked(u, Denial{Limit: LimitRate, Max: int64(l.limits.PerMinute), RetryAfter: ahead - (time.Minute - l.interval)})
		}
	}
	day := now.UTC().Truncate(24 * time.Hour)
	if !u.day.Equal(day) {
		u.day, u.bytes = day, 0
	}
	if l.limits.BytesPerDay > 0 && u.bytes+int64(size) > l.limits.BytesPerDay {
		return l.denyLocked(u, Denial{Limit: LimitBytes, Max: l.limits.BytesPerDay, RetryAfter: day.Add(24 * time.Hour).Sub(now)})
	}
	if l.limits.PerMinute > 0 {
		u.tat = tat.Add(l.interval)
	}
	u.bytes += int64(size)
	u.denied = false
	return Denial{}
}

// Open takes one of user's live streams; the caller calls release when
// the stream ends. A denied Open has nothing to release.
func (l *Limiter) Open(user string) (release func(), d Denial) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.userLocked(user, now)
	if l.limits.Streams > 0 && u.streams >= l.limits.Streams {
		return nil, l.denyLocked(u, Denial{Limit: LimitStreams, Max: int64(l.limits.Streams), RetryAfter: streamRetry})
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

func (l *Limiter) denyLocked(u *usage, d Denial) Denial {
	d.First = !u.denied
	u.denied = true
	return d
}

// userLocked returns user's account, forgetting once a minute the
// accounts that hold nothing: a user whose allowance is back in full,
// with no stream open and no bytes counted today.
func (l *Limiter) userLocked(user string, now time.Time) *usage {
	if now.Sub(l.swept) >= time.Minute {
		l.swept = now
		day := now.UTC().Truncate(24 * time.Hour)
		for k, u := range l.users {
			if u.streams == 0 && !u.tat.After(now) && (u.bytes == 0 || !u.day.Equal(day)) {
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
