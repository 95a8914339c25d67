package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	acct "github.com/neobot/neobot/core/usage"
)

// runUsage is `neobot usage [--since 7d] [--by workspace|…]`: the model
// tokens Neo used, grouped, and what they cost at NEO_MODEL_PRICES.
func (m *Main) runUsage(ctx context.Context, args []string) error {
	since, by := "7d", "workspace"
	cfg, _, _, err := m.setup("neobot usage", args, func(fs *flag.FlagSet) {
		fs.StringVar(&since, "since", since, "how far back: 7d, 24h, or a date (2026-11-01); days are UTC")
		fs.StringVar(&by, "by", by, "group by "+strings.Join(acct.Groupings, ", "))
	})
	if err != nil {
		return err
	}
	prices, err := cfg.prices()
	if err != nil {
		return fmt.Errorf("NEO_MODEL_PRICES: %w", err)
	}
	from, err := sinceDay(since, time.Now())
	if err != nil {
		return err
	}
	src, err := m.openAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	rows, err := src.Usage(ctx, from)
	if err != nil {
		return err
	}
	lines, err := acct.Report(rows, by, prices)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(m.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tcalls\tprompt\tcompletion\ttotal\tcost\t\n", strings.ToUpper(by))
	var sum acct.Line
	sum.Priced = true
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", l.Group, l.Calls, l.Prompt, l.Completion, l.Total(), dollars(l))
		sum.Calls, sum.Prompt, sum.Completion = sum.Calls+l.Calls, sum.Prompt+l.Prompt, sum.Completion+l.Completion
		sum.Cost, sum.Priced = sum.Cost+l.Cost, sum.Priced && l.Priced
	}
	fmt.Fprintf(tw, "total since %s\t%d\t%d\t%d\t%d\t%s\t\n", from, sum.Calls, sum.Prompt, sum.Completion, sum.Total(), dollars(sum))
	return tw.Flush()
}

// dollars shows a line's cost, or why there is none.
func dollars(l acct.Line) string {
	switch {
	case l.Total() == 0:
		return "$0.00"
	case !l.Priced && l.Cost == 0:
		return "no price"
	case !l.Priced:
		return fmt.Sprintf("$%.2f+", l.Cost) // some models unpriced
	}
	return fmt.Sprintf("$%.2f", l.Cost)
}

// sinceDay turns --since into the first UTC day to count.
func sinceDay(since string, now time.Time) (string, error) {
	if t, err := time.Parse("2006-01-02", since); err == nil {
		return acct.Day(t), nil
	}
	if n, ok := strings.CutSuffix(since, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days > 0 {
			return acct.Day(now.AddDate(0, 0, -(days - 1))), nil
		}
	}
	if d, err := time.ParseDuration(since); err == nil && d > 0 {
		return acct.Day(now.Add(-d)), nil
	}
	return "", fmt.Errorf("usage: --since %q: give days (7d), a duration (24h) or a date (2026-11-01)", since)
}
