package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/neobot/neobot/core"
	"github.com/rs/zerolog"
)

// Errors returned by [Manager.Call]. Both are conditions the model should
// hear about in-band, not transport failures to retry blindly.
var (
	// ErrUnavailable reports a server that is restarting after a crash.
	ErrUnavailable = errors.New("server temporarily unavailable")
	// ErrNotSent accompanies ErrUnavailable when the call certainly never
	// reached the server (it was restarting before the call was made), so
	// even a call with a side effect may be made again.
	ErrNotSent = errors.New("the call was not sent")
	// ErrServerDown reports a server that is not running: it failed to
	// start (it is retried with backoff) or was rejected for tool drift
	// (it stays stopped until neobot restarts).
	ErrServerDown = errors.New("server not running")
	// ErrNeedsPermission reports a server that refused the call because
	// neobot's grant lacks a scope it needs (HTTP 403 insufficient_scope):
	// someone must authorize the wider grant.
	ErrNeedsPermission = errors.New("server needs more permission")
)

// State is where a server is in its life.
type State string

// Server states.
const (
	// StateUp: running, tools answer.
	StateUp State = "up"
	// StateRestarting: crashed or lost, being restarted with backoff; its
	// tools stay listed and answer ErrUnavailable meanwhile.
	StateRestarting State = "restarting"
	// StateFailed: did not start at boot (missing variable, bad command,
	// timeout); started again with backoff until it comes up, its tools
	// listed from then on.
	StateFailed State = "failed"
	// StateRejected: its tools drifted from the manifest; stopped.
	StateRejected State = "rejected"
	// StateClosed: the manager was closed.
	StateClosed State = "closed"
)

// Status describes one server.
type Status struct {
	Alias     string
	Transport string
	Version   string
	State     State
	// Tools are the tools the server advertised, sorted by name (the last
	// known list while restarting).
	Tools []Tool
	// Problem says why a server is not up, written for an operator.
	Problem string
	// PID is a stdio server's process ID (and process group ID); 0 otherwise,
	// and for a server that runs per place.
	PID int
	// Processes counts the live processes of a server that runs per place
	// (see [ServerSpec.UsesPlace]).
	Processes int
	// Restarts counts restarts after crashes.
	Restarts int
}

// Options configures [Start].
type Options struct {
	// Manifest declares the servers; it is validated again by Start.
	Manifest *Manifest
	// StartTimeout bounds each server's start plus initialize plus first
	// tools/list (default 60s; a first npx run downloads the package). A
	// server's start_timeout overrides it.
	StartTimeout time.Duration
	// StopGrace is how long a stdio server gets to exit after SIGTERM
	// before its process group is killed (default 2s).
	StopGrace time.Duration
	// RestartBackoff is the first delay before restarting a crashed server
	// (default 500ms); it doubles up to RestartMaxBackoff (default 30s).
	RestartBackoff    time.Duration
	RestartMaxBackoff time.Duration
	// LookupEnv resolves $env: references (default os.LookupEnv). It is
	// called at every start and restart.
	LookupEnv LookupEnv
	// InProcess holds the servers of TransportInProcess entries, by alias.
	InProcess map[string]*Server
	// OnStatus, when set, is called after every change of a server's
	// state or tools. It may be called from several goroutines at once
	// and must not block.
	OnStatus func(Status)
	// OnProcess, when set, is told when a place's process of a server
	// that runs per place starts, fails to start or stops. It may be
	// called from several goroutines at once and must not block.
	OnProcess func(ProcessEvent)
	// Clock times the idle stops of place processes (default: the real
	// clock).
	Clock core.Clock
	// OAuth, when set, authorizes the http servers with auth in the
	// manifest (see docs/mcp-auth.md). Without it such a server does not
	// start, and says NEO_SECRET_KEY is missing.
	OAuth *OAuth

	// Elicit, when set, answers the questions servers ask during tool
	// calls (elicitation/create), and neobot declares the elicitation
	// capability; without it none is declared. See elicit.go.
	Elicit ElicitFunc
	// ClientVersion is reported to servers in the handshake (default "dev").
	ClientVersion string
	// Logger receives lifecycle events, and stdio servers' stderr at debug
	// level. The zero value is silent.
	Logger zerolog.Logger
}

