package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// binary is the neobot executable built once by TestMain for the
// end-to-end tests, which drive it as a user would. NEO_TEST_BINARY names
// one built already instead: to measure two builds against each other
// with the same benchmark.
var binary string

func TestMain(m *testing.M) {
	if log := os.Getenv("NEOBOT_WALLET_LOG"); log != "" {
		os.Exit(serveWallet(log, os.Getenv("NEOBOT_WALLET_HOLD"), os.Getenv("NEOBOT_WALLET_DOWN")))
	}
	if log := os.Getenv("NEOBOT_ASKER_LOG"); log != "" {
		os.Exit(serveAsker(log))
	}
	if log := os.Getenv("NEOBOT_SHOP_LOG"); log != "" {
		os.Exit(serveShop(log))
	}
	if binary = os.Getenv("NEO_TEST_BINARY"); binary != "" {
		os.Exit(pgtest.Main(m))
	}
	flag.Parse()
	if testing.Short() {
		os.Exit(pgtest.Main(m)) // no binary: needBinary skips the tests that run it
	}
	dir, err := os.MkdirTemp("", "neobot-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "neobot")
	build := exec.Command("go", "build", "-o", binary, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build neobot: %v\n%s", err, out)
		os.Exit(1)
	}
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

const cheapModel = "test-cheap"

// scriptModel answers the main model's calls from replies, in order, and
// every call of the cheap model (memory write-back, compaction) with an
// empty extraction. A main call past the script fails loudly.
func scriptModel(t *testing.T, srv *llmtest.Server, replies ...llmtest.Reply) {
	t.Helper()
	var mu sync.Mutex
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			t.Errorf("model called once more than scripted; last message: %+v", r.Messages[len(r.Messages)-1])
			return llmtest.Reply{Status: 500, Body: `{"error":{"message":"script exhausted"}}`}
		}
		next := replies[0]
		replies = replies[1:]
		return next
	})
}

// mainRequests returns the recorded calls of the main model.
func mainRequests(srv *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if r.Model != cheapModel {
			out = append(out, r)
		}
	}
	return out
}

// repoRoot is the module root, where make test installs node_modules.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// fsManifest writes a manifest declaring the npm filesystem reference
// server, scoped to dir, with its side effects, and returns its path.
func fsManifest(t *testing.T, dir string) string {
	t.Helper()
	return writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{fsServerSpec(t, "fs", dir)}})
}

// emptyManifest writes a manifest with no servers: only the synthetic tools.
func emptyManifest(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, []byte(`{"did":"did:web:neobot.test:agents:e2e","servers":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// env is the environment of a neobot process under test: PATH and HOME
// from ours (node needs them), everything else explicit.
func env(kv map[string]string) []string {
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NEO_LOG_LEVEL=debug", "NEO_LOG_FORMAT=json", "NEO_SHUTDOWN_GRACE=2s"}
	for k, v := range kv {
		out = append(out, k+"="+v)
	}
	return out
}

// needBinary skips t under -short, the fast inner loop, which does not
// build neobot: every test that runs the binary calls it.
func needBinary(t testing.TB) {
	t.Helper()
	if binary == "" {
		t.Skip("-short: the tests of the built binary run without -short (make test)")
	}
}

// run runs neobot to completion with stdin and returns its output.
func run(t *testing.T, kv map[string]string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	needBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env(kv)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// process is a neobot running in the background.
type process struct {
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // its exit status, valid once done is closed
}

// start runs neobot in the background until stop, kill or the end of the
// test.
func start(t testing.TB, kv map[string]string, args ...string) *process {
	t.Helper()
	needBinary(t)
	cmd := exec.Command(binary, args...)
	cmd.Env = env(kv)
	p := &process{cmd: cmd, output: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	if err := cmd.Start(); err != nil {
		t.Fatalf("start neobot: %v", err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("neobot output:\n%s", p.output.String())
		}
	})
	return p
}

// stop asks neobot to shut down (SIGTERM) and waits for it.
func (p *process) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			t.Errorf("neobot exited with %v after SIGTERM", p.err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("neobot did not stop within 30s of SIGTERM")
		p.kill()
	}
}

// kill stops neobot at once, as a crash would, and waits for it.
func (p *process) kill() {
	p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitHTTP waits until url answers at all.
func waitHTTP(t *testing.T, url string, p *process) {
	t.Helper()
	ctx := waitCtx(t)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never answered: %v\n%s", url, err, p.output.String())
		case <-p.done:
			t.Fatalf("neobot exited: %v\n%s", p.err, p.output.String())
		case <-time.After(20 * time.Millisecond): // polling a port, not timing the bot
		}
	}
}

// systemBlocks answers every main-model request "Ahoy." and keeps the
// system block each was sent: what a turn was told of its place.
type systemBlocks struct {
	mu  sync.Mutex
	all []string
}

func recordSystemBlocks(model *llmtest.Server) *systemBlocks {
	s := &systemBlocks{}
	model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		s.mu.Lock()
		s.all = append(s.all, r.Messages[0].Content)
		s.mu.Unlock()
		return llmtest.Text("Ahoy.")
	})
	return s
}

// last is the system block of the latest main-model request.
func (s *systemBlocks) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) == 0 {
		return ""
	}
	return s.all[len(s.all)-1]
}

// bearerCall makes one request of the HTTP API at base with token, and
// returns the status and body.
func bearerCall(t *testing.T, base, token, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}
