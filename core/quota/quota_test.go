package quota_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/quota"
)

var start = time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)

func TestMessageRate(t *testing.T) {
	ctx := t.Context()
	clock := coretest.NewClock(start)
	l := quota.New(quota.Limits{PerMinute: 20}, clock)
	for i := range 20 {
		if d := l.Message(ctx, "web/alice", 10); d.Denied() {
			t.Fatalf("message %d: Message = %+v, want allowed (a burst of 20 passes)", i+1, d)
		}
	}
	d := l.Message(ctx, "web/alice", 10)
	if d.Limit != quota.LimitRate || !d.First || d.RetryAfter != 3*time.Second {
		t.Fatalf("message 21: Message = %+v, want the rate limit, first, retry after 3s", d)
	}
	if !strings.Contains(d.Sentence(), "slow down") || !strings.Contains(d.Sentence(), "3 seconds") {
		t.Errorf("Sentence() = %q, want it to say slow down and when", d.Sentence())
	}
	if d := l.Message(ctx, "web/alice", 10); !d.Denied() || d.First {
		t.Errorf("message 22: Message = %+v, want denied, not first", d)
	}
	if d := l.Message(ctx, "web/bob", 10); d.Denied() {
		t.Errorf("another user: Message = %+v, want allowed", d)
	}
	clock.Advance(3 * time.Second)
	if d := l.Message(ctx, "web/alice", 10); d.Denied() {
		t.Errorf("after Retry-After: Message = %+v, want allowed", d)
	}
	if d := l.Message(ctx, "web/alice", 10); !d.Denied() || !d.First {
		t.Errorf("next: Message = %+v, want denied again, first since allowed", d)
	}
	clock.Advance(time.Minute)
	for i := range 20 {
		if d := l.Message(ctx, "web/alice", 10); d.Denied() {
			t.Fatalf("a minute later, message %d: Message = %+v, want allowed", i+1, d)
		}
	}
}

func TestMessageBytesPerDay(t *testing.T) {
	ctx := t.Context()
	clock := coretest.NewClock(start) // 22:00 UTC
	l := quota.New(quota.Limits{PerMinute: -1, BytesPerDay: 100 << 10}, clock)
	for i := range 3 {
		if d := l.Message(ctx, "web/alice", 32<<10); d.Denied() {
			t.Fatalf("message %d: Message = %+v, want allowed", i+1, d)
		}
	}
	d := l.Message(ctx, "web/alice", 32<<10)
	if d.Limit != quota.LimitBytes || d.RetryAfter != 2*time.Hour {
		t.Fatalf("fourth 32 KiB message: Message = %+v, want the byte limit, retry after 2h (midnight UTC)", d)
	}
	if !strings.Contains(d.Sentence(), "midnight UTC") {
		t.Errorf("Sentence() = %q, want it to name midnight UTC", d.Sentence())
	}
	if d := l.Message(ctx, "web/alice", 4<<10); d.Denied() {
		t.Errorf("a small message that fits: Message = %+v, want allowed", d)
	}
	clock.Advance(2 * time.Hour)
	if d := l.Message(ctx, "web/alice", 32<<10); d.Denied() {
		t.Errorf("the next UTC day: Message = %+v, want allowed", d)
	}
}

func TestOpenStreams(t *testing.T) {
	ctx := t.Context()
	l := quota.New(quota.Limits{Streams: 2}, coretest.NewClock(start))
	r1, d1 := l.Open(ctx, "web/alice")
	_, d2 := l.Open(ctx, "web/alice")
	if d1.Denied() || d2.Denied() {
		t.Fatalf("Open twice = %+v, %+v, want both allowed", d1, d2)
	}
	_, d := l.Open(ctx, "web/alice")
	if d.Limit != quota.LimitStreams || d.RetryAfter <= 0 {
		t.Fatalf("third Open = %+v, want the stream limit with a retry", d)
	}
	if _, d := l.Open(ctx, "web/bob"); d.Denied() {
		t.Errorf("another user's Open = %+v, want allowed", d)
	}
	r1()
	r1() // twice releases once
	if _, d := l.Open(ctx, "web/alice"); d.Denied() {
		t.Errorf("Open after a release = %+v, want allowed", d)
	}
	if _, d := l.Open(ctx, "web/alice"); !d.Denied() {
		t.Errorf("Open past the limit again = %+v, want denied (a double release counts once)", d)
	}
}