// Manager runs the manifest's servers. It is safe for concurrent use.
type Manager struct {
	manifest      *Manifest
	servers       []*entry
	byAlias       map[string]*entry
	lookup        LookupEnv
	inProcess     map[string]*Server
	onStatus      func(Status)
	onProcess     func(ProcessEvent)
	clock         core.Clock
	startTimeout  time.Duration
	grace         time.Duration
	backoff       time.Duration
	maxBackoff    time.Duration
	clientVersion string
	elicit        ElicitFunc
	log           zerolog.Logger
	auth          *auth // nil without Options.OAuth

	gen       atomic.Uint64
	warnMu    sync.Mutex
	warnings  []warning
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup // supervisors
}

// warning is a problem of the server at index in the manifest.
type warning struct {
	index int
	text  string
}

// entry is one manifest entry and its current connection.
type entry struct {
	spec   ServerSpec
	index  int
	relist chan struct{}
	// kick wakes a server waiting to retry its boot: a login completed.
	kick chan struct{}
	// learnt is set once a person's connection to a per_user server has
	// listed its tools (see Manager.learnt).
	learnt bool
	pool   *pool // a server that runs per place; nil otherwise

	mu       sync.RWMutex
	state    State
	conn     *conn
	tools    []Tool
	declared map[string]bool
	problem  string
	// authErr is why the server waits for a login, while it does.
	authErr  error
	restarts int
}

// Start starts every server of the manifest in parallel and returns once
// each is up, failed or rejected. A server that fails is recorded in
// [Manager.Warnings] and skipped; Start fails only on an invalid manifest
// or when ctx ends first. ctx bounds the boot only: the servers run until
// Close.
func Start(ctx context.Context, opts Options) (*Manager, error) {
	if opts.Manifest == nil {
		return nil, errors.New("mcp: start: no manifest")
	}
	if err := opts.Manifest.Validate(); err != nil {
		return nil, fmt.Errorf("mcp: start: %w", err)
	}
	m := &Manager{
		manifest: opts.Manifest, byAlias: map[string]*entry{}, lookup: opts.LookupEnv,
		inProcess: opts.InProcess, onStatus: opts.OnStatus, startTimeout: opts.StartTimeout,
		grace: opts.StopGrace, backoff: opts.RestartBackoff, maxBackoff: opts.RestartMaxBackoff,
		clientVersion: opts.ClientVersion, log: opts.Logger, done: make(chan struct{}),
		onProcess: opts.OnProcess, clock: opts.Clock, elicit: opts.Elicit,
	}
	if m.clock == nil {
		m.clock = realClock{}
	}
	a, err := newAuth(opts.OAuth)
	if err != nil {
		return nil, err
	}
	m.auth = a
	if m.lookup == nil {
		m.lookup = os.LookupEnv
	}
	if m.startTimeout <= 0 {
		m.startTimeout = 60 * time.Second
	}
	if m.grace <= 0 {
		m.grace = 2 * time.Second
	}
	if m.backoff <= 0 {
		m.backoff = 500 * time.Millisecond
	}
	if m.maxBackoff < m.backoff {
		m.maxBackoff = max(30*time.Second, m.backoff)
	}
	if m.clientVersion == "" {
		m.clientVersion = "dev"
	}
	for i, spec := range opts.Manifest.Servers {
		s := &entry{spec: spec, index: i, relist: make(chan struct{}, 1), kick: make(chan struct{}, 1), declared: map[string]bool{}}
		for _, t := range spec.Tools {
			s.declared[t] = true
		}
		if spec.Transport == TransportStdio && spec.UsesPlace() || spec.Auth == AuthPerUser {
			s.pool = newPool(m, s)
		}
		m.servers = append(m.servers, s)
		m.byAlias[spec.Alias] = s
	}
	var boot sync.WaitGroup
	for _, s := range m.servers {
		boot.Go(func() { m.boot(ctx, s, false) })
	}
	boot.Wait()
	// Servers boot in parallel; list their problems in manifest order.
	slices.SortStableFunc(m.warnings, func(a, b warning) int { return a.index - b.index })
	if err := ctx.Err(); err != nil {
		_ = m.Close()
		return nil, fmt.Errorf("mcp: start: %w", err)
	}
	for _, s := range m.servers {
		switch {
		case s.state == StateFailed:
			m.wg.Go(func() { m.retryBoot(s) })
		case s.state != StateUp:
		default:
			m.wg.Go(func() { m.serve(s) })
		}
	}
	return m, nil
}

