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
	if out, err := s.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-o", conf, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		return nil, errors.Join(fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log), os.RemoveAll(dir))
	}
	return s, nil
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
