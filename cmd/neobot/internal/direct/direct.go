// Package direct is an HTTP/1.1 client transport that writes each request
// and reads its response on the goroutine that sent it.
//
// net/http's Transport gives every connection a reading and a writing
// goroutine, so one request wakes three goroutines several times. A reply
// makes three calls (the status line, the model, the answer), and on a
// machine with more than one core each of those wake-ups also wakes an idle
// core that finds nothing to do: about 15% of the bot's CPU per reply
// (docs/benchmarks.md, "The reply path, fifth pass"). This transport keeps
// idle connections in a pool and nothing else runs between calls.
//
// What net/http's reading goroutine gave for free is done here explicitly:
//
//   - An idle connection the server closed is found before it is used: a
//     non-blocking peek at the socket (MSG_PEEK) sees the end of the stream,
//     or bytes nobody asked for, and the connection is dropped. A request
//     is never sent into a connection known to be dead.
//   - A request whose write failed on a reused connection never reached the
//     server whole, so it is sent again on a new one. A request written
//     whole whose answer never came is sent again only when it is
//     replayable (GET, HEAD, OPTIONS, TRACE, or an Idempotency-Key), as
//     net/http does: a chat.postMessage may have been posted.
//   - A cancelled context interrupts the call through the connection's
//     deadline (context.AfterFunc), and the error is the context's.
//
// Requests it does not handle go to the fallback transport: schemes other
// than http and https, and every request when the environment names a
// proxy (the fallback applies the proxy rules).
package direct

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"syscall"
	"time"
)

// Transport is an http.RoundTripper for HTTP/1.1 over TCP or TLS. Its zero
// value is not usable; build one with New.
type Transport struct {
	fallback    http.RoundTripper
	proxied     bool // the environment names a proxy: everything goes to the fallback
	tls         *tls.Config
	dialer      net.Dialer
	handshake   time.Duration
	maxIdle     int
	idleTimeout time.Duration

	mu   sync.Mutex
	idle map[string][]*conn // by scheme://host:port, most recently used last

	// writers holds the buffers requests are written through: one per
	// request being written, not one per connection.
	writers sync.Pool
}

// writeBuffer holds a model request whole, so it leaves in one write and
// one TLS record.
const writeBuffer = 16 << 10

// Options configures a Transport.
type Options struct {
	// Fallback sends what this transport does not: other schemes, and
	// everything when a proxy is set; nil uses http.DefaultTransport.
	Fallback http.RoundTripper
	// TLS is the client TLS configuration; nil verifies against the
	// system's roots. ALPN always offers http/1.1 only.
	TLS *tls.Config
	// MaxIdlePerHost is how many idle connections to keep per host, at
	// least 2.
	MaxIdlePerHost int
	// IdleTimeout is how long an idle connection is kept; zero means 90 s.
	IdleTimeout time.Duration
	// Getenv tells whether a proxy is set (HTTP_PROXY, HTTPS_PROXY or
	// their lower-case forms); nil uses os.Getenv. The fallback applies
	// the proxy rules, NO_PROXY included.
	Getenv func(string) string
}

// New returns a Transport for opts.
func New(opts Options) *Transport {
	if opts.Fallback == nil {
		opts.Fallback = http.DefaultTransport
	}
	cfg := &tls.Config{}
	if opts.TLS != nil {
		cfg = opts.TLS.Clone()
	}
	cfg.NextProtos = []string{"http/1.1"}
	t := &Transport{
		fallback:    opts.Fallback,
		tls:         cfg,
		dialer:      net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		handshake:   10 * time.Second,
		maxIdle:     max(opts.MaxIdlePerHost, 2),
		idleTimeout: opts.IdleTimeout,
		idle:        make(map[string][]*conn),
	}
	if t.idleTimeout <= 0 {
		t.idleTimeout = 90 * time.Second
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		t.proxied = t.proxied || getenv(k) != ""
	}
	return t
}

// RoundTrip sends req and returns its response. The response body must be
// read to its end or closed; a body read to its end returns the connection
// to the pool.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.proxied || req.URL == nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		return t.fallback.RoundTrip(req)
	}
	ctx := req.Context()
	key := req.URL.Scheme + "://" + hostPort(req.URL)
	for attempt := 0; ; attempt++ {
		c := t.get(key)
		if c == nil {
			var err error
			if c, err = t.dial(ctx, req.URL); err != nil {
				closeBody(req)
				return nil, err
			}
		}
		resp, retry, err := t.exchange(ctx, key, c, req)
		if err == nil {
			return resp, nil
		}
		if !retry || attempt > 0 {
			closeBody(req)
			return nil, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, fmt.Errorf("%w (and the body could not be read again: %v)", err, gerr)
			}
			r2 := *req
			r2.Body = body
			req = &r2
		}
	}
}

// exchange writes req on c and reads the response head. retry reports that
// req may be sent again on a new connection: c was reused and either the
// write failed, or nothing came back and req is replayable.
func (t *Transport) exchange(ctx context.Context, key string, c *conn, req *http.Request) (resp *http.Response, retry bool, err error) {
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error, again bool) (*http.Response, bool, error) {
		stop()
		c.Close()
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, again && c.reused && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil), err
	}
	if err := t.write(c, req); err != nil {
		return fail(fmt.Errorf("direct: write request to %s: %w", key, err), true)
	}
	c.counter.n = 0
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			nothing := c.counter.n == 0
			return fail(fmt.Errorf("direct: read response from %s: %w", key, err), nothing && replayable(req))
		}
		if resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			resp.Body.Close() // 1xx: an interim head; the real one follows
			continue
		}
		break
	}
	keep := !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols
	if resp.Body == http.NoBody {
		t.release(key, c, stop, keep)
		return resp, false, nil
	}
	resp.Body = &body{r: resp.Body, t: t, key: key, c: c, stop: stop, keep: keep, ctx: ctx}
	return resp, false, nil
}

