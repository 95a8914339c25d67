package direct

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchServerEnv, set in a test binary's environment, makes
// TestBenchServer serve instead of skipping: BenchmarkRoundTrip runs its
// server in a process of its own, so the CPU it reports is the client's.
const benchServerEnv = "DIRECT_BENCH_SERVER"

// TestBenchServer is BenchmarkRoundTrip's server, run in a child process:
// a TLS server on loopback that answers every request like Slack's
// chat.postMessage, printing its URL and serving until its stdin closes.
func TestBenchServer(t *testing.T) {
	if os.Getenv(benchServerEnv) == "" {
		t.Skip("BenchmarkRoundTrip's server; runs only in the benchmark's child process")
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1700000000.000100"}`)
	}))
	defer srv.Close()
	fmt.Println(srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// BenchmarkRoundTrip sends one request at a time over TLS on loopback, as
// a reply does (its status line, the model, the answer), through this
// transport and through net/http's, and reports this process's CPU per
// request (user + system; the server runs in a child process). The
// transport is kept only while it costs measurably less CPU than
// net/http's against the reply's budget of 1.0 ms of CPU
// (docs/budgets.md, "Second implementations").
func BenchmarkRoundTrip(b *testing.B) {
	url := benchServer(b)
	tlsConfig := &tls.Config{InsecureSkipVerify: true} // the child's throwaway certificate
	nethttp := http.DefaultTransport.(*http.Transport).Clone()
	nethttp.TLSClientConfig = tlsConfig
	defer nethttp.CloseIdleConnections()
	ours := New(Options{TLS: tlsConfig, Fallback: nethttp, Getenv: func(string) string { return "" }})
	defer ours.CloseIdleConnections()

	const body = `{"channel":"C1","thread_ts":"1700000000.000100","text":"Thinking…"}`
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"direct", ours}, {"nethttp", nethttp}} {
		b.Run(tc.name, func(b *testing.B) {
			client := &http.Client{Transport: tc.rt}
			send := func() {
				resp, err := client.Post(url+"/api/chat.postMessage", "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			send() // the connection and its handshake are not what is measured
			before := cpu(b)
			for b.Loop() {
				send()
			}
			b.ReportMetric(float64((cpu(b)-before).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

// benchServer starts TestBenchServer in a child process and returns its URL.
func benchServer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchServer$")
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "https://") {
		b.Fatalf("bench server: %q, %v", line, err)
	}
	return strings.TrimSpace(line)
}

// cpu is this process's user and system CPU time so far.
func cpu(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
