package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/core/quota"
)

// RunShares runs the quota part of the suite: a store that counts
// people's shares for every instance.
func RunShares(t *testing.T, open func(t *testing.T) quota.Store) {
	t.Run("SharesRate", func(t *testing.T) { testSharesRate(t, open(t)) })
	t.Run("SharesBytes", func(t *testing.T) { testSharesBytes(t, open(t)) })
	t.Run("SharesAtomic", func(t *testing.T) { testSharesAtomic(t, open(t)) })
}

var message = quota.Charge{Messages: 1, Bytes: 10}

func testSharesRate(t *testing.T, s quota.Store) {
	ctx := t.Context()
	limits := quota.Limits{PerMinute: 20, BytesPerDay: -1}
	take := func(who string, at time.Time) quota.Denial {
		t.Helper()
		d, err := s.TakeShare(ctx, who, at, limits, message)
		if err != nil {
			t.Fatalf("TakeShare(%s) = %v", who, err)
		}
		return d
	}
	now := epoch
	for i := range 20 {
		if d := take("web/alice", now); d.Denied() {
			t.Fatalf("message %d: TakeShare = %+v, want allowed (a burst of 20 passes)", i+1, d)
		}
	}
	d := take("web/alice", now)
	if d.Limit != quota.LimitRate || !d.First || d.RetryAfter != 3*time.Second {
		t.Fatalf("message 21: TakeShare = %+v, want the rate limit, first, retry after 3s", d)
	}
	if d := take("web/alice", now); !d.Denied() || d.First {
		t.Errorf("message 22: TakeShare = %+v, want denied, not first", d)
	}
	if d := take("web/bob", now); d.Denied() {
		t.Errorf("another person: TakeShare = %+v, want allowed", d)
	}
	now = now.Add(3 * time.Second)
	if d := take("web/alice", now); d.Denied() {
		t.Errorf("after Retry-After: TakeShare = %+v, want allowed", d)
	}
	if d := take("web/alice", now); !d.Denied() || !d.First {
		t.Errorf("next: TakeShare = %+v, want denied again, first since allowed", d)
	}
	upload := quota.Charge{Bytes: 1 << 10}
	if d, err := s.TakeShare(ctx, "web/alice", now, limits, upload); err != nil || d.Denied() {
		t.Errorf("an upload while over the rate: TakeShare = %+v, %v, want allowed (uploads are not messages)", d, err)
	}
	now = now.Add(time.Minute)
	for i := range 20 {
		if d := take("web/alice", now); d.Denied() {
			t.Fatalf("a minute later, message %d: TakeShare = %+v, want allowed", i+1, d)
		}
	}
}

func testSharesBytes(t *testing.T, s quota.Store) {
	ctx := t.Context()
	limits := quota.Limits{PerMinute: -1, BytesPerDay: 100 << 10}
	take := func(c quota.Charge, at time.Time) quota.Denial {
		t.Helper()
		d, err := s.TakeShare(ctx, "web/alice", at, limits, c)
		if err != nil {
			t.Fatalf("TakeShare = %v", err)
		}
		return d
	}
	now := epoch.Truncate(24 * time.Hour).Add(22 * time.Hour)
	if d := take(quota.Charge{Messages: 1, Bytes: 200 << 10}, now); d.Limit != quota.LimitBytes || !d.First {
		t.Fatalf("a first message over the day's bytes: TakeShare = %+v, want the byte limit, first", d)
	}
	for i := range 2 {
		if d := take(quota.Charge{Messages: 1, Bytes: 32 << 10}, now); d.Denied() {
			t.Fatalf("message %d: TakeShare = %+v, want allowed (the refused one counted nothing)", i+1, d)
		}
	}
	if d := take(quota.Charge{Bytes: 32 << 10}, now); d.Denied() {
		t.Fatalf("an upload of 32 KiB: TakeShare = %+v, want allowed", d)
	}
	d := take(quota.Charge{Messages: 1, Bytes: 32 << 10}, now)
	if d.Limit != quota.LimitBytes || d.RetryAfter != 2*time.Hour || !d.First {
		t.Fatalf("fourth 32 KiB (the upload counted): TakeShare = %+v, want the byte limit, first, retry after 2h (midnight UTC)", d)
	}
	if d := take(quota.Charge{Messages: 1, Bytes: 4 << 10}, now); d.Denied() {
		t.Errorf("a small message that fits: TakeShare = %+v, want allowed", d)
	}
	if d := take(quota.Charge{Messages: 1, Bytes: 32 << 10}, now.Add(2*time.Hour)); d.Denied() {
		t.Errorf("the next UTC day: TakeShare = %+v, want allowed", d)
	}
}

// testSharesAtomic charges one person from many goroutines at once, as
// instances do: exactly the limit passes.
func testSharesAtomic(t *testing.T, s quota.Store) {
	ctx := t.Context()
	limits := quota.Limits{PerMinute: 20, BytesPerDay: -1}
	var allowed, refused atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				d, err := s.TakeShare(ctx, "web/alice", epoch, limits, message)
				switch {
				case err != nil:
					t.Errorf("TakeShare = %v", err)
				case d.Denied():
					refused.Add(1)
				default:
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if allowed.Load() != 20 || refused.Load() != 60 {
		t.Errorf("80 messages at once: %d allowed, %d refused, want 20 and 60", allowed.Load(), refused.Load())
	}
}
