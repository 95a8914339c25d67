// Package pgtest starts a throwaway PostgreSQL server for tests: initdb
// and pg_ctl from the system's PostgreSQL packages, a temporary directory,
// and a unix socket in it, so nothing listens on the network. As root the
// server runs as an unprivileged user (postgres when it exists, else
// nobody), because PostgreSQL refuses to run as root.
//
// One server is shared by a test binary; every [Database] call creates a
// fresh database on it. A test binary that uses it stops the server from
// TestMain with [Main].
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is one running PostgreSQL server.
type Server struct {
	dir  string // data directory and socket directory's parent
	bin  string // directory of initdb and pg_ctl
	cred *syscall.Credential
	dbs  atomic.Int64
}

// ErrNotInstalled reports that no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL is not installed (initdb and pg_ctl not found); install it with `apt-get install postgresql`, or run `make test`, which does")

// Binaries returns the directory holding initdb and pg_ctl: the one on
// PATH, else the newest under /usr/lib/postgresql (where Debian puts them,
// off PATH).
func Binaries() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	best, bestVer := "", 0
	for _, d := range dirs {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(d))))
		if v > bestVer {
			best, bestVer = filepath.Dir(d), v
		}
	}
	if best == "" {
		return "", ErrNotInstalled
	}
	return best, nil
}

// Options tunes a server.
type Options struct {
	// Durable keeps fsync on, for benchmarks and crash tests of the
	// server itself. Tests that only kill clients leave it off: it is the
	// server's disk, not neobot's logic, that fsync protects.
	Durable bool
	// Statements loads pg_stat_statements, so a benchmark can count the
	// statements it sent (see [Server.Counters]), when the server has it
	// (Debian's postgresql package does); else they count zero.
	Statements bool
}

// Start initializes and starts a server in a new temporary directory.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "neobot-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return nil, errors.Join(fmt.Errorf("pgtest: %w", err), os.RemoveAll(dir))
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run(ctx, "initdb", "-D", data, "-U", "neobot", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return nil, errors.Join(fmt.Errorf("pgtest: initdb: %w\n%s", err, out), os.RemoveAll(dir))
	}
	conf := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c max_connections=200 -c shared_buffers=64MB", dir)
	if !opts.Durable {
		conf += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if opts.Statements && s.hasLibrary("pg_stat_statements") {
		conf += " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
	}
	if out, err := s.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-o", conf, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		return nil, errors.Join(fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log), os.RemoveAll(dir))
	}
	return s, nil
}

// hasLibrary reports whether the server's library directory (next to
// its binaries, as Debian and the upstream layout put it, symbolic links
// followed) holds the module name.
func (s *Server) hasLibrary(name string) bool {
	bin, err := filepath.EvalSymlinks(filepath.Join(s.bin, "pg_ctl"))
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(filepath.Dir(bin)), "lib", name+".so"))
	return err == nil
}

// unprivileged returns the user a root test process runs the server as.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("pgtest: running as root and found neither a postgres nor a nobody user to run PostgreSQL as")
}

func (s *Server) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd.CombinedOutput()
}

// URL returns the connection URL of database name on s.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=neobot&sslmode=disable", name, s.dir)
}

// CreateDatabase creates a new empty database and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("neobot_%d", s.dbs.Add(1))
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// Stop stops the server at once and removes its directory.
func (s *Server) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := s.run(ctx, "pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	if err != nil {
		err = fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out)
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

