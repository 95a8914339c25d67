package llm_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/llm"
)

func TestEndpointErrorsSayWhatToFix(t *testing.T) {
	notFound := httptest.NewServer(http.NotFoundHandler()) // a base URL without /v1 lands here
	defer notFound.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()

	tests := []struct {
		name, base  string
		want        []string
		unreachable bool
	}{
		{"404", notFound.URL, []string{"http 404", notFound.URL + "/chat/completions was not found", "end in /v1"}, false},
		{"refused", closed, []string{"cannot be reached", "NEO_LLM_BASE_URL", "connection refused"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := llm.New(llm.Config{Model: "local", Provider: "openai-compatible", BaseURL: tt.base})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), ask("hi"))
			if err == nil {
				t.Fatal("Chat = nil error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if llm.IsUnreachable(err) != tt.unreachable {
				t.Errorf("IsUnreachable(%v) = %v, want %v", err, !tt.unreachable, tt.unreachable)
			}
		})
	}
}
