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

// The platform API metrics name the API method or route, never a file
// name or other text from a message: each would be a series of its own.
func TestAPIMethodLabelHoldsNoText(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	tests := []struct {
		platform, verb, path string
		want                 string
	}{
		{"slack", "POST", "/api/chat.postMessage", "chat.postMessage"},
		{"slack", "POST", "/api/files.getUploadURLExternal", "files.getUploadURLExternal"},
		{"slack", "POST", "/gateway/slack/api/chat.update", "chat.update"},
		{"slack", "GET", "/files/F0123/q3-layoffs-list.txt", "GET file"},
		{"slack", "GET", "/files-pri/T0123-F0123/download/q3-layoffs-list.txt", "GET file"},
		{"slack", "POST", "/upload/v1/CwABAAAAXAoAAVnX-secret-upload-token", "POST file"},
		{"slack", "POST", "/api/q3-layoffs-list.txt", "POST file"},
		{"discord", "POST", "/api/v9/channels/123456789012/messages", "POST /channels/{id}/messages"},
		{"discord", "PUT", "/api/v9/channels/123456789012/messages/123456789013/reactions/%F0%9F%91%80/@me", "PUT /channels/{id}/messages/{id}/reactions/{id}/@me"},
		{"discord", "PUT", "/api/v9/channels/123456789012/messages/123456789013/reactions/q3layoffs:123456789014/@me", "PUT /channels/{id}/messages/{id}/reactions/{id}/@me"},
		{"discord", "GET", "/attachments/123456789012/123456789013/q3-layoffs-list.txt", "GET file"},
		{"discord", "POST", "/api/v9/webhooks/123456789012/aW50ZXJhY3Rpb246secret", "POST /webhooks"},
	}
	tel := newTelemetry()
	m := &Main{Getenv: func(string) string { return "" }}
	for _, tt := range tests {
		client := tel.apiClient(tt.platform, m.outbound(&Config{MaxConcurrentTurns: 2}))
		req, err := http.NewRequest(tt.verb, srv.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.verb, tt.path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	rec := httptest.NewRecorder()
	tel.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var got []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "neobot_platform_api_calls_total{") {
			got = append(got, line)
		}
	}
	body := strings.Join(got, "\n")
	for _, leak := range []string{"layoffs", "secret", "%F0", "\U0001f440"} {
		if strings.Contains(body, leak) {
			t.Errorf("API call metrics hold %q:\n%s", leak, body)
		}
	}
	for _, tt := range tests {
		want := `{code="200",method="` + tt.want + `",platform="` + tt.platform + `"}`
		if !strings.Contains(body, want) {
			t.Errorf("%s %s %s: no series %s in\n%s", tt.platform, tt.verb, tt.path, want, body)
		}
	}
}