// serve looks after a server that is up until the manager closes: a
// server that runs per place reaps its idle processes, any other is
// supervised.
func (m *Manager) serve(s *entry) {
	if s.pool != nil {
		s.pool.reap()
		return
	}
	m.supervise(s)
}

// retryBoot starts a server that failed at boot again, with backoff,
// until it comes up (its tools checked against the manifest as at boot),
// is rejected, or the manager closes.
func (m *Manager) retryBoot(s *entry) {
	s.mu.RLock()
	first := s.problem
	s.mu.RUnlock()
	delay := m.backoff
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(delay)
		select {
		case <-m.done:
			t.Stop()
			return
		case <-t.C:
		case <-s.kick: // a login completed: try now
			t.Stop()
		}
		ctx, cancel := m.lifetimeCtx(m.timeout(s))
		m.boot(ctx, s, true)
		cancel()
		s.mu.RLock()
		st, problem := s.state, s.problem
		s.mu.RUnlock()
		switch st {
		case StateUp:
			m.log.Info().Str("server", s.spec.Alias).Int("attempts", attempt).Msg("mcp server up after failing at boot")
			m.serve(s)
			return
		case StateRejected:
			return
		}
		delay = min(delay*2, m.maxBackoff)
		if problem != first || attempt == 1 {
			m.log.Warn().Str("server", s.spec.Alias).Int("attempt", attempt).Dur("retry_in_ms", delay).Msg(problem)
			first = problem
		}
	}
}

func (m *Manager) timeout(s *entry) time.Duration {
	if s.spec.StartTimeout > 0 {
		return time.Duration(s.spec.StartTimeout)
	}
	return m.startTimeout
}

// boot starts s and records how it went. A retry (again) records a
// failure quietly: the first one is the warning.
func (m *Manager) boot(ctx context.Context, s *entry, again bool) {
	t := m.timeout(s)
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	start := time.Now()
	connect := m.connect
	if s.pool != nil {
		// Its processes start per place, on first use; the manifest's
		// tools are learnt from one started now and stopped.
		connect = m.learnTools
	}
	c, tools, err := connect(ctx, s)
	if err == nil {
		if err = Bijection(s.spec.Alias, s.spec.Tools, toolNames(tools)); err != nil {
			if c != nil {
				_ = c.close(m.grace)
			}
			m.set(s, StateRejected, nil, nil, fmt.Sprintf("rejected at boot: %v", err))
			return
		}
		m.set(s, StateUp, c, tools, "")
		m.log.Info().Str("server", s.spec.Alias).Int("tools", len(tools)).Dur("took_ms", time.Since(start)).Msg("mcp server up")
		return
	}
	problem := "not started: " + err.Error()
	s.mu.Lock()
	why := waitReason(s.authErr, authFailure(s.spec.Alias, err))
	s.authErr = why
	s.mu.Unlock()
	if why != nil {
		problem = why.Error()
	}
	if errors.Is(err, errStartTimeout) {
		problem = fmt.Sprintf("not started: no answer within %s (start, initialize, tools/list); check the command, or raise servers[%d].start_timeout", t, s.index)
	}
	if again {
		s.mu.Lock()
		s.problem = problem + "; retrying"
		s.mu.Unlock()
		return
	}
	m.set(s, StateFailed, nil, nil, problem)
}

