package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Error is a provider's HTTP error, parsed from its structured body when it
// has one. Its text reads like
// "llm: fireworks http 429: Rate limit exceeded (type=rate_limit)".
type Error struct {
	Provider string
	Status   int
	Message  string
	Type     string
	// RetryAfter is the provider's requested wait (Retry-After or
	// retry-after-ms); zero when it gave none.
	RetryAfter time.Duration
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: %s http %d: %s", e.Provider, e.Status, e.Message)
	if e.Type != "" {
		fmt.Fprintf(&b, " (type=%s)", e.Type)
	}
	return b.String()
}

// Transient reports whether retrying the same request may succeed: rate
// limits, timeouts and server-side failures.
func (e *Error) Transient() bool {
	switch {
	case e.Status == http.StatusTooManyRequests, e.Status == http.StatusRequestTimeout,
		e.Status == http.StatusConflict, e.Status == 425:
		return true
	case e.Status >= 500 && e.Status != http.StatusNotImplemented && e.Status != http.StatusHTTPVersionNotSupported:
		return true
	}
	return false
}

// IsTransient reports whether err is worth retrying: HTTP 429 and 5xx, a
// timeout, or a connection reset, refused or cut short. A cancelled context
// is not transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Transient()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// IsUnreachable reports a call that never reached the model's server:
// the connection was refused, or the host is unknown or unroutable.
func IsUnreachable(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.As(err, &dns)
}

// RetryAfter returns the wait the provider asked for, when err carries one.
func RetryAfter(err error) (time.Duration, bool) {
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}

// IsContextLength reports whether err is the provider refusing a request
// for being larger than the model's context window: HTTP 413, or a 400-class
// error whose type or message says so (OpenAI's context_length_exceeded,
// vLLM's "maximum context length", and the like). Only this error, never a
// bad key or an outage, is a reason to compact the thread.
func IsContextLength(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	if e.Status == http.StatusRequestEntityTooLarge {
		return true
	}
	if e.Status < 400 || e.Status >= 500 {
		return false
	}
	text := strings.ToLower(e.Type + " " + e.Message)
	for _, s := range []string{"context_length", "context length", "context window", "maximum context", "too many tokens", "prompt is too long", "reduce the length"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// wireError is the error object of OpenAI-style bodies; Fireworks, Together,
// vLLM and most gateways use the same shape or a subset of it.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (w *wireError) toError(providerName string, status int) *Error {
	e := &Error{Provider: providerName, Status: status, Message: oneLine(w.Message, 300), Type: w.Type}
	code := codeText(w.Code)
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 && status < 300 {
		// An error inside a 2xx body carries the real status as its code.
		e.Status, code = n, ""
	}
	if e.Type == "" {
		e.Type = code
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// parseError builds the *Error for a non-2xx response.
func parseError(providerName string, resp *http.Response, body []byte, now time.Time) *Error {
	e := &Error{Provider: providerName, Status: resp.StatusCode}
	e.Message, e.Type = errorBody(body)
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
		if e.Message == "" {
			e.Message = "status " + strconv.Itoa(resp.StatusCode)
		}
	}
	e.RetryAfter = retryAfter(resp.Header, now)
	return e
}

// errorBody extracts message and type from the body shapes providers use:
// {"error":{"message","type","code"}}, {"error":"text"},
// {"message","type"}, {"detail":"text"}; HTML pages are summarized and
// anything else is excerpted.
func errorBody(body []byte) (message, typ string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return "", ""
	}
	if trimmed[0] == '{' {
		var v struct {
			Error   json.RawMessage `json:"error"`
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Detail  json.RawMessage `json:"detail"`
		}
		if json.Unmarshal(trimmed, &v) == nil {
			if len(v.Error) > 0 && v.Error[0] == '{' {
				var we wireError
				if json.Unmarshal(v.Error, &we) == nil {
					typ = we.Type
					if typ == "" {
						typ = codeText(we.Code)
					}
					return oneLine(we.Message, 300), typ
				}
			}
			if len(v.Error) > 0 && v.Error[0] == '"' {
				var s string
				_ = json.Unmarshal(v.Error, &s)
				return oneLine(s, 300), v.Type
			}
			typ = v.Type
			if typ == "" {
				typ = codeText(v.Code)
			}
			if v.Message != "" {
				return oneLine(v.Message, 300), typ
			}
			if len(v.Detail) > 0 {
				var s string
				if json.Unmarshal(v.Detail, &s) != nil {
					s = string(v.Detail)
				}
				return oneLine(s, 300), typ
			}
		}
	}
	if trimmed[0] == '<' {
		return summarizeHTML(body), ""
	}
	return excerpt(trimmed, 200), ""
}

// codeText renders an error code (string or number) for Error.Type.
func codeText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// retryAfter reads retry-after-ms, then Retry-After as seconds or an HTTP
// date (measured from the response's Date header when present, else now).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f > 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f <= 0 {
			return 0
		}
		return time.Duration(f * float64(time.Second))
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if d, err := http.ParseTime(h.Get("Date")); err == nil {
		now = d
	}
	if wait := at.Sub(now); wait > 0 {
		return wait
	}
	return 0
}

// summarizeHTML describes an HTML error page in a few words: its title, or
// else the start of its text, and its size.
func summarizeHTML(body []byte) string {
	s := string(body)
	lower := strings.ToLower(s)
	title := ""
	if i := strings.Index(lower, "<title>"); i >= 0 {
		rest := s[i+len("<title>"):]
		if j := strings.Index(strings.ToLower(rest), "</title>"); j >= 0 {
			title = rest[:j]
		}
	}
	if strings.TrimSpace(title) == "" {
		title = stripTags(s)
	}
	title = oneLine(title, 80)
	if title == "" {
		return fmt.Sprintf("HTML page (%d bytes)", len(body))
	}
	return fmt.Sprintf("%s (HTML page, %d bytes)", title, len(body))
}

// stripTags drops markup, scripts and styles, keeping text.
func stripTags(s string) string {
	var b strings.Builder
	depth := 0
	skip := ""
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '<':
			lower := strings.ToLower(s[i:min(len(s), i+8)])
			switch {
			case skip == "" && strings.HasPrefix(lower, "<script"):
				skip = "</script"
			case skip == "" && strings.HasPrefix(lower, "<style"):
				skip = "</style"
			case skip != "" && strings.HasPrefix(lower, skip):
				skip = ""
			}
			depth++
		case c == '>' && depth > 0:
			depth--
			b.WriteByte(' ')
		case depth == 0 && skip == "":
			b.WriteByte(c)
		}
	}
	return b.String()
}

// oneLine collapses whitespace and cuts s to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func excerpt(b []byte, n int) string {
	return oneLine(strings.ToValidUTF8(string(b), "\uFFFD"), n)
}
