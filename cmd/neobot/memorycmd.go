package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/neobot/neobot/core/memory"
)

// runMemory is `neobot memory list|search|forget`: what Neo remembers, for
// an operator, by scope.
func (m *Main) runMemory(ctx context.Context, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = append([]string{"list"}, args...) // the flags are the same for every verb
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("memory: say list, search QUERY, or forget [ID...]; scope with --workspace, --user, --channel")
	}
	verb, args := args[0], args[1:]
	var f memory.Filter
	var all bool
	limit := 20
	cfg, rest, _, err := m.setup("neobot memory "+verb, args, func(fs *flag.FlagSet) {
		fs.StringVar(&f.Platform, "platform", "", "only this platform (slack, terminal)")
		fs.StringVar(&f.Workspace, "workspace", "", "only this workspace (Slack team ID); required to forget by scope")
		fs.StringVar(&f.User, "user", "", "only memories about this user ID")
		fs.StringVar(&f.Channel, "channel", "", "only memories of this channel ID")
		fs.IntVar(&limit, "limit", 20, "most results for search")
		fs.BoolVar(&all, "all", false, "forget: every record matching the scope")
	})
	if err != nil {
		return err
	}
	src, err := m.openAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(m.Stdout, 2, 4, 2, ' ', 0)
	defer tw.Flush()
	row := func(r memory.Record) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, scopeOf(r.Scope), r.Kind, oneLine(r.Text))
	}
	switch verb {
	case "list":
		recs, err := src.ListMemory(ctx, f)
		if err != nil {
			return fmt.Errorf("memory list: %w", err)
		}
		for _, r := range recs {
			row(r)
		}
	case "search":
		if len(rest) == 0 {
			return errors.New("memory search: give a query, e.g. neobot memory search --workspace T123 deploy keys")
		}
		hits, err := src.SearchMemory(ctx, f, strings.Join(rest, " "), limit)
		if err != nil {
			return fmt.Errorf("memory search: %w", err)
		}
		for _, h := range hits {
			row(h)
		}
	case "forget":
		if len(rest) == 0 && !all {
			return errors.New("memory forget: give record IDs, or --all with --workspace (and --user/--channel) to forget a whole scope")
		}
		if all && f.Workspace == "" {
			return errors.New("memory forget --all: --workspace is required, so one workspace's memory is never wiped by accident")
		}
		gone, err := src.ForgetMemory(ctx, f, rest)
		if err != nil {
			return fmt.Errorf("memory forget: %w", err)
		}
		for _, r := range gone {
			row(r)
		}
		fmt.Fprintf(tw, "forgot %d record(s)\n", len(gone))
	default:
		return fmt.Errorf("memory: unknown verb %q; say list, search or forget", verb)
	}
	return nil
}

func scopeOf(s memory.Scope) string {
	parts := []string{s.Platform, s.Workspace}
	if s.Channel != "" {
		parts = append(parts, "channel="+s.Channel)
	}
	if s.User != "" {
		parts = append(parts, "user="+s.User)
	}
	if s.DM {
		parts = append(parts, "dm")
	}
	return strings.Join(parts, "/")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}
