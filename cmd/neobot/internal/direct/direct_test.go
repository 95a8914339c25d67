package direct

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server is an httptest server that counts the connections it accepted
// and the requests it served.
type server struct {
	*httptest.Server
	conns    atomic.Int32
	requests atomic.Int32
}

func newServer(t *testing.T, tlsOn bool, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if tlsOn {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// client returns an http.Client on a direct Transport that trusts s.
func (s *server) client(t *testing.T, fallback http.RoundTripper) (*http.Client, *Transport) {
	t.Helper()
	if fallback == nil {
		fallback = http.DefaultTransport
	}
	opts := Options{Fallback: fallback, Getenv: func(string) string { return "" }}
	if s.TLS != nil {
		opts.TLS = s.Client().Transport.(*http.Transport).TLSClientConfig
	}
	tr := New(opts)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, tr
}

func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
}

func call(t *testing.T, c *http.Client, method, url, body string) string {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, url, err)
	}
	return string(b)
}

func TestRequestsShareOneConnection(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			s := newServer(t, tlsOn, echo)
			c, _ := s.client(t, nil)
			for i := range 5 {
				body := fmt.Sprintf(`{"n":%d}`, i)
				if got, want := call(t, c, "POST", s.URL+"/api/chat.postMessage", body), "POST /api/chat.postMessage "+body; got != want {
					t.Fatalf("answer %d = %q, want %q", i, got, want)
				}
			}
			if n := s.conns.Load(); n != 1 {
				t.Errorf("five calls in a row opened %d connections, want 1", n)
			}
		})
	}
}

// A body the caller stops reading early is read to its end on Close when
// the rest is short, so the connection is kept; a long rest closes it.
func TestClosedBodyKeepsTheConnectionWhenTheRestIsShort(t *testing.T) {
	long := strings.Repeat("x", 4*drainLimit)
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/long" {
			io.WriteString(w, long)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	})
	c, _ := s.client(t, nil)
	get := func(path string) {
		resp, err := c.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("/short")
	get("/short")
	if n := s.conns.Load(); n != 1 {
		t.Fatalf("two unread short bodies used %d connections, want 1", n)
	}
	get("/long")
	get("/short")
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("after an unread long body: %d connections, want 2 (the long body's closed)", n)
	}
}

func TestConnectionCloseIsHonoured(t *testing.T) {
	s := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		echo(w, r)
	})
	c, tr := s.client(t, nil)
	call(t, c, "GET", s.URL+"/a", "")
	call(t, c, "GET", s.URL+"/b", "")
	if n := s.conns.Load(); n != 2 {
		t.Errorf("server said Connection: close, yet %d connections for two calls, want 2", n)
	}
	if n := len(tr.idle); n != 0 {
		t.Errorf("%d hosts with idle connections after Connection: close, want 0", n)
	}
}

// An idle connection the server closed is noticed before it is used, so a
// POST, which is never sent twice, still goes through.
func TestServerClosedIdleConnectionIsNotUsed(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			s := newServer(t, tlsOn, echo)
			c, tr := s.client(t, nil)
			call(t, c, "POST", s.URL+"/one", "1")
			idle := onlyIdle(t, tr)
			s.CloseClientConnections()
			for idle.alive() { // wait for the server's FIN to arrive
				time.Sleep(time.Millisecond)
			}
			if got := call(t, c, "POST", s.URL+"/two", "2"); got != "POST /two 2" {
				t.Fatalf("POST after the server closed the idle connection = %q", got)
			}
			if n := s.conns.Load(); n != 2 {
				t.Errorf("%d connections, want 2", n)
			}
		})
	}
}

func onlyIdle(t *testing.T, tr *Transport) *conn {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var all []*conn
	for _, list := range tr.idle {
		all = append(all, list...)
	}
	if len(all) != 1 {
		t.Fatalf("%d idle connections, want 1", len(all))
	}
	return all[0]
}

// A request written whole whose answer never came is sent again only when
// it is replayable: a POST may have been carried out.
func TestBrokenAnswerRetriedOnlyWhenReplayable(t *testing.T) {
	for _, tc := range []struct {
		method   string
		header   string
		retried  bool
		requests int32
	}{
		{method: "GET", retried: true, requests: 3},
		{method: "POST", retried: false, requests: 2},
		{method: "POST", header: "Idempotency-Key", retried: true, requests: 3},
	} {
		t.Run(tc.method+tc.header, func(t *testing.T) {
			var n atomic.Int32
			s := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 2 { // the second call, on the reused connection
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				echo(w, r)
			})
			c, _ := s.client(t, nil)
			call(t, c, "GET", s.URL+"/first", "")
			req, _ := http.NewRequest(tc.method, s.URL+"/second", strings.NewReader("body"))
			if tc.header != "" {
				req.Header.Set(tc.header, "k1")
			}
			resp, err := c.Do(req)
			if tc.retried {
				if err != nil {
					t.Fatalf("%s was not sent again: %v", tc.method, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if got, want := string(b), tc.method+" /second body"; got != want {
					t.Errorf("retried answer = %q, want %q", got, want)
				}
			} else if err == nil {
				resp.Body.Close()
				t.Fatalf("%s got an answer (%d) from a connection closed without one", tc.method, resp.StatusCode)
			}
			if got := s.requests.Load(); got != tc.requests {
				t.Errorf("server saw %d requests, want %d", got, tc.requests)
			}
		})
	}
}

// The answer of a streaming call arrives piece by piece, as the server
// sends it.
func TestStreamedBodyArrivesAsSent(t *testing.T) {
	next := make(chan struct{})
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-next
		io.WriteString(w, "data: two\n\n")
	})
	c, _ := s.client(t, nil)
	resp, err := c.Get(s.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for _, want := range []string{"data: one\n", "\n"} {
		if line, err := br.ReadString('\n'); err != nil || line != want {
			t.Fatalf("line = %q, %v; want %q", line, err, want)
		}
	}
	close(next)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "data: two\n\n" {
		t.Fatalf("rest = %q, %v", rest, err)
	}
}

