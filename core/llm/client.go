package llm

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// maxResponseBytes bounds how much of a response body is read.
const maxResponseBytes = 32 << 20

// Client calls one model through the chat-completions API. It is immutable
// after New and safe for concurrent use.
type Client struct {
	cfg  Config
	set  settings
	http *http.Client
	now  func() time.Time
	// tools keeps the encoded tool schemas between requests.
	tools toolCache
	// lines keeps the stream readers' buffers between answers.
	lines sync.Pool

	noStream atomic.Bool  // the provider refused a stream: ChatStream calls Chat
	think    atomic.Int32 // what answers taught about inline reasoning: see thinkUnknown
	// postures saves what answers teach (see Recall); nil keeps it in memory.
	postures atomic.Pointer[Postures]
}

// New validates cfg, detects the provider and returns a Client. Errors name
// the setting to fix (NEO_MODEL, NEO_LLM_BASE_URL, the provider's API key
// variable...); an Anthropic Messages or OpenAI Responses endpoint is refused
// with ErrUnsupportedShape.
func New(cfg Config) (*Client, error) {
	set, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, set: set, http: cfg.HTTPClient, now: cfg.Now}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.cfg.Timeout == 0 {
		c.cfg.Timeout = DefaultTimeout
	}
	if c.cfg.SlotLabel == "" {
		c.cfg.SlotLabel = DefaultSlot
	}
	c.think.Store(c.cfg.Posture.state())
	if !c.declared() && templateOpens(c.cfg.Model) {
		c.think.Store(thinkCloserFirst)
	}
	return c, nil
}

// Model returns the configured model string.
func (c *Client) Model() string { return c.cfg.Model }

// Provider returns the provider the client talks to, e.g. "fireworks".
func (c *Client) Provider() string { return c.set.provider.name }

// Endpoint returns the URL requests are POSTed to.
func (c *Client) Endpoint() string { return c.set.endpoint }

// ContextWindow returns the model's context window in tokens:
// Config.ContextWindow when set, else the registry's figure.
func (c *Client) ContextWindow() int {
	n, _ := c.ContextWindowSource()
	return n
}

// ContextWindowSource returns the model's context window in tokens and
// where the figure came from: Config.ContextWindow, the registry, or a
// guess for a model the registry does not know.
func (c *Client) ContextWindowSource() (int, WindowSource) {
	if c.cfg.ContextWindow > 0 {
		return c.cfg.ContextWindow, WindowConfigured
	}
	if n, ok := LookupContextWindow(c.cfg.Model); ok {
		return n, WindowRegistry
	}
	return DefaultContextWindow, WindowGuessed
}

// Chat sends the conversation and returns the model's single assistant turn.
// Inline <think> blocks and reasoning_content land in Message.Reasoning,
// never in Content. HTTP failures are *Error; check IsTransient and
// RetryAfter before retrying.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (*ChatResult, error) {
	if len(req.Messages) == 0 {
		return nil, errors.New("llm: chat needs at least one message")
	}
	body, err := c.encodeRequest(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	name := c.set.provider.name
	start := c.now()
	resp, err := c.post(ctx, body, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("llm: %s: read response (%d bytes before the connection ended): %w", name, len(raw), c.contextCause(ctx, err))
	}
	c.cfg.Logger.Debug().Str("provider", name).Str("model", c.cfg.Model).Int("status", resp.StatusCode).
		Int("request_bytes", len(body)).Int("response_bytes", len(raw)).Dur("took_ms", c.now().Sub(start)).Msg("llm chat")

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.httpError(resp, raw)
	}
	return decodeResponse(name, resp.StatusCode, raw)
}

// post sends a chat-completions body, asking for Server-Sent Events when
// stream is set.
func (c *Client) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.set.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("llm: %s: build request: %w", c.set.provider.name, err)
	}
	c.setHeaders(ctx, hreq.Header)
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	return resp, nil
}

type intentKey struct{}

// WithIntentID returns a context whose model calls the gateway meters
// under id (X-Matrix-Intent-ID): the agent sets one per turn, so every
// call a turn makes, its retries and its compactions included, is billed
// to that turn.
func WithIntentID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, intentKey{}, id)
}

// IntentIDFrom returns the intent ID ctx carries, or "".
func IntentIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(intentKey{}).(string)
	return id
}

// setHeaders adds authentication and, through the gateway, the metering
// metadata.
func (c *Client) setHeaders(ctx context.Context, h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "neobot")
	if c.set.apiKey != "" {
		h.Set("Authorization", "Bearer "+c.set.apiKey)
	}
	if c.set.gateway {
		if c.cfg.ActorDID != "" {
			h.Set("X-Matrix-Actor-DID", c.cfg.ActorDID)
		}
		if id := cmp.Or(IntentIDFrom(ctx), c.cfg.IntentID); id != "" {
			h.Set("X-Matrix-Intent-ID", id)
		}
		h.Set("X-Matrix-Slot", c.cfg.SlotLabel)
	}
}

// transportError wraps a failed round trip, saying whether our own timeout
// fired.
func (c *Client) transportError(ctx context.Context, err error) error {
	name := c.set.provider.name
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("llm: %s: no answer within %s: %w", name, c.cfg.Timeout, err)
	}
	if dns, ok := errors.AsType[*net.DNSError](err); ok && !dns.IsTimeout {
		return fmt.Errorf("llm: %s: the model endpoint %s cannot be reached: its host name %q does not resolve (DNS); check the host in the base URL (%s) %w", name, c.set.endpoint, dns.Name, c.set.baseVar, err)
	}
	if IsUnreachable(err) {
		return fmt.Errorf("llm: %s: the model endpoint %s cannot be reached: is its server running, and is the base URL (%s) right? %w", name, c.set.endpoint, c.set.baseVar, err)
	}
	return fmt.Errorf("llm: %s: request failed: %w", name, err)
}

// contextCause reports a read cut short by our deadline as one.
func (c *Client) contextCause(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// httpError is the *Error for a non-2xx answer; a 404 says which URL was
// not found and the usual cause.
func (c *Client) httpError(resp *http.Response, raw []byte) *Error {
	e := parseError(c.set.provider.name, resp, raw, c.now())
	if resp.StatusCode == http.StatusNotFound {
		e.Message += fmt.Sprintf(" — POST %s was not found: does the base URL (%s) end in /v1, as in http://localhost:11434/v1?", c.set.endpoint, c.set.baseVar)
	}
	return e
}
