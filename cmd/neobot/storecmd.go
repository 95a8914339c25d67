package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/postgres"
)

// runStore is neobot store: today one verb, copy, which moves a bbolt
// file's contents into PostgreSQL.
func (m *Main) runStore(ctx context.Context, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = append([]string{"copy"}, args...)
	}
	if len(args) == 0 || args[0] != "copy" {
		return errors.New("store: say copy: neobot store copy copies the bbolt file at NEO_DB_PATH into the PostgreSQL database at NEO_DATABASE_URL")
	}
	cfg, _, log, err := m.setup("neobot store copy", args[1:], nil)
	if err != nil {
		return err
	}
	url := cfg.DatabaseURL.Reveal()
	if url == "" {
		return errors.New("store copy: NEO_DATABASE_URL is empty; set it to the PostgreSQL database to copy into (postgres://user:password@host:5432/dbname)")
	}
	from, err := store.Open(cfg.DBPath, store.Options{LockTimeout: 300 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("store copy: NEO_DB_PATH=%s is held by a running neobot; stop it first, so nothing is written after the copy", cfg.DBPath)
	}
	if err != nil {
		return fmt.Errorf("store copy: NEO_DB_PATH=%s: %w", cfg.DBPath, err)
	}
	m.onClose(from.Close)
	to, err := postgres.Open(ctx, url, postgres.Options{Logger: log.With().Str("component", "store").Logger()})
	if err != nil {
		return fmt.Errorf("store copy: NEO_DATABASE_URL (%s): %w", postgres.Describe(url), err)
	}
	m.onClose(to.Close)
	n, err := from.CopyTo(ctx, to)
	if err != nil {
		return fmt.Errorf("store copy from %s to %s: %w", cfg.DBPath, postgres.Describe(url), err)
	}
	fmt.Fprintf(m.Stdout, "Copied %s to %s; both hold:\n\n", cfg.DBPath, postgres.Describe(url))
	tw := tabwriter.NewWriter(m.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	for _, row := range []struct {
		what string
		n    int
	}{
		{"threads", n.Threads}, {"transcript entries", n.Entries}, {"journaled messages", n.Inbound},
		{"of them pending", n.Pending}, {"approval gates", n.Gates}, {"delegations", n.Delegations},
		{"memories", n.Memories}, {"usage rows", n.Usage},
	} {
		fmt.Fprintf(tw, "%d\t  %s\n", row.n, row.what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, "\nStart neobot with NEO_DATABASE_URL set; keep the file until you have checked the conversations.")
	return nil
}
