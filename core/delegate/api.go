package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Wire shapes of the daemon's async API.
type (
	submitRequest struct {
		Prose        string `json:"prose"`
		Skill        string `json:"skill,omitempty"`
		CallerDID    string `json:"caller_did,omitempty"`
		CallerWallet string `json:"caller_wallet,omitempty"`
	}
	submitResponse struct {
		IntentID string `json:"intent_id"`
		ID       string `json:"id"` // tolerated alias
	}
	pendingGate struct {
		NodeID   string   `json:"node_id"`
		Question string   `json:"question"`
		Options  []string `json:"options"`
	}
	gatesResponse struct {
		Pending []pendingGate `json:"pending"`
	}
	answerRequest struct {
		Approved bool   `json:"approved"`
		Answer   string `json:"answer"`
	}
	statusResponse struct {
		Status string `json:"status"`
		Result *struct {
			Answer string `json:"answer"`
		} `json:"result"`
		Error   json.RawMessage `json:"error"`
		Clarify json.RawMessage `json:"clarify"`
	}
)

// maxBody caps what is read from a daemon response.
const maxBody = 1 << 20

// do sends one request. A non-2xx answer is an *HTTPError; a transport
// failure is returned wrapped. out may be nil.
func (c *Client) do(ctx context.Context, method, path, idemKey string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("delegate: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("delegate: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "neobot")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.did != "" {
		req.Header.Set("X-Caller-DID", c.did)
	}
	if c.wallet != "" {
		req.Header.Set("X-Caller-Wallet", c.wallet)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("delegate: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("delegate: %s %s: read: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &HTTPError{Method: method, Path: path, Status: resp.StatusCode, Message: errorMessage(data)}
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("delegate: %s %s: decode: %w", method, path, err)
	}
	return nil
}

func (c *Client) submit(ctx context.Context, idemKey, prose string) (string, error) {
	var out submitResponse
	err := c.do(ctx, http.MethodPost, "/messages/async", idemKey, submitRequest{
		Prose: prose, Skill: c.skill, CallerDID: c.did, CallerWallet: c.wallet,
	}, &out)
	if err != nil {
		return "", err
	}
	id := out.IntentID
	if id == "" {
		id = out.ID
	}
	if id == "" {
		return "", errors.New("delegate: submit: the daemon returned no intent_id")
	}
	return id, nil
}

func (c *Client) pending(ctx context.Context, intentID string) ([]pendingGate, error) {
	var out gatesResponse
	if err := c.do(ctx, http.MethodGet, "/intents/"+url.PathEscape(intentID)+"/gates", "", nil, &out); err != nil {
		return nil, err
	}
	return out.Pending, nil
}

func (c *Client) status(ctx context.Context, intentID string) (statusResponse, error) {
	var out statusResponse
	err := c.do(ctx, http.MethodGet, "/messages/async/"+url.PathEscape(intentID), "", nil, &out)
	return out, err
}

func (c *Client) postAnswer(ctx context.Context, intentID, nodeID string, a answerRequest) error {
	path := "/intents/" + url.PathEscape(intentID) + "/gates/" + url.PathEscape(nodeID) + "/answer"
	return c.do(ctx, http.MethodPost, path, intentID+"/"+nodeID, a, nil)
}

// retryable reports whether a request may be sent again: transport
// failures, timeouts, 429 and 5xx.
func retryable(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status == http.StatusTooManyRequests || he.Status >= 500
	}
	return err != nil
}

// notSent reports whether a failed request certainly never reached the
// daemon (the connection was refused or could not be dialled).
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// errorMessage extracts the daemon's error text from a response body.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		if s := text(v.Error); s != "" {
			return s
		}
		if v.Message != "" {
			return v.Message
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// text reads a field the daemon may send as a string, as an object with a
// question/message/error field, or as a list of strings.
func text(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"question", "message", "error", "detail"} {
			if s := text(obj[k]); s != "" {
				return s
			}
		}
		if q := text(obj["questions"]); q != "" {
			return q
		}
		return ""
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.TrimSpace(strings.Join(list, " "))
	}
	return ""
}