func TestCancelledContextEndsTheCall(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 1)
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		if r.URL.Path == "/partial" {
			io.WriteString(w, "data: one\n\n")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	c, _ := s.client(t, nil)

	t.Run("waiting for the head", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/hang", strings.NewReader("x"))
		go func() {
			<-arrived
			cancel()
		}()
		_, err := c.Do(req)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("reading the body", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/partial", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		<-arrived
		defer resp.Body.Close()
		buf := make([]byte, 64)
		if n, err := resp.Body.Read(buf); err != nil || string(buf[:n]) != "data: one\n\n" {
			t.Fatalf("first read = %q, %v", buf[:n], err)
		}
		cancel()
		if _, err := resp.Body.Read(buf); !errors.Is(err, context.Canceled) {
			t.Fatalf("read after cancel: %v, want context.Canceled", err)
		}
	})
}

// Close unblocks a Read waiting on the server, as net/http's bodies do.
func TestCloseInterruptsARead(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "a")
		w.(http.Flusher).Flush()
		<-release
	})
	c, tr := s.client(t, nil)
	resp, err := c.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(buf)
		read <- err
	}()
	for {
		b := resp.Body.(*body)
		b.mu.Lock()
		reading := b.reading
		b.mu.Unlock()
		if reading {
			break
		}
		time.Sleep(time.Millisecond)
	}
	resp.Body.Close()
	if err := <-read; err == nil {
		t.Fatal("read returned no error after Close")
	}
	if n := len(tr.idle); n != 0 {
		t.Errorf("the interrupted connection was pooled (%d hosts idle)", n)
	}
}

// recorder is a fallback transport that answers every request itself.
type recorder struct{ urls []string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.urls = append(r.urls, req.URL.String())
	return &http.Response{StatusCode: 299, Body: http.NoBody, Request: req}, nil
}

func TestFallbackSendsWhatIsNotDirect(t *testing.T) {
	s := newServer(t, false, echo)
	rec := &recorder{}
	proxied := New(Options{Fallback: rec, Getenv: func(k string) string {
		if k == "HTTP_PROXY" {
			return "http://proxy.invalid:3128"
		}
		return ""
	}})
	plain, _ := s.client(t, rec)
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
		url  string
	}{
		{"a proxy is configured", proxied, s.URL + "/x"},
		{"not http", plain.Transport, "ftp://files.invalid/x"},
	} {
		req, _ := http.NewRequest("GET", tc.url, nil)
		resp, err := tc.rt.RoundTrip(req)
		if err != nil || resp.StatusCode != 299 {
			t.Errorf("%s: %v, %v; want the fallback's 299", tc.name, resp, err)
		}
	}
	if s.requests.Load() != 0 {
		t.Errorf("the server saw %d requests; all should have gone to the fallback", s.requests.Load())
	}
	if len(rec.urls) != 2 {
		t.Errorf("fallback saw %v", rec.urls)
	}
}

func TestConcurrentCalls(t *testing.T) {
	s := newServer(t, true, echo)
	c, tr := s.client(t, nil)
	tr.maxIdle = 8
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				body := fmt.Sprintf("%d-%d", g, i)
				if got := call(t, c, "POST", s.URL+"/c", body); got != "POST /c "+body {
					t.Errorf("answer = %q", got)
				}
			}
		})
	}
	wg.Wait()
	if n := s.conns.Load(); n > 8 {
		t.Errorf("200 calls from 8 goroutines opened %d connections, want at most 8", n)
	}
}

func TestDialErrorSaysWhere(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	tr := New(Options{Fallback: http.DefaultTransport, Getenv: func(string) string { return "" }})
	_, err = (&http.Client{Transport: tr}).Get((&url.URL{Scheme: "http", Host: addr}).String())
	if err == nil || !strings.Contains(err.Error(), "dial "+addr) {
		t.Fatalf("err = %v, want it to name the address dialled", err)
	}
}
