package main

import (
	"context"
	"errors"
	"github.com/neobot/neobot/core"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/conversation"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/tools"
)

// telemetry is the process's metrics, on a registry of its own (no global
// state), served at /metrics. Every name starts with neobot_.
type telemetry struct {
	reg *prometheus.Registry

	// Each vector's comment names its labels.
	turns        *prometheus.CounterVec // outcome
	steps        prometheus.Counter
	compactions  *prometheus.CounterVec // reason
	stalls       prometheus.Counter
	forgotten    prometheus.Counter
	toolCalls    *prometheus.CounterVec   // server, tool, outcome
	modelCalls   *prometheus.CounterVec   // model, outcome
	modelLatency *prometheus.HistogramVec // model
	modelTokens  *prometheus.CounterVec   // model, kind
	mcpUp        *prometheus.GaugeVec     // server
	mcpRestarts  *prometheus.CounterVec   // server
	places       *prometheus.GaugeVec     // server
	placeStarts  *prometheus.CounterVec   // server
	placeStops   *prometheus.CounterVec   // server, reason
	apiCalls     *prometheus.CounterVec   // platform, method, code
	apiLimited   *prometheus.CounterVec   // platform, method
	spends       *prometheus.CounterVec   // outcome
	storeWrites  *prometheus.HistogramVec // outcome
}

func newTelemetry() *telemetry {
	t := &telemetry{
		reg: prometheus.NewRegistry(),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_turns_total",
			Help: "Turns ended, by outcome: answered, partial (an honest partial answer), stopped, failed."}, []string{"outcome"}),
		steps: prometheus.NewCounter(prometheus.CounterOpts{Name: "neobot_steps_total",
			Help: "Steps of the tool-calling loop: main-model answers within turns."}),
		compactions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_compactions_total",
			Help: "Compactions of a thread's working history, by reason: soft, hard (thresholds), refused (the model refused a request as too large), set_aside (a turn's oldest tool results archived and stubbed), cut (a result larger than the window cut), no_room (nothing could make the request fit; the turn ended with an honest partial)."}, []string{"reason"}),
		stalls: prometheus.NewCounter(prometheus.CounterOpts{Name: "neobot_stalls_total",
			Help: "Turns stopped because they repeated the same tool calls without progress."}),
		forgotten: prometheus.NewCounter(prometheus.CounterOpts{Name: "neobot_memory_writebacks_skipped_total",
			Help: "Turns whose memory write-back was skipped because too many were running: what those turns said is not remembered."}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_tool_calls_total",
			Help: "Tool calls, by MCP server (neo for synthetic tools), tool and outcome (ok, error: the tool reported a failure, failed: it could not be reached)."},
			[]string{"server", "tool", "outcome"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_model_calls_total",
			Help: "Chat-completion calls, by model and outcome (ok, error)."}, []string{"model", "outcome"}),
		modelLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "neobot_model_call_seconds",
			Help: "Chat-completion latency, by model.", Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}}, []string{"model"}),
		modelTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_model_tokens_total",
			Help: "Tokens the provider reported, by model and kind (prompt, completion)."}, []string{"model", "kind"}),
		mcpUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "neobot_mcp_server_up",
			Help: "1 while an MCP server is running, else 0."}, []string{"server"}),
		mcpRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_mcp_server_restarts_total",
			Help: "Restarts of an MCP server after it failed."}, []string{"server"}),
		places: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "neobot_place_processes",
			Help: "Live processes of an MCP server that runs one per place (workspace or user)."}, []string{"server"}),
		placeStarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_place_process_starts_total",
			Help: "Processes started for a place, by server (a start that failed is not counted)."}, []string{"server"}),
		placeStops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_place_process_stops_total",
			Help: "Place processes stopped, by server and reason (idle, evicted: its slot was needed, lost, drift, closed)."}, []string{"server", "reason"}),
		apiCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_platform_api_calls_total",
			Help: "Slack and Discord API calls, by platform, method and HTTP status code."}, []string{"platform", "method", "code"}),
		apiLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_platform_api_rate_limited_total",
			Help: "Slack and Discord API calls answered 429, by platform and method."}, []string{"platform", "method"}),
		spends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_spends_total",
			Help: "Planned spend calls of the built-in executor, by how they ended: completed, failed, refused (over a limit), denied, cancelled, unknown."}, []string{"outcome"}),
		storeWrites: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "neobot_store_write_seconds",
			Help: "Durable store writes (fsync included), by outcome (ok, error).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}, []string{"outcome"}),
	}
	t.reg.MustRegister(t.turns, t.steps, t.compactions, t.stalls, t.forgotten, t.toolCalls, t.modelCalls, t.modelLatency,
		t.modelTokens, t.mcpUp, t.mcpRestarts, t.places, t.placeStarts, t.placeStops, t.apiCalls, t.apiLimited, t.spends, t.storeWrites,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return t
}

