package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/neobot/neobot/core"
)

// ErrNoPlace is matched (errors.Is) when a server that runs per place is
// called outside a conversation: there is no place to run it for.
var ErrNoPlace = errors.New("the call has no place (workspace or user) to run the server for")

// ProcessEventKind says what happened to a place's process.
type ProcessEventKind string

// Process events.
const (
	// ProcessStarted: the process is up and its tools match the manifest.
	ProcessStarted ProcessEventKind = "started"
	// ProcessStopped: the process is gone; Reason says why.
	ProcessStopped ProcessEventKind = "stopped"
	// ProcessFailed: the process did not start, or its tools differ from
	// the manifest; Reason says why.
	ProcessFailed ProcessEventKind = "failed"
)

// Reasons a place's process stops.
const (
	StopIdle    = "idle"    // no call for the server's idle_timeout
	StopEvicted = "evicted" // a new place needed its slot (max_processes)
	StopLost    = "lost"    // it exited or its connection failed
	StopDrift   = "drift"   // its tools changed away from the manifest
	StopClosed  = "closed"  // the manager closed
)

// ProcessEvent reports a place's process of a server that runs per place
// (see [ServerSpec.UsesPlace]).
type ProcessEvent struct {
	Alias string
	// Place is what the placeholders stand for: the {workspace} value,
	// the {user} value, or both separated by a space.
	Place  string
	PID    int
	Kind   ProcessEventKind
	Reason string
}

// pool runs a server that uses a place placeholder: one process per
// place value, started on first use, stopped when idle, at most max at
// once.
type pool struct {
	m         *Manager
	s         *entry
	idle      time.Duration
	max       int
	workspace bool // the spec uses {workspace}
	user      bool // the spec uses {user}
	kick      chan struct{}
	mu        sync.Mutex
	procs     map[string]*proc
	armed     bool          // the reaper waits for the earliest idle deadline
	waiting   int           // calls waiting for a free slot
	freed     chan struct{} // closed and replaced when a slot may have come free
	closed    bool
}

// proc is one place's process.
type proc struct {
	vals   placeValues
	key    string
	ready  chan struct{} // closed once the start ended; conn and err are set then
	conn   *conn
	err    error
	relist chan struct{}
	once   sync.Once

	// Guarded by pool.mu.
	users int       // calls using or waiting for the process
	since time.Time // when users last fell to zero
}

func newPool(m *Manager, s *entry) *pool {
	p := &pool{
		m: m, s: s, idle: time.Duration(s.spec.IdleTimeout), max: s.spec.MaxProcesses,
		kick: make(chan struct{}, 1), procs: map[string]*proc{}, freed: make(chan struct{}),
	}
	p.workspace, p.user = usedPlaceholders(s.spec)
	if s.spec.Auth == AuthPerUser {
		p.user = true // one connection per person, with their own token
	}
	if p.idle <= 0 {
		p.idle = DefaultIdleTimeout
	}
	if p.max <= 0 {
		p.max = DefaultMaxProcesses
	}
	return p
}

// up reports whether the process started and has not been found dead.
// It reads ready without blocking.
func (pr *proc) up() bool {
	select {
	case <-pr.ready:
		if pr.err != nil {
			return false
		}
		select {
		case <-pr.conn.lost:
			return false
		default:
			return true
		}
	default:
		return false
	}
}

// values returns what the placeholders stand for at place.
func (p *pool) values(place Place) placeValues {
	var v placeValues
	if p.workspace {
		v.workspace = place.WorkspaceValue()
	}
	if p.user {
		v.user = place.UserValue()
	}
	return v
}

