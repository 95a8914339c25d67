package slacktest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// httpTarget is where HTTP-mode deliveries go.
type httpTarget struct {
	events, interactive, secret string
	client                      *http.Client
}

// UseHTTP switches deliveries to HTTP mode: events are POSTed as JSON to
// eventsURL and interactions as a form to interactiveURL, each signed with
// secret as Slack signs them. The HTTP response is recorded as the
// delivery's ack before the helper returns.
func (s *Server) UseHTTP(eventsURL, interactiveURL, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.httpMode = &httpTarget{events: eventsURL, interactive: interactiveURL, secret: secret,
		client: &http.Client{Timeout: 10 * time.Second}}
}

// Sign returns the X-Slack-Signature of body sent at ts with secret:
// v0=hex(HMAC-SHA256(secret, "v0:"+ts+":"+body)).
func Sign(secret string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts.Unix())
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// SignRequest sets the X-Slack-Request-Timestamp and X-Slack-Signature
// headers of req for body, as sent at ts.
func SignRequest(req *http.Request, secret string, ts time.Time, body []byte) {
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", Sign(secret, ts, body))
}

// NewEventRequest returns a signed Events API request carrying body, as
// Slack would POST it to target at ts. Tests use it to send forged or stale
// requests (sign with the wrong secret, or an old ts).
func NewEventRequest(target, secret string, ts time.Time, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("slacktest: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	SignRequest(req, secret, ts, body)
	return req, nil
}

// postHTTP delivers one payload in HTTP mode and records the response as
// the ack.
func (s *Server) postHTTP(t *httpTarget, typ string, payload []byte, retry int) Delivery {
	s.mu.Lock()
	id := s.nextIDLocked("http-")
	s.mu.Unlock()
	d := Delivery{EnvelopeID: id, Type: typ, Payload: payload, Retry: retry, Sent: time.Now()}

	target, body, ctype := t.events, payload, "application/json"
	if typ == "interactive" {
		target, ctype = t.interactive, "application/x-www-form-urlencoded"
		body = []byte(url.Values{"payload": {string(payload)}}.Encode())
	}
	ack := Ack{EnvelopeID: id}
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", ctype)
		if retry > 0 {
			req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		SignRequest(req, t.secret, time.Now(), body)
		var resp *http.Response
		if resp, err = t.client.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			ack.Status, ack.Body = resp.StatusCode, string(b)
		}
	}
	if err != nil {
		ack.Body = err.Error()
	}
	ack.At = time.Now()
	s.mu.Lock()
	s.keepAckLocked(ack)
	s.notifyLocked()
	s.mu.Unlock()
	return d
}