// shared is the test binary's server, started by the first Database call.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Database returns the URL of a fresh database on the test binary's
// shared server, starting it on first use. Without PostgreSQL the test is
// skipped with a message saying how to install it; under CI (CI=true) it
// fails instead.
func Database(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.srv, shared.err = Start(ctx, Options{})
	})
	if errors.Is(shared.err, ErrNotInstalled) && os.Getenv("CI") != "true" {
		t.Skip(shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	url, err := shared.srv.CreateDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// Main runs the tests and stops the shared server after them: call it
// from TestMain as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

// Counters are the server's activity so far: take them before and after
// a run and subtract ([Counters.Sub]). They are exact at once (the
// server's cumulative statistics, like pg_stat_database's commits, are
// published up to a second late, so they are not used).
type Counters struct {
	// Statements is how many statements clients ran in the database
	// (zero unless the server was started with [Options.Statements]).
	Statements int64
	// Writes is how many transactions that wrote something began, in
	// any database: each committed one is a WAL flush before its client
	// hears back (with synchronous_commit on).
	Writes int64
	// WALBytes is the write-ahead log written, over every database.
	WALBytes int64
	// CPU is the processor time the server's processes used (user and
	// system; Linux only, zero elsewhere), to the clock tick (10 ms).
	CPU time.Duration
}

// Sub returns c less earlier.
func (c Counters) Sub(earlier Counters) Counters {
	return Counters{
		Statements: c.Statements - earlier.Statements,
		Writes:     c.Writes - earlier.Writes,
		WALBytes:   c.WALBytes - earlier.WALBytes,
		CPU:        c.CPU - earlier.CPU,
	}
}

// Statement is one statement's text, as pg_stat_statements normalizes
// it, how many times it ran, the time the server spent running it, the
// rows it returned or changed, and the WAL it wrote (its rows and their
// index entries, not the commit's).
type Statement struct {
	Query    string
	Calls    int64
	Time     time.Duration
	Rows     int64
	WALBytes int64
}

// Counters reads the server's activity, and the statements run in the
// database at url.
func (s *Server) Counters(ctx context.Context, url string) (Counters, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return Counters{}, fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var c Counters
	// The next transaction ID counts the transactions that wrote (only
	// they are given one), and the WAL's insert position its bytes.
	err = conn.QueryRow(ctx, `
		SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
			(pg_current_wal_insert_lsn() - '0/0')::bigint`).Scan(&c.Writes, &c.WALBytes)
	if err != nil {
		return Counters{}, fmt.Errorf("pgtest: read counters: %w", err)
	}
	c.CPU = s.cpu()
	statements, err := s.statements(ctx, conn)
	for _, st := range statements {
		c.Statements += st.Calls
	}
	return c, err
}

// Statements returns the statements run in the database at url, most
// run first, when the server was started with [Options.Statements].
func (s *Server) Statements(ctx context.Context, url string) ([]Statement, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return s.statements(ctx, conn)
}

// statements reads pg_stat_statements in conn's database, leaving out
// pgtest's own queries; none when the module is not loaded.
func (s *Server) statements(ctx context.Context, conn *pgx.Conn) ([]Statement, error) {
	var loaded bool
	if err := conn.QueryRow(ctx, `SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'`).Scan(&loaded); err != nil || !loaded {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return nil, fmt.Errorf("pgtest: create pg_stat_statements: %w", err)
	}
	rows, err := conn.Query(ctx, `
		SELECT query, calls, (total_exec_time * 1000)::bigint, rows, wal_bytes::bigint FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND query NOT LIKE '%pg_stat_%' AND query NOT LIKE 'CREATE EXTENSION%'
		ORDER BY calls DESC, query`)
	if err != nil {
		return nil, fmt.Errorf("pgtest: read pg_stat_statements: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Statement, error) {
		var (
			st Statement
			us int64
		)
		err := row.Scan(&st.Query, &st.Calls, &us, &st.Rows, &st.WALBytes)
		st.Time = time.Duration(us) * time.Microsecond
		return st, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgtest: read pg_stat_statements: %w", err)
	}
	return out, nil
}

// cpu is the processor time of the postmaster, its live children, and
// the children it has reaped, read from /proc; zero when it cannot be.
func (s *Server) cpu() time.Duration {
	pidFile, err := os.ReadFile(filepath.Join(s.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pm, _ := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	ticks := func(pid string, reaped bool) (parent int, used int64) {
		raw, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return 0, 0
		}
		// The fields after the command, which is in parentheses and may
		// hold spaces: state, ppid, ... utime (14th), stime, cutime, cstime.
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		if len(f) < 15 {
			return 0, 0
		}
		parent, _ = strconv.Atoi(f[1])
		n := 2
		if reaped {
			n = 4
		}
		for _, v := range f[11 : 11+n] {
			t, _ := strconv.ParseInt(v, 10, 64)
			used += t
		}
		return parent, used
	}
	_, total := ticks(strconv.Itoa(pm), true)
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if parent, used := ticks(p.Name(), false); parent == pm {
			total += used
		}
	}
	return time.Duration(total) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}