// observeSpend counts a spend call's end. No amount, tool argument or
// person ever becomes a label.
func (t *telemetry) observeSpend(state core.SpendState) {
	t.spends.WithLabelValues(string(state)).Inc()
}

// handler serves the registry in the Prometheus text format.
func (t *telemetry) handler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{Registry: t.reg})
}

// observeAgent counts what the agent reports (agent.Options.Observe).
func (t *telemetry) observeAgent(ev agent.Event) {
	switch ev.Kind {
	case agent.EventStep:
		t.steps.Inc()
	case agent.EventCompaction:
		t.compactions.WithLabelValues(ev.Detail).Inc()
	case agent.EventStall:
		t.stalls.Inc()
	case agent.EventTurn:
		t.turns.WithLabelValues(ev.Detail).Inc()
	case agent.EventWriteBackSkipped:
		t.forgotten.Inc()
	}
}

// observeWrite times a store write (store.Options.ObserveWrite).
func (t *telemetry) observeWrite(took time.Duration, err error) {
	t.storeWrites.WithLabelValues(outcome(err)).Observe(took.Seconds())
}

// observeServer follows an MCP server's state (tools.Options.OnStatus).
func (t *telemetry) observeServer(s mcp.Status) {
	up := 0.0
	if s.State == mcp.StateUp {
		up = 1
	}
	t.mcpUp.WithLabelValues(s.Alias).Set(up)
	if s.State == mcp.StateRestarting {
		t.mcpRestarts.WithLabelValues(s.Alias).Inc()
	}
}

// observeProcess follows a place's process (tools.Options.OnProcess).
// The place itself (a workspace or a person) is never a label.
func (t *telemetry) observeProcess(ev mcp.ProcessEvent) {
	switch ev.Kind {
	case mcp.ProcessStarted:
		t.places.WithLabelValues(ev.Alias).Inc()
		t.placeStarts.WithLabelValues(ev.Alias).Inc()
	case mcp.ProcessStopped:
		t.places.WithLabelValues(ev.Alias).Dec()
		t.placeStops.WithLabelValues(ev.Alias, ev.Reason).Inc()
	}
}

// watchHub exports the hub's load as gauges read at each scrape.
func (t *telemetry) watchHub(hub *conversation.Hub) {
	gauge := func(name, help string, f func(conversation.Stats) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(f(hub.Stats())) })
	}
	t.reg.MustRegister(
		gauge("neobot_turns_running", "Turns holding a slot now.", func(s conversation.Stats) int { return s.Running }),
		gauge("neobot_threads_active", "Threads with a turn running or waiting.", func(s conversation.Stats) int { return s.Threads }),
		gauge("neobot_queue_depth", "Messages waiting for their turn.", func(s conversation.Stats) int { return s.Queued }),
	)
}

// watchGates exports the number of approvals waiting for a click.
func (t *telemetry) watchGates(pending func(context.Context) (int, error)) {
	t.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neobot_gates_pending",
		Help: "Approval gates waiting for a decision."}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := pending(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	}))
}

// watchDisk exports whether the store's disk is full.
func (t *telemetry) watchDisk(full func() bool) {
	t.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neobot_store_disk_full",
		Help: "1 while the store's last write failed for want of disk space; new messages are refused in words."}, func() float64 {
		if full() {
			return 1
		}
		return 0
	}))
}

// watchReady exports readiness as /readyz would answer it now.
func (t *telemetry) watchReady(ready func(context.Context) bool) {
	t.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neobot_ready",
		Help: "1 while every readiness check holds (/readyz answers 200), else 0."}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if ready(ctx) {
			return 1
		}
		return 0
	}))
}

// watchBudget exports the daily token budget and how much of it the
// busiest workspace has used today, without naming any workspace.
func (t *telemetry) watchBudget(budget int64, most func() int64) {
	t.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neobot_daily_token_budget",
			Help: "Most model tokens one workspace may use per UTC day (NEO_DAILY_TOKEN_BUDGET); 0 is no budget."}, func() float64 { return float64(budget) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neobot_daily_tokens_most",
			Help: "Model tokens used today (UTC) by the workspace that used the most."}, func() float64 { return float64(most()) }),
	)
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// meteredModel counts a model client's calls, latency and tokens. It
// satisfies agent.Model and memory.Model like the client it wraps.
type meteredModel struct {
	*llm.Client
	t *telemetry
	// record, when set, is told every call's usage (usage accounting).
	record func(ctx context.Context, model string, u llm.Usage)
}

