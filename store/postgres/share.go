package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/neobot/neobot/core/quota"
)

var _ quota.Store = (*DB)(nil)

// TakeShare applies c to person's share in one statement: the row is
// locked while it is read and written, so instances charging one person
// at once are applied one after the other and N instances give one
// limit. The statement is quota's Limits.Take in SQL; a refusal keeps the
// row but for its count of refusals in a row.
func (db *DB) TakeShare(ctx context.Context, person string, now time.Time, limits quota.Limits, c quota.Charge) (quota.Denial, error) {
	interval := limits.Interval() * time.Duration(c.Messages)
	rate := limits.PerMinute > 0 && c.Messages > 0
	day := now.UTC().Truncate(24 * time.Hour)
	fresh := limits.BytesPerDay <= 0 || c.Bytes <= limits.BytesPerDay // a new row's charge fits
	var tat, dayNS, bytes, refused int64
	// yes: c fits (rate, then bytes); used: the bytes of today so far.
	const used = `(CASE WHEN s.day_ns = $6 THEN s.bytes ELSE 0 END)`
	const yes = `((NOT $5::boolean OR GREATEST(s.tat_ns, $2) - $2 <= $4::bigint) AND ($8::bigint <= 0 OR (CASE WHEN s.day_ns = $6 THEN s.bytes ELSE 0 END) + $7 <= $8))`
	err := db.pool.QueryRow(ctx, `
		INSERT INTO neo_shares AS s (person, tat_ns, day_ns, bytes, refused)
		VALUES ($1::text, CASE WHEN $9::boolean THEN $2::bigint + $3::bigint ELSE $2 END, $6::bigint, CASE WHEN $9 THEN $7::bigint ELSE 0 END, CASE WHEN $9 THEN 0 ELSE 1 END)
		ON CONFLICT (person) DO UPDATE SET
			tat_ns = CASE WHEN `+yes+` THEN GREATEST(s.tat_ns, $2) + $3 ELSE s.tat_ns END,
			day_ns = $6,
			bytes = `+used+` + CASE WHEN `+yes+` THEN $7 ELSE 0 END,
			refused = CASE WHEN `+yes+` THEN 0 ELSE s.refused + 1 END
		RETURNING s.tat_ns, s.day_ns, s.bytes, s.refused`,
		person, now.UnixNano(), int64(interval), int64(time.Minute-limits.Interval()), rate, day.UnixNano(), c.Bytes, limits.BytesPerDay, fresh,
	).Scan(&tat, &dayNS, &bytes, &refused)
	if err != nil {
		return quota.Denial{}, fmt.Errorf("postgres: take %s's share: %w", person, err)
	}
	if refused == 0 {
		return quota.Denial{}, nil
	}
	// The row is as it was before c, refusals aside: Take on it refuses
	// c again and says why.
	a := quota.Account{TAT: time.Unix(0, tat), Day: time.Unix(0, dayNS).UTC(), Bytes: bytes, Denied: refused > 1}
	_, d := limits.Take(a, now, c)
	return d, nil
}
