package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"30"}}, 30 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"negative", http.Header{"Retry-After": {"-5"}}, 0},
		{"http date from now", http.Header{"Retry-After": {now.Add(2 * time.Minute).Format(http.TimeFormat)}}, 2 * time.Minute},
		{"http date from the Date header", http.Header{
			"Date":        {now.Add(-time.Hour).Format(http.TimeFormat)},
			"Retry-After": {now.Add(-time.Hour + 10*time.Second).Format(http.TimeFormat)},
		}, 10 * time.Second},
		{"http date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"retry-after-ms wins", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.header, now); got != tt.want {
				t.Errorf("retryAfter(%v) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestIsTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"429", &Error{Status: 429}, true},
		{"408", &Error{Status: 408}, true},
		{"500", &Error{Status: 500}, true},
		{"503 wrapped", fmt.Errorf("agent: %w", &Error{Status: 503}), true},
		{"529 overloaded", &Error{Status: 529}, true},
		{"501", &Error{Status: 501}, false},
		{"400", &Error{Status: 400}, false},
		{"401", &Error{Status: 401}, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"EOF", fmt.Errorf("x: %w", io.EOF), true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, true},
		{"bad response", fmt.Errorf("llm: x: %w", ErrBadResponse), false},
		{"other", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Provider: "fireworks", Status: 429, Message: "Rate limit exceeded", Type: "rate_limit"}, "llm: fireworks http 429: Rate limit exceeded (type=rate_limit)"},
		{&Error{Provider: "openai-compatible", Status: 500, Message: "Internal Server Error"}, "llm: openai-compatible http 500: Internal Server Error"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestErrorBody(t *testing.T) {
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	tests := []struct {
		name, body, message, typ string
	}{
		{"openai", `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "Incorrect API key provided", "invalid_request_error"},
		{"code only", `{"error":{"message":"Too many requests","code":"rate_limit_exceeded"}}`, "Too many requests", "rate_limit_exceeded"},
		{"string error", `{"error":"model not found"}`, "model not found", ""},
		{"flat", `{"message":"Input validation error","type":"validation"}`, "Input validation error", "validation"},
		{"fastapi detail", `{"detail":"Not Found"}`, "Not Found", ""},
		{"plain text", "upstream request timeout", "upstream request timeout", ""},
		{"multi-line message collapsed", `{"error":{"message":"line one\n\n   line two"}}`, "line one line two", ""},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, typ := errorBody([]byte(tt.body))
			if m != tt.message || typ != tt.typ {
				t.Errorf("errorBody(%q) = %q, %q; want %q, %q", tt.body, m, typ, tt.message, tt.typ)
			}
		})
	}
	if m, _ := errorBody(long); len(m) > 210 {
		t.Errorf("errorBody(5000 bytes) = %d bytes, want an excerpt", len(m))
	}
}

func TestSummarizeHTML(t *testing.T) {
	tests := []struct {
		page, want string
	}{
		{"<html><head><title>502 Bad Gateway</title></head><body>...</body></html>", "502 Bad Gateway (HTML page, 72 bytes)"},
		{"<html><script>var x = '<b>';</script><h1>Oops</h1></html>", "Oops (HTML page, 57 bytes)"},
		{"<html></html>", "HTML page (13 bytes)"},
	}
	for _, tt := range tests {
		if got := summarizeHTML([]byte(tt.page)); got != tt.want {
			t.Errorf("summarizeHTML(%q) = %q, want %q", tt.page, got, tt.want)
		}
	}
}

func TestIsContextLength(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"openai code", &Error{Status: 400, Type: "context_length_exceeded", Message: "too long"}, true},
		{"vllm message", &Error{Status: 400, Message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."}, true},
		{"payload too large", &Error{Status: 413, Message: "Request Entity Too Large"}, true},
		{"anthropic-style wording", &Error{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"}, true},
		{"bad key", &Error{Status: 401, Type: "invalid_api_key", Message: "Incorrect API key provided"}, false},
		{"outage", &Error{Status: 503, Message: "maximum context length unavailable upstream"}, false},
		{"bad request", &Error{Status: 400, Type: "invalid_request_error", Message: "temperature must be <= 2"}, false},
		{"not a provider error", errors.New("context length exceeded"), false},
		{"wrapped", fmt.Errorf("agent: call: %w", &Error{Status: 400, Type: "context_length_exceeded"}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsContextLength(tt.err); got != tt.want {
				t.Errorf("IsContextLength(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
