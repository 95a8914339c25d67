package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A platform API call that hangs ends at the client's deadline, whether
// the head or the body is late.
func TestAPICallEndsAtItsDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // so the server notices the client leave
		if r.URL.Path == "/api/late.body" {
			io.WriteString(w, `{"ok":`)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // hangs until the client gives up
	}))
	defer srv.Close()
	m := &Main{Getenv: func(string) string { return "" }}
	client := func(timeout time.Duration) *http.Client {
		return &http.Client{Transport: apiTransport{platform: "slack", next: m.outbound(&Config{MaxConcurrentTurns: 2}), t: newTelemetry(), timeout: timeout}}
	}

	_, err := client(100*time.Millisecond).Post(srv.URL+"/api/late.head", "application/json", strings.NewReader("{}"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("late head: err = %v, want the deadline", err)
	}
	// Long enough for the head to arrive on a loaded machine.
	resp, err := client(2*time.Second).Post(srv.URL+"/api/late.body", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("late body: %v", err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("late body: read err = %v, want the deadline", err)
	}
}
