package ops

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestServeOps(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stop, err := (&Server{}).Serve(context.Background(), addr, Production())
	if err != nil {
		t.Fatalf("serveHealth(%s) = %v", addr, err)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("GET /healthz = %d %q, want 200 ok", resp.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Errorf("stop() = %v", err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Errorf("GET /healthz after stop succeeded, want the server gone")
	}
}

func TestServeOpsBadAddress(t *testing.T) {
	if _, err := (&Server{}).Serve(context.Background(), "not an address", Production()); err == nil || !strings.Contains(err.Error(), "NEO_HEALTH_ADDR") {
		t.Errorf("serveOps(bad address) = %v, want an error naming NEO_HEALTH_ADDR", err)
	}
}

// A caller that sends slowly, reads slowly or sits on an idle connection
// cannot hold the ops listener: the server cuts it off.
func TestOpsListenerTimeouts(t *testing.T) {
	tm := Timeouts{ReadHeader: 200 * time.Millisecond, Read: 300 * time.Millisecond, Write: 300 * time.Millisecond, Idle: 300 * time.Millisecond}
	written := make(chan error, 1)
	o := &Server{}
	o.SetAdmin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			io.ReadAll(r.Body)
			return
		}
		// An answer far larger than the socket buffers, to a client that
		// never reads it.
		chunk := make([]byte, 1<<20)
		for range 256 {
			if _, err := w.Write(chunk); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stop, err := o.Serve(ctx, addr, tm)
	if err != nil {
		t.Fatalf("serveOps: %v", err)
	}
	defer stop()

	tests := []struct {
		name string
		send string
	}{
		{"a head that never ends", "GET /healthz HTTP/1.1\r\nHost: x\r\n"},
		{"a body that never ends", "POST /admin/v1/memory/forget HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"ids\":"},
		{"an idle connection", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tt.send); err != nil {
				t.Fatal(err)
			}
			// Long enough for a loaded machine; far beyond the server's
			// own timeouts.
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err = io.Copy(io.Discard, conn)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("the server kept the connection open 10 s, want it closed after its timeouts %+v", tm)
			}
		})
	}
	t.Run("an answer never read", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "GET /admin/v1/export HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-written:
			if err == nil {
				t.Errorf("256 MiB went to a client that reads nothing, want the write cut off")
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the handler still writes after 10 s to a client that reads nothing, want the write cut off after %v", tm.Write)
		}
	})
}