// acquire returns place's process, started (or waited for) if need be,
// holding it until release. With every slot busy it waits for one to come
// free, or for ctx.
func (p *pool) acquire(ctx context.Context, place Place) (*proc, error) {
	if place.IsZero() {
		return nil, ErrNoPlace
	}
	vals := p.values(place)
	key := vals.key()
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errors.New("the manager is closed")
		}
		pr := p.procs[key]
		if pr != nil && !pr.up() {
			select {
			case <-pr.ready: // started and died: its watcher stops it
				delete(p.procs, key)
				pr = nil
			default: // still starting: wait for it below
			}
		}
		if pr == nil {
			var victim *proc
			if len(p.procs) >= p.max {
				if victim = p.oldestIdleLocked(); victim == nil {
					p.waiting++
					freed := p.freed
					p.mu.Unlock()
					select {
					case <-freed:
					case <-ctx.Done():
					}
					p.mu.Lock()
					p.waiting--
					p.mu.Unlock()
					if err := ctx.Err(); err != nil {
						return nil, fmt.Errorf("all %d processes busy: %w", p.max, err)
					}
					continue
				}
				delete(p.procs, victim.key)
			}
			pr = &proc{vals: vals, key: key, ready: make(chan struct{}), relist: make(chan struct{}, 1)}
			p.procs[key] = pr
			p.m.wg.Go(func() { p.run(pr, victim) })
		}
		pr.users++
		p.mu.Unlock()
		select {
		case <-pr.ready:
		default:
			select {
			case <-pr.ready:
			case <-ctx.Done():
				p.release(pr)
				return nil, ctx.Err()
			}
		}
		if pr.err != nil {
			p.release(pr)
			return nil, pr.err
		}
		return pr, nil
	}
}

// release ends a call's hold on pr. The last one out starts its idle time.
func (p *pool) release(pr *proc) {
	p.mu.Lock()
	pr.users--
	if pr.users == 0 {
		pr.since = p.m.clock.Now()
		p.idledLocked()
	}
	p.mu.Unlock()
}

