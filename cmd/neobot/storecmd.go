package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/postgres"
)

// runStore is neobot store: copy (a bbolt file's contents into
// PostgreSQL), backup and restore (of the bbolt file).
func (m *Main) runStore(ctx context.Context, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = append([]string{"copy"}, args...)
	}
	verb := ""
	if len(args) > 0 {
		verb = args[0]
	}
	switch verb {
	case "backup":
		return m.storeBackup(ctx, args[1:])
	case "restore":
		return m.storeRestore(ctx, args[1:])
	case "copy":
	default:
		return errors.New("store: say backup FILE, restore FILE or copy: neobot store backup FILE copies the bbolt file at NEO_DB_PATH, even while the bot runs; restore FILE puts a backup in its place; copy copies it into the PostgreSQL database at NEO_DATABASE_URL")
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
		{"memories", n.Memories}, {"usage rows", n.Usage}, {"ratings", n.Ratings}, {"model postures", n.Postures},
		{"MCP OAuth tokens (still encrypted: keep NEO_SECRET_KEY)", n.MCPTokens},
		{"files (web uploads, tools' files)", n.Files},
		{"Slack installations (still encrypted: keep NEO_SECRET_KEY)", n.SlackInstalls},
	} {
		fmt.Fprintf(tw, "%d\t  %s\n", row.n, row.what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, "\nStart neobot with NEO_DATABASE_URL set; keep the file until you have checked the conversations.")
	return nil
}

// storeLockWait is how long the store commands wait for the database
// file's lock before deciding a bot holds it.
const storeLockWait = 300 * time.Millisecond

// storeBackup is neobot store backup FILE: a consistent copy of the bbolt
// file, taken directly when no bot runs, else through the running bot's
// admin API (its lock keeps other processes out of the file, even
// read-only). The copy is written beside FILE, synced, checked, then
// renamed into place, so FILE is never a half-written backup.
func (m *Main) storeBackup(ctx context.Context, args []string) error {
	cfg, rest, _, err := m.setup("neobot store backup", args, nil)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return errors.New("store backup: name the file to write, as in neobot store backup /data/backups/neobot-2026-11-26.db")
	}
	if cfg.DatabaseURL != "" {
		return errors.New("store backup: NEO_DATABASE_URL is set: back PostgreSQL up with pg_dump or your provider's backups (docs/deploy.md)")
	}
	target := rest[0]
	if same(target, cfg.DBPath) {
		return fmt.Errorf("store backup: %s is NEO_DB_PATH itself; write the backup to another file", target)
	}
	if _, err := os.Stat(cfg.DBPath); err != nil && cfg.AdminURL == "" {
		return fmt.Errorf("store backup: NEO_DB_PATH=%s: %w (to back up a bot on another machine, set NEO_ADMIN_URL and NEO_ADMIN_TOKEN)", cfg.DBPath, err)
	}
	tmp := target + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store backup: %w", err)
	}
	defer os.Remove(tmp) // gone once renamed; left by nothing else
	via, n, err := m.backupInto(ctx, cfg, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store backup of %s: %w", cfg.DBPath, err)
	}
	c, err := store.Verify(ctx, tmp, storeLockWait)
	if err != nil {
		return fmt.Errorf("store backup: the copy does not check out, nothing was written to %s: %w", target, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("store backup: %w", err)
	}
	if err := store.SyncDir(filepath.Dir(target)); err != nil {
		return fmt.Errorf("store backup: %w", err)
	}
	fmt.Fprintf(m.Stdout, "Backed up %s to %s (%s): %d bytes, schema %d, %s.\n", cfg.DBPath, target, via, n, c.Schema, contentsLine(c))
	fmt.Fprintln(m.Stdout, "Restore it with neobot store restore FILE, the bot stopped.")
	return nil
}

// backupInto writes the backup to w: from the file when no bot holds it,
// else from the running bot. It says which.
// A bot on another machine (no file here, NEO_ADMIN_URL set) is asked
// through its admin API too.
func (m *Main) backupInto(ctx context.Context, cfg *Config, w io.Writer) (string, int64, error) {
	if _, err := os.Stat(cfg.DBPath); err == nil {
		db, err := store.Open(cfg.DBPath, store.Options{LockTimeout: storeLockWait})
		if err == nil {
			defer db.Close()
			n, err := db.Backup(ctx, func(int64) (io.Writer, error) { return w, nil })
			return "directly, no bot running", n, err
		}
		if !errors.Is(err, store.ErrLocked) {
			return "", 0, err
		}
	}
	r, err := remoteAdmin(cfg, 0)
	if err != nil {
		return "", 0, err
	}
	n, err := r.Backup(ctx, w)
	return "through the running bot's admin API", n, err
}

// storeRestore is neobot store restore FILE: checks the backup, refuses
// while a bot holds NEO_DB_PATH, and puts the backup in its place.
func (m *Main) storeRestore(ctx context.Context, args []string) error {
	cfg, rest, _, err := m.setup("neobot store restore", args, nil)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return errors.New("store restore: name the backup to restore, as in neobot store restore /data/backups/neobot-2026-11-26.db")
	}
	if cfg.DatabaseURL != "" {
		return errors.New("store restore: NEO_DATABASE_URL is set: restore PostgreSQL with pg_restore or your provider's point-in-time recovery (docs/deploy.md)")
	}
	from := rest[0]
	if same(from, cfg.DBPath) {
		return fmt.Errorf("store restore: %s is NEO_DB_PATH itself", from)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.DBPath), 0o700); err != nil {
		return fmt.Errorf("store restore: %w", err)
	}
	c, kept, err := store.Restore(ctx, from, cfg.DBPath, storeLockWait)
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("store restore: NEO_DB_PATH=%s is held by a running neobot; stop it first (on fly.io: fly machine stop), then restore: %w", cfg.DBPath, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "Restored %s to %s: %d bytes, schema %d, %s.\n", from, cfg.DBPath, c.Size, c.Schema, contentsLine(c))
	if kept != "" {
		fmt.Fprintf(m.Stdout, "The database it replaced is kept as %s; delete it once the bot answers as it should.\n", kept)
	}
	fmt.Fprintln(m.Stdout, "Start neobot.")
	return nil
}

// contentsLine summarizes what Verify read.
func contentsLine(c store.Contents) string {
	keys := 0
	for _, n := range c.Keys {
		keys += n
	}
	return fmt.Sprintf("%d buckets read to the end, %d keys", len(c.Keys), keys)
}

// same reports whether two paths name one file.
func same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	absA, _ := filepath.Abs(a)
	absB, _ := filepath.Abs(b)
	return absA == absB
}