// replayable reports whether req may be sent twice, by net/http's rule.
func replayable(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// hostPort is u's host with its port, the scheme's default when absent.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// dial opens a new connection to u's host, with TLS for https.
func (t *Transport) dial(ctx context.Context, u *url.URL) (*conn, error) {
	addr := hostPort(u)
	nc, err := t.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("direct: dial %s: %w", addr, err)
	}
	tcp, _ := nc.(*net.TCPConn)
	c := &conn{Conn: nc, tcp: tcp}
	if u.Scheme == "https" {
		cfg := t.tls
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName = u.Hostname()
		}
		tc := tls.Client(nc, cfg)
		hctx, cancel := context.WithTimeout(ctx, t.handshake)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("direct: TLS handshake with %s: %w", addr, err)
		}
		c.Conn = tc
	}
	c.counter.r = c.Conn
	c.br = bufio.NewReaderSize(&c.counter, 4096)
	return c, nil
}

// get takes the most recently used live idle connection to key, or nil.
func (t *Transport) get(key string) *conn {
	now := time.Now()
	for {
		t.mu.Lock()
		list := t.idle[key]
		if len(list) == 0 {
			t.mu.Unlock()
			return nil
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[key] = list[:len(list)-1]
		t.mu.Unlock()
		if now.Sub(c.idleSince) < t.idleTimeout && c.br.Buffered() == 0 && c.alive() {
			c.reused = true
			return c
		}
		c.Close()
	}
}

// release ends c's exchange: back to the pool when keep and the exchange
// was not interrupted, closed otherwise.
func (t *Transport) release(key string, c *conn, stop func() bool, keep bool) {
	if !stop() || !keep {
		c.Close() // the context fired: its deadline is on the connection
		return
	}
	c.idleSince = time.Now()
	t.mu.Lock()
	list := t.idle[key]
	if len(list) >= t.maxIdle {
		t.mu.Unlock()
		c.Close()
		return
	}
	t.idle[key] = append(list, c)
	t.mu.Unlock()
}

// CloseIdleConnections closes every pooled connection, and the
// fallback's; http.Client.CloseIdleConnections calls it.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = make(map[string][]*conn)
	t.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.Close()
		}
	}
	if f, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

// conn is one connection with its buffers.
type conn struct {
	net.Conn
	tcp       *net.TCPConn // the socket under TLS, for the liveness peek
	br        *bufio.Reader
	counter   countingReader
	reused    bool
	idleSince time.Time
}

// write sends req whole on c. Request.Write closes the body; a retry gets
// it again from GetBody.
func (t *Transport) write(c *conn, req *http.Request) error {
	bw, _ := t.writers.Get().(*bufio.Writer)
	if bw == nil {
		bw = bufio.NewWriterSize(nil, writeBuffer)
	}
	defer t.writers.Put(bw)
	// Only the connection's Write: bufio would hand a body to a TCP
	// connection's ReadFrom, a second write with a buffer of its own.
	bw.Reset(writeOnly{c.Conn})
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	return err
}

// writeOnly hides everything of a writer but Write.
type writeOnly struct{ w io.Writer }

func (w writeOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

// countingReader counts the bytes read since n was last zeroed, so a read
// error can tell "nothing came back" from "the answer broke off".
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// alive peeks at an idle connection's socket without blocking: an idle
// HTTP/1.1 connection has nothing to read, so the end of the stream (the
// server closed it) or any bytes (a 408, a TLS alert) mean it is done.
func (c *conn) alive() bool {
	if c.tcp == nil {
		return true
	}
	rc, err := c.tcp.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = errors.Is(rerr, syscall.EAGAIN)
		return true
	})
	return err == nil && ok
}

// body is a response body that returns its connection to the pool once
// read to the end.
type body struct {
	r    io.ReadCloser
	t    *Transport
	key  string
	c    *conn
	stop func() bool
	keep bool
	ctx  context.Context

	mu      sync.Mutex
	reading bool
	done    bool
	err     error // returned by reads after done
}

// drainLimit is how much of an unread body Close reads to keep the
// connection; a longer rest closes it.
const drainLimit = 16 << 10

// Read reads from the response. A read that fails because the request's
// context ended returns the context's error.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return 0, b.err
	}
	b.reading = true
	b.mu.Unlock()
	n, err := b.r.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reading = false
	if b.done { // closed while reading
		return n, b.err
	}
	switch {
	case err == io.EOF:
		b.finish(true, io.EOF)
	case err != nil:
		if cerr := b.ctx.Err(); cerr != nil {
			err = cerr
		}
		b.finish(false, err)
	}
	return n, err
}

// Close ends the body. A short unread rest is read so the connection can
// be kept; a read in progress is interrupted by closing the connection.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	if b.reading {
		b.done, b.err = true, errors.New("direct: read on closed response body")
		b.stop()
		b.c.Close()
		return nil
	}
	_, err := io.CopyN(io.Discard, b.r, drainLimit)
	b.finish(err == io.EOF, errors.New("direct: read on closed response body"))
	return nil
}

// finish marks b done and releases its connection; mu is held.
func (b *body) finish(reusable bool, err error) {
	b.done, b.err = true, err
	b.t.release(b.key, b.c, b.stop, b.keep && reusable)
}