// Chat calls the model and counts the call.
func (m *meteredModel) Chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatResult, error) {
	start := time.Now()
	res, err := m.Client.Chat(ctx, req)
	m.count(ctx, start, res, err)
	return res, err
}

// ChatStream streams the model's answer and counts the call.
func (m *meteredModel) ChatStream(ctx context.Context, req llm.ChatRequest, onText func(string)) (*llm.ChatResult, error) {
	start := time.Now()
	res, err := m.Client.ChatStream(ctx, req, onText)
	m.count(ctx, start, res, err)
	return res, err
}

func (m *meteredModel) count(ctx context.Context, start time.Time, res *llm.ChatResult, err error) {
	model := m.Client.Model()
	m.t.modelCalls.WithLabelValues(model, outcome(err)).Inc()
	m.t.modelLatency.WithLabelValues(model).Observe(time.Since(start).Seconds())
	if err == nil {
		m.t.modelTokens.WithLabelValues(model, "prompt").Add(float64(res.Usage.PromptTokens))
		m.t.modelTokens.WithLabelValues(model, "completion").Add(float64(res.Usage.CompletionTokens))
		if m.record != nil {
			m.record(ctx, model, res.Usage)
		}
	}
}

// meteredTools counts tool calls by server, tool and outcome.
type meteredTools struct {
	*tools.Surface
	t *telemetry
}

// Dispatch runs the call and counts it.
func (m meteredTools) Dispatch(ctx context.Context, call core.ToolCall) (string, bool, error) {
	content, isError, err := m.Surface.Dispatch(ctx, call)
	name := call.Name()
	server, result := m.Surface.Server(name), "ok"
	switch {
	case server == "":
		server, name = "unknown", "unknown" // never a label per hallucinated name
		result = "error"
	case err != nil:
		result = "failed"
	case isError:
		result = "error"
	}
	m.t.toolCalls.WithLabelValues(server, name, result).Inc()
	return content, isError, err
}

// apiTransport counts a platform's API calls and 429s, and ends each call,
// its body included, after timeout.
type apiTransport struct {
	platform string
	next     http.RoundTripper
	t        *telemetry
	timeout  time.Duration
}

// slackMethod matches a Slack Web API method name (chat.postMessage).
var slackMethod = regexp.MustCompile(`/api/([A-Za-z]+(\.[A-Za-z]+)+)$`)

// discordAPI matches the start of a Discord REST route and its version.
var discordAPI = regexp.MustCompile(`/api/v\d+/`)

// discordWord matches a fixed word of a Discord route (messages,
// bulk-delete, @me); any other part of the path is an ID, an emoji, a
// token or a name.
var discordWord = regexp.MustCompile(`^@?[a-z][a-z_-]*$`)

// apiMethod names the API method r calls, for a metric label: the Slack
// method, or the Discord route with every ID, emoji and token replaced by
// {id}. A label is one of a bounded set and never holds text from a
// message or a secret: a call that is not an API method (a file download
// or upload, whose path holds the file's name or an upload token) is
// labelled by its HTTP method and "file".
func apiMethod(platform string, r *http.Request) string {
	path := r.URL.Path
	if platform == "slack" {
		if m := slackMethod.FindStringSubmatch(path); m != nil {
			return m[1]
		}
		return r.Method + " file"
	}
	loc := discordAPI.FindStringIndex(path)
	if loc == nil {
		return r.Method + " file"
	}
	parts := strings.Split(path[loc[1]:], "/")
	if parts[0] == "webhooks" || parts[0] == "interactions" {
		return r.Method + " /" + parts[0] // tokens are secrets
	}
	for i, p := range parts {
		if !discordWord.MatchString(p) {
			parts[i] = "{id}"
		}
	}
	return r.Method + " /" + strings.Join(parts, "/")
}

// RoundTrip sends r and counts it.
func (a apiTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(r.Context(), a.timeout)
	resp, err := a.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
	} else {
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	}
	method := apiMethod(a.platform, r)
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			a.t.apiLimited.WithLabelValues(a.platform, method).Inc()
		}
	} else if errors.Is(err, context.Canceled) {
		code = "canceled"
	}
	a.t.apiCalls.WithLabelValues(a.platform, method, code).Inc()
	return resp, err
}

// cancelBody is a response body that ends its call's context once read to
// the end or closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.cancel()
	}
	return n, err
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// apiClient returns an HTTP client for platform whose calls go through next,
// are counted, and end after 30 s. The deadline is the call's context, not
// http.Client.Timeout: with a transport other than net/http's, the client
// would start a goroutine per call to watch its timer.
func (t *telemetry) apiClient(platform string, next http.RoundTripper) *http.Client {
	return &http.Client{Transport: apiTransport{platform: platform, next: next, t: t, timeout: 30 * time.Second}}
}