// set records a server's new state and announces it. A problem becomes a
// warning.
func (m *Manager) set(s *entry, st State, c *conn, tools []Tool, problem string) {
	s.mu.Lock()
	s.state, s.conn, s.problem = st, c, problem
	if st == StateUp {
		s.authErr = nil
	}
	if tools != nil || st == StateFailed || st == StateRejected {
		s.tools = tools
	}
	status := s.statusLocked()
	s.mu.Unlock()
	if problem != "" {
		w := warning{index: s.index, text: fmt.Sprintf("%s: %s", s.spec.Alias, problem)}
		m.warnMu.Lock()
		m.warnings = append(m.warnings, w)
		m.warnMu.Unlock()
		m.log.Warn().Str("server", s.spec.Alias).Str("state", string(st)).Msg(problem)
	}
	m.gen.Add(1)
	if m.onStatus != nil {
		m.onStatus(status)
	}
}

func (s *entry) statusLocked() Status {
	st := Status{
		Alias: s.spec.Alias, Transport: s.spec.Transport, Version: s.spec.Version, State: s.state,
		Tools: s.tools, Problem: s.problem, Restarts: s.restarts,
	}
	if s.conn != nil {
		st.PID = s.conn.pid()
	}
	if s.pool != nil {
		st.Processes = s.pool.live()
	}
	return st
}

// supervise restarts the server when its connection is lost and re-lists
// its tools when it says they changed, until the manager closes or the
// server is rejected.
func (m *Manager) supervise(s *entry) {
	for {
		s.mu.RLock()
		c := s.conn
		s.mu.RUnlock()
		if c == nil {
			return
		}
		select {
		case <-m.done:
			return
		case <-s.relist:
			if !m.relist(s, c) {
				return
			}
		case <-c.lost:
			if !m.restart(s, c) {
				return
			}
		}
	}
}

// relist re-reads the tools after tools/list_changed and checks the
// bijection again. It reports whether the server is still in service.
func (m *Manager) relist(s *entry, c *conn) bool {
	ctx, cancel := m.lifetimeCtx(m.timeout(s))
	defer cancel()
	tools, err := listTools(ctx, c, s.spec)
	if err != nil {
		c.markLost() // the supervisor restarts it next
		return true
	}
	if err := Bijection(s.spec.Alias, s.spec.Tools, toolNames(tools)); err != nil {
		_ = c.close(m.grace)
		m.set(s, StateRejected, nil, nil, fmt.Sprintf("rejected after tools/list_changed: %v", err))
		return false
	}
	m.set(s, StateUp, c, tools, "")
	return true
}

