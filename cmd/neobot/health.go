package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ops is what the operations endpoints report. The server starts before
// the bot is built, so /healthz answers at once; the bot fills in the
// metrics and the readiness checks as its parts come up.
type ops struct {
	mu      sync.Mutex
	metrics http.Handler
	admin   http.Handler // nil until the bot is built, or without NEO_ADMIN_TOKEN
	oauth   http.Handler // the MCP login callback; nil until the bot is built
	checks  []readyCheck
}

// readyCheck is one condition of readiness. check returns what to show
// and whether it holds; a degraded part that still serves says so with ok
// true.
type readyCheck struct {
	name  string
	check func(ctx context.Context) (detail string, ok bool)
}

// setMetrics serves h at /metrics.
func (o *ops) setMetrics(h http.Handler) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.metrics = h
}

// setAdmin serves h under /admin/.
func (o *ops) setAdmin(h http.Handler) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.admin = h
}

func (o *ops) serveAdmin(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	h := o.admin
	o.mu.Unlock()
	if h == nil {
		http.Error(w, "the admin API is off: set NEO_ADMIN_TOKEN for the bot (it is also off while the bot starts)", http.StatusNotFound)
		return
	}
	h.ServeHTTP(w, r)
}

// setOAuth serves h at the MCP login callback.
func (o *ops) setOAuth(h http.Handler) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.oauth = h
}

func (o *ops) serveOAuth(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	h := o.oauth
	o.mu.Unlock()
	if h == nil {
		http.Error(w, "neobot is starting; reload this page in a moment", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}

// ready adds the checks /readyz runs, in order.
func (o *ops) ready(checks ...readyCheck) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.checks = append(o.checks, checks...)
}

func (o *ops) serveMetrics(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	h := o.metrics
	o.mu.Unlock()
	if h == nil {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}

// isReady runs the readiness checks, for the neobot_ready gauge.
func (o *ops) isReady(ctx context.Context) bool {
	o.mu.Lock()
	checks := o.checks
	o.mu.Unlock()
	return runChecks(ctx, checks, io.Discard)
}

// runChecks runs checks in order, writing a line for each to w, and
// reports whether all held (none yet: starting, not ready).
func runChecks(ctx context.Context, checks []readyCheck, w io.Writer) bool {
	ok := len(checks) > 0
	if !ok {
		io.WriteString(w, "starting\n")
	}
	for _, c := range checks {
		detail, good := c.check(ctx)
		ok = ok && good
		mark := "ok"
		if !good {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %s: %s\n", mark, c.name, detail)
	}
	return ok
}

// serveReady answers 200 when every check holds, else 503; the body has
// one line per check.
func (o *ops) serveReady(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	checks := o.checks
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	var b strings.Builder
	ok := runChecks(ctx, checks, &b)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprint(w, b.String())
}

// opsTimeouts bound how long one caller may hold a connection to the ops
// listener, so a client that sends or reads slowly, or keeps idle
// connections open, cannot use up the server that /healthz, /metrics and
// the admin API share. Nothing on the listener streams: every answer is
// whole within write.
type opsTimeouts struct {
	readHeader, read, write, idle time.Duration
}

// productionOpsTimeouts returns the ops listener's timeouts in
// production: a request arrives within 10 s, its answer leaves within 60 s
// (an admin export of a long thread included), an idle connection closes
// after 2 minutes.
func productionOpsTimeouts() opsTimeouts {
	return opsTimeouts{readHeader: 5 * time.Second, read: 10 * time.Second, write: time.Minute, idle: 2 * time.Minute}
}

// serveOps answers GET /healthz (the process serves), /readyz (the bot
// can take messages: see [ops]) and /metrics on addr until ctx ends, with
// the timeouts tm. It returns once the listener is bound, so a bad address
// fails start-up; the returned stop waits for the server to finish.
func serveOps(ctx context.Context, addr string, o *ops, tm opsTimeouts) (stop func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("NEO_HEALTH_ADDR=%q: listen: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", o.serveReady)
	mux.HandleFunc("GET /metrics", o.serveMetrics)
	mux.HandleFunc("/admin/", o.serveAdmin)
	mux.HandleFunc("GET "+callbackPath, o.serveOAuth)
	mux.HandleFunc("GET "+clientDocPath, o.serveOAuth)
	mux.HandleFunc("GET "+connectPath, o.serveOAuth)
	mux.HandleFunc("GET "+signinPath, o.serveOAuth)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: tm.readHeader, ReadTimeout: tm.read, WriteTimeout: tm.write, IdleTimeout: tm.idle}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
		}
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	return func() error {
		close(stopped)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}, nil
}