// idledLocked tells the reaper and any waiting call that a process went
// idle or away.
func (p *pool) idledLocked() {
	if !p.armed {
		// A deadline already armed is earlier than this one: it was set
		// from an older idle time, with the same timeout.
		p.armed = true
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
	if p.waiting > 0 {
		close(p.freed)
		p.freed = make(chan struct{})
	}
}

// oldestIdleLocked returns the process idle the longest, or nil when every
// process is busy or starting.
func (p *pool) oldestIdleLocked() *proc {
	var oldest *proc
	for _, pr := range p.procs {
		if pr.users > 0 {
			continue
		}
		select {
		case <-pr.ready:
		default:
			continue
		}
		if oldest == nil || pr.since.Before(oldest.since) {
			oldest = pr
		}
	}
	return oldest
}

// run starts pr, after stopping the process it replaces, then watches it
// until it is lost, its tools drift or the manager closes.
func (p *pool) run(pr *proc, victim *proc) {
	if victim != nil {
		p.stop(victim, StopEvicted)
	}
	alias := p.s.spec.Alias
	ctx, cancel := p.m.lifetimeCtx(p.m.timeout(p.s))
	start := time.Now()
	c, tools, err := p.m.connectSpec(ctx, p.s.spec, pr.vals, func() {
		select {
		case pr.relist <- struct{}{}:
		default:
		}
	})
	cancel()
	if err == nil {
		if err = Bijection(alias, p.s.spec.Tools, toolNames(tools)); err != nil {
			_ = c.close(p.m.grace)
		}
	}
	if err != nil {
		if errors.Is(err, errStartTimeout) {
			err = fmt.Errorf("no answer within %s (start, initialize, tools/list): %w", p.m.timeout(p.s), err)
		}
		pr.err = fmt.Errorf("start for %s: %w", pr.key, err)
		p.m.log.Warn().Str("server", alias).Str("place", pr.key).Err(err).Msg("mcp place process not started")
		p.m.emit(ProcessEvent{Alias: alias, Place: pr.key, Kind: ProcessFailed, Reason: err.Error()})
		p.mu.Lock()
		if p.procs[pr.key] == pr {
			delete(p.procs, pr.key)
		}
		close(pr.ready)
		p.idledLocked()
		p.mu.Unlock()
		return
	}
	pr.conn = c
	if p.s.spec.Auth == AuthPerUser {
		p.m.learnt(p.s, tools)
	}
	p.mu.Lock()
	close(pr.ready)
	if pr.users == 0 { // its callers gave up while it started
		pr.since = p.m.clock.Now()
		p.idledLocked()
	}
	p.mu.Unlock()
	p.m.log.Info().Str("server", alias).Str("place", pr.key).Int("pid", c.pid()).Dur("took_ms", time.Since(start)).Msg("mcp place process up")
	p.m.emit(ProcessEvent{Alias: alias, Place: pr.key, PID: c.pid(), Kind: ProcessStarted})
	for {
		select {
		case <-p.m.done:
			return // Close stops it
		case <-c.lost:
			p.mu.Lock()
			if p.procs[pr.key] == pr {
				delete(p.procs, pr.key)
				p.idledLocked()
			}
			p.mu.Unlock()
			p.stop(pr, StopLost)
			return
		case <-pr.relist:
			if p.relist(pr) {
				continue
			}
			p.mu.Lock()
			if p.procs[pr.key] == pr {
				delete(p.procs, pr.key)
				p.idledLocked()
			}
			p.mu.Unlock()
			p.stop(pr, StopDrift)
			return
		}
	}
}

// relist checks pr's tools again after tools/list_changed; it reports
// whether they still match the manifest.
func (p *pool) relist(pr *proc) bool {
	ctx, cancel := p.m.lifetimeCtx(p.m.timeout(p.s))
	defer cancel()
	tools, err := listTools(ctx, pr.conn, p.s.spec)
	if err != nil {
		pr.conn.markLost() // the watcher stops it next
		return true
	}
	if err := Bijection(p.s.spec.Alias, p.s.spec.Tools, toolNames(tools)); err != nil {
		p.m.log.Warn().Str("server", p.s.spec.Alias).Str("place", pr.key).Err(err).Msg("mcp place process stopped after tools/list_changed")
		return false
	}
	return true
}

// stop ends pr's process, once, and waits until it is gone.
func (p *pool) stop(pr *proc, reason string) {
	pr.once.Do(func() {
		<-pr.ready
		if pr.conn == nil {
			return
		}
		pid := pr.conn.pid()
		_ = pr.conn.close(p.m.grace)
		p.m.log.Info().Str("server", p.s.spec.Alias).Str("place", pr.key).Int("pid", pid).Str("reason", reason).Msg("mcp place process stopped")
		p.m.emit(ProcessEvent{Alias: p.s.spec.Alias, Place: pr.key, PID: pid, Kind: ProcessStopped, Reason: reason})
	})
}

// reap stops the processes idle for longer than the idle timeout, waking
// at the earliest deadline, until the manager closes.
func (p *pool) reap() {
	clock := p.m.clock
	for {
		p.mu.Lock()
		now := clock.Now()
		var due []*proc
		var next time.Time
		for key, pr := range p.procs {
			if pr.users > 0 || !pr.up() {
				continue
			}
			at := pr.since.Add(p.idle)
			if !at.After(now) {
				due = append(due, pr)
				delete(p.procs, key)
				continue
			}
			if next.IsZero() || at.Before(next) {
				next = at
			}
		}
		p.armed = !next.IsZero()
		if len(due) > 0 && p.waiting > 0 {
			close(p.freed)
			p.freed = make(chan struct{})
		}
		p.mu.Unlock()
		for _, pr := range due {
			p.stop(pr, StopIdle)
		}
		var fire <-chan time.Time
		cancel := func() bool { return false }
		if !next.IsZero() {
			fire, cancel = clock.NewTimer(next.Sub(now))
		}
		select {
		case <-p.m.done:
			cancel()
			return
		case <-p.kick:
			cancel()
		case <-fire:
		}
	}
}

// live counts the processes up.
func (p *pool) live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pr := range p.procs {
		if pr.up() {
			n++
		}
	}
	return n
}

// close refuses new calls and returns the processes left, for the
// manager to stop once the pool's goroutines are done.
func (p *pool) close() []*proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	out := make([]*proc, 0, len(p.procs))
	for _, pr := range p.procs {
		out = append(out, pr)
	}
	p.procs = map[string]*proc{}
	return out
}

// learnTools starts one process with the template's values to learn the
// server's tools at boot, checks them against the manifest, stops it and
// removes the directories it was given.
func (m *Manager) learnTools(ctx context.Context, s *entry) (*conn, []Tool, error) {
	if s.spec.Auth == AuthPerUser {
		// Only a person's token opens the server: until someone connects,
		// its tools are the manifest's (see perUserTools).
		return nil, perUserTools(s.spec), nil
	}
	t := templateValue()
	vals := placeValues{workspace: t, user: t}
	c, tools, err := m.connectSpec(ctx, s.spec, vals, func() {})
	if c != nil {
		_ = c.close(m.grace)
	}
	for _, root := range templateRoots(s.spec, vals) {
		_ = os.RemoveAll(root) // only the template process ever used it
	}
	return nil, tools, err
}

// realClock is the clock used when Options.Clock is nil.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

var _ core.Clock = realClock{}