// restart replaces a lost connection, retrying with backoff until it
// succeeds, the tools drift, or the manager closes.
func (m *Manager) restart(s *entry, old *conn) bool {
	m.log.Warn().Str("server", s.spec.Alias).Int("pid", old.pid()).Msg("mcp server lost; restarting")
	s.mu.Lock()
	s.state, s.conn = StateRestarting, nil
	status := s.statusLocked()
	s.mu.Unlock()
	m.gen.Add(1)
	if m.onStatus != nil {
		m.onStatus(status)
	}
	_ = old.close(m.grace)
	delay := m.backoff
	for {
		t := time.NewTimer(delay)
		select {
		case <-m.done:
			t.Stop()
			return false
		case <-t.C:
		case <-s.kick: // a login completed: try now
			t.Stop()
		}
		ctx, cancel := m.lifetimeCtx(m.timeout(s))
		c, tools, err := m.connect(ctx, s)
		cancel()
		if err != nil {
			m.log.Warn().Str("server", s.spec.Alias).Err(err).Dur("retry_in_ms", min(delay*2, m.maxBackoff)).Msg("mcp server restart failed")
			delay = min(delay*2, m.maxBackoff)
			if why := authFailure(s.spec.Alias, err); why != nil {
				s.mu.Lock()
				s.authErr = why
				s.mu.Unlock()
				m.set(s, StateRestarting, nil, nil, why.Error())
				// Wait for the login, not for the next attempt.
				select {
				case <-m.done:
					return false
				case <-s.kick:
				}
			}
			continue
		}
		select {
		case <-m.done:
			_ = c.close(m.grace)
			return false
		default:
		}
		if err := Bijection(s.spec.Alias, s.spec.Tools, toolNames(tools)); err != nil {
			_ = c.close(m.grace)
			m.set(s, StateRejected, nil, nil, fmt.Sprintf("rejected after restart: %v", err))
			return false
		}
		s.mu.Lock()
		s.restarts++
		s.mu.Unlock()
		m.set(s, StateUp, c, tools, "")
		m.log.Info().Str("server", s.spec.Alias).Int("pid", c.pid()).Msg("mcp server restarted")
		return true
	}
}

// lifetimeCtx returns a context that ends after d or when the manager
// closes, for work the supervisors do.
func (m *Manager) lifetimeCtx(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	stop := make(chan struct{})
	go func() {
		select {
		case <-m.done:
			cancel()
		case <-stop:
		}
	}()
	return ctx, func() { close(stop); cancel() }
}

// Call calls tool on the server with alias, outside any place: it is
// [Manager.CallIn] with the zero Place, which a server that runs per place
// refuses.
func (m *Manager) Call(ctx context.Context, alias, tool string, args map[string]any) (Result, error) {
	return m.CallIn(ctx, Place{}, alias, tool, args)
}

// CallIn calls tool on the server with alias for a call made at place. A
// server that uses a place placeholder answers from place's own process,
// started first if need be (waiting for a free slot when max_processes
// are all busy); any other server ignores place. A failure the tool
// reports, or a JSON-RPC error from the server, comes back as a Result
// with IsError set. The error is ErrUnknownTool for an undeclared tool,
// ErrUnavailable while the server restarts (including when it dies during
// this call), ErrServerDown when it failed or was rejected, or when
// place's process did not start (with ErrNoPlace for the zero Place),
// ctx's error when ctx ended, or another transport failure. ErrNotSent
// accompanies every failure where the request certainly never left
// neobot (see [NotSent]).
func (m *Manager) CallIn(ctx context.Context, place Place, alias, tool string, args map[string]any) (Result, error) {
	s := m.byAlias[alias]
	if s == nil || !s.declared[tool] {
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w)", alias, tool, ErrUnknownTool, ErrNotSent)
	}
	s.mu.RLock()
	st, c, problem, why := s.state, s.conn, s.problem, s.authErr
	s.mu.RUnlock()
	switch {
	case st == StateUp:
	case why != nil:
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w): %w", alias, tool, ErrServerDown, ErrNotSent, why)
	case st == StateRestarting:
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w)", alias, tool, ErrUnavailable, ErrNotSent)
	default:
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w): %s", alias, tool, ErrServerDown, ErrNotSent, problem)
	}
	if s.spec.Auth == AuthPerUser {
		if err := m.connected(ctx, s, place); err != nil {
			return Result{}, fmt.Errorf("mcp: call %s/%s: %w", alias, tool, err)
		}
	}
	if s.pool != nil {
		pr, err := s.pool.acquire(ctx, place)
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, fmt.Errorf("mcp: call %s/%s: %w", alias, tool, err)
			}
			if res, err, ok := m.refused(ctx, s, nil, place, tool, err); ok {
				return res, err
			}
			return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w): %w", alias, tool, ErrServerDown, ErrNotSent, err)
		}
		defer s.pool.release(pr)
		c = pr.conn
	}
	if c.dead() {
		// Lost, and not yet marked restarting by its supervisor.
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w)", alias, tool, ErrUnavailable, ErrNotSent)
	}
	if args == nil {
		args = map[string]any{} // a nil map would go out as "arguments": null, which servers refuse
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	req.Params.Meta = &mcp.Meta{AdditionalFields: callMeta(ctx)}
	end := c.calls.begin(ctx)
	res, err := c.client.CallTool(ctx, req)
	end()
	if err == nil {
		return fromCallResult(res), nil
	}
	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w", alias, tool, ctx.Err())
	}
	// A 401 or a 403 never reached the tool.
	if res, err, ok := m.refused(ctx, s, c, place, tool, err); ok {
		return res, err
	}
	var te *transport.Error
	if errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed) {
		if s.spec.Transport != TransportInProcess {
			c.markLost()
			if notSent(err) {
				return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w): %v", alias, tool, ErrUnavailable, ErrNotSent, err)
			}
			return Result{}, fmt.Errorf("mcp: call %s/%s: %w: %v", alias, tool, ErrUnavailable, err)
		}
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w", alias, tool, err)
	}
	// The server answered with a JSON-RPC error (bad arguments, internal
	// error): the model should see it and adapt.
	return ErrorResult(fmt.Sprintf("%s failed: %v", tool, err)), nil
}

