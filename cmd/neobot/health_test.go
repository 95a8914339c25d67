package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestServeOps(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stop, err := serveOps(context.Background(), addr, &ops{})
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
	if _, err := serveOps(context.Background(), "not an address", &ops{}); err == nil || !strings.Contains(err.Error(), "NEO_HEALTH_ADDR") {
		t.Errorf("serveOps(bad address) = %v, want an error naming NEO_HEALTH_ADDR", err)
	}
}