func TestDefaults(t *testing.T) {
	got := quota.New(quota.Limits{}, nil).Limits()
	want := quota.Limits{PerMinute: quota.DefaultPerMinute, BytesPerDay: quota.DefaultBytesPerDay, Streams: quota.DefaultStreams}
	if got != want {
		t.Errorf("New(zero).Limits() = %+v, want %+v", got, want)
	}
}

func BenchmarkMessage(b *testing.B) {
	ctx := b.Context()
	l := quota.New(quota.Limits{}, nil)
	users := make([]string, 1024)
	for i := range users {
		users[i] = fmt.Sprintf("slack/T1/U%d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.Message(ctx, users[i&1023], 100)
		i++
	}
}

// failing is a Store that cannot be reached.
type failing struct{}

func (failing) TakeShare(context.Context, string, time.Time, quota.Limits, quota.Charge) (quota.Denial, error) {
	return quota.Denial{}, errors.New("database unreachable")
}

// TestShareUnreachable: while the shared store fails, the limiter counts
// in its own process: a user is still held to the limits of each
// instance, never let through unlimited.
func TestShareUnreachable(t *testing.T) {
	ctx := t.Context()
	l := quota.New(quota.Limits{PerMinute: 20}, coretest.NewClock(start))
	l.Share(failing{})
	for i := range 20 {
		if d := l.Message(ctx, "web/alice", 10); d.Denied() {
			t.Fatalf("message %d: Message = %+v, want allowed", i+1, d)
		}
	}
	if d := l.Message(ctx, "web/alice", 10); d.Limit != quota.LimitRate {
		t.Errorf("message 21 with the store down: Message = %+v, want the rate limit", d)
	}
}

// sharedStreams is a store of streams two limiters share, as instances
// share their database; down makes it fail.
type sharedStreams struct {
	mu   sync.Mutex
	held map[string]int
	down bool
}

func (s *sharedStreams) OpenStream(_ context.Context, user string, max int) (func(), bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, false, errors.New("database unreachable")
	}
	if s.held[user] >= max {
		return nil, false, nil
	}
	s.held[user]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.held[user]--
	}, true, nil
}

// TestShareStreams: two instances sharing their streams give a user one
// limit, not one each; while the store fails, each instance counts its
// own.
func TestShareStreams(t *testing.T) {
	ctx := t.Context()
	s := &sharedStreams{held: map[string]int{}}
	a := quota.New(quota.Limits{Streams: 2}, coretest.NewClock(start))
	b := quota.New(quota.Limits{Streams: 2}, coretest.NewClock(start))
	a.ShareStreams(s)
	b.ShareStreams(s)
	release, d1 := a.Open(ctx, "web/alice")
	_, d2 := b.Open(ctx, "web/alice")
	if d1.Denied() || d2.Denied() {
		t.Fatalf("one stream on each instance = %+v, %+v, want both allowed", d1, d2)
	}
	for name, l := range map[string]*quota.Limiter{"a": a, "b": b} {
		if _, d := l.Open(ctx, "web/alice"); d.Limit != quota.LimitStreams || d.Max != 2 {
			t.Errorf("the third stream, on instance %s = %+v, want the stream limit of 2", name, d)
		}
	}
	release()
	if _, d := b.Open(ctx, "web/alice"); d.Denied() {
		t.Errorf("a stream after one ended on the other instance = %+v, want allowed", d)
	}
	s.down = true
	if _, d := a.Open(ctx, "web/alice"); d.Denied() {
		t.Errorf("the store down, a's first stream of its own = %+v, want allowed", d)
	}
}