// Status returns every server's status, in manifest order.
func (m *Manager) Status() []Status {
	out := make([]Status, len(m.servers))
	for i, s := range m.servers {
		s.mu.RLock()
		out[i] = s.statusLocked()
		s.mu.RUnlock()
	}
	return out
}

// Tools returns the tools of servers that are up or restarting, in
// manifest order then by name.
func (m *Manager) Tools() []Tool {
	var out []Tool
	for _, s := range m.servers {
		s.mu.RLock()
		if s.state == StateUp || s.state == StateRestarting {
			out = append(out, s.tools...)
		}
		s.mu.RUnlock()
	}
	return out
}

// Generation increases on every change of a server's state or tools;
// callers cache what they derive from Tools and rebuild when it moves.
func (m *Manager) Generation() uint64 { return m.gen.Load() }

// Warnings returns the problems seen so far (servers that failed, were
// rejected), oldest first.
func (m *Manager) Warnings() []string {
	m.warnMu.Lock()
	defer m.warnMu.Unlock()
	out := make([]string, len(m.warnings))
	for i, w := range m.warnings {
		out[i] = w.text
	}
	return out
}

// emit tells OnProcess of ev.
func (m *Manager) emit(ev ProcessEvent) {
	if m.onProcess != nil {
		m.onProcess(ev)
	}
}

// Manifest returns the manifest the manager runs.
func (m *Manager) Manifest() *Manifest { return m.manifest }

// Close stops the supervisors, then every server: stdio servers get
// SIGTERM, then SIGKILL for their whole process group, and Close waits
// until they are gone. It is safe to call more than once.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		close(m.done)
		left := make([][]*proc, len(m.servers))
		for i, s := range m.servers {
			if s.pool != nil {
				left[i] = s.pool.close()
			}
		}
		m.wg.Wait() // starts and watchers of place processes end too
		var wg sync.WaitGroup
		for i, s := range m.servers {
			for _, pr := range left[i] {
				wg.Go(func() { s.pool.stop(pr, StopClosed) })
			}
		}
		errs := make([]error, len(m.servers))
		for i, s := range m.servers {
			s.mu.Lock()
			c := s.conn
			s.conn, s.state = nil, StateClosed
			s.mu.Unlock()
			if c != nil {
				wg.Go(func() {
					if err := c.close(m.grace); err != nil {
						errs[i] = fmt.Errorf("mcp: close %s: %w", s.spec.Alias, err)
					}
				})
			}
		}
		wg.Wait()
		m.gen.Add(1)
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}
