package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/warm"
)

// Runner runs one turn of the agent; *agent.Agent implements it. Run must
// be idempotent per Inbound.EventID: run again after a restart, it
// continues where the last run stopped, or returns core.ErrAnswered when the
// answer was already given.
type Runner interface {
	Run(ctx context.Context, t core.Turn) error
}

// Journal keeps inbound messages durably until their turn is complete; the
// store implements it.
type Journal interface {
	// JournalInbound records in durably. fresh is false when the platform
	// and EventID were seen before (within the store's dedupe window), in
	// which case nothing is written.
	JournalInbound(ctx context.Context, in core.Inbound) (fresh bool, err error)
	// CompleteInbound marks the message done: it is not resumed again.
	CompleteInbound(ctx context.Context, t core.Thread, eventID string) error
	// PendingInbound returns the journaled, never completed messages,
	// oldest first.
	PendingInbound(ctx context.Context) ([]core.Inbound, error)
}

// LaterJournal is a Journal that can take a message in two halves: it
// decides at once whether the message is fresh, and makes it durable with
// the next write (the turn's first) or on its own shortly after. The hub
// starts the turn in between, and Submit still returns only once the
// message is durable. The store implements it.
type LaterJournal interface {
	// JournalInboundLater reports whether in is fresh, as JournalInbound
	// does, and for a fresh message the outcome of its commit on durable.
	JournalInboundLater(ctx context.Context, in core.Inbound) (fresh bool, durable <-chan error, err error)
}

// AheadJournal is a Journal that tells, with a fresh message, which of
// its thread's messages were still pending when it was journaled: the
// event IDs of every earlier message not yet completed (the store leaves
// out the ones whose marks it has queued). The store implements it. A
// hub that holds the thread, and knows each of those messages already,
// need not read the thread's journal again before the message's turn.
type AheadJournal interface {
	JournalInboundAhead(ctx context.Context, in core.Inbound) (fresh bool, ahead []string, err error)
}

// Redeliverer is implemented by a platform that delivers a message again
// until a process acknowledges it (Slack). Over a LaterJournal, only its
// turns start before the journal's commit: a crash that loses the record
// loses no message, since the platform was never told it arrived. The
// redelivered message carries Inbound.Redelivered, and its turn tidies
// the thread first, as a resumed one does.
type Redeliverer interface {
	Redelivers() bool
}

// Platform gives the hub a thread's Reporter and Approver; adapters
// implement it.
type Platform interface {
	Reporter(t core.Thread) core.Reporter
	Approver(t core.Thread, requester string) core.Approver
}

// Stops decides who may stop a thread's turn; *core.Gates satisfies it.
type Stops interface {
	// MayStop errs when it could not tell: the stop is refused.
	MayStop(ctx context.Context, t core.Thread, user string, roles []string) (bool, error)
}

// Defaults for [Options].
const (
	// DefaultMaxConcurrent is the number of turns run at once when
	// Options.MaxConcurrent is zero (NEO_MAX_CONCURRENT_TURNS).
	DefaultMaxConcurrent = 64
	// DefaultGrace is how long Close lets running turns finish.
	DefaultGrace = 5 * time.Second
	// DefaultMaxAge is how old a message may be and still be resumed after
	// a restart.
	DefaultMaxAge = 24 * time.Hour
	// DefaultNoticeTimeout bounds each notice the hub posts on its own.
	DefaultNoticeTimeout = 30 * time.Second
	// DefaultMaxQueued is how many messages may wait in one thread when
	// Options.MaxQueued is zero (NEO_MAX_QUEUED_PER_THREAD).
	DefaultMaxQueued = 20
)

// Errors returned by the hub.
var (
	// ErrClosed reports a Submit or Start after Close.
	ErrClosed = errors.New("conversation: hub is closed")
	// ErrNoPlatform reports a message whose Thread.Platform has no
	// attached Platform.
	ErrNoPlatform = errors.New("conversation: no platform attached")
)

// Options configures [New].
type Options struct {
	Runner  Runner
	Journal Journal
	// MaxConcurrent caps the turns running at once across all threads
	// (DefaultMaxConcurrent when zero or negative). A turn waiting on a
	// person's approval does not count.
	MaxConcurrent int
	// MaxPerUser caps the turns one user's messages run at once, so one
	// person can't take every slot (MaxConcurrent/4, at least 1, when zero).
	MaxPerUser int
	// MaxQueued caps the messages waiting in one thread (DefaultMaxQueued
	// when zero); past it a message is set aside, and its author told.
	MaxQueued int
	// Grace is how long Close waits for running turns before it cancels
	// them (DefaultGrace when zero; negative cancels at once).
	Grace time.Duration
	// MaxAge is the age (from Inbound.At) beyond which Start answers a
	// pending message with a notice instead of resuming it (DefaultMaxAge
	// when zero). A message with a zero At is always resumed.
	MaxAge time.Duration
	// NoticeTimeout bounds each notice the hub posts outside a turn
	// (DefaultNoticeTimeout when zero).
	NoticeTimeout time.Duration
	// Cluster shares the journal with other processes' hubs (nil: this
	// process is alone).
	Cluster Cluster
	// Stops decides who may stop a thread's turn (*core.Gates). With a
	// Cluster, a stop another process received is checked again here,
	// where the turn runs, before it is carried out: that process could
	// not see what a turn here holds (a long-running task only its
	// person may stop). Nil lets every such stop through.
	Stops Stops
	// Linger is how long a thread's claim is kept once the thread is idle
	// (with a Cluster): a conversation that goes on is not claimed again
	// for every turn. Zero releases it at once.
	Linger time.Duration
	// Now is the clock (time.Now when nil).
	Now    func() time.Time
	Logger zerolog.Logger
}

// hubState is where the hub is in its life.
type hubState int

const (
	stateNew      hubState = iota // Submit only journals
	stateStarting                 // Start is reading the journal; turns wait
	stateRunning
	stateClosed
)

// Hub runs turns for every thread. It is safe for concurrent use; create it
// with [New], attach platforms, Start it, and Close it.
type Hub struct {
	runner        Runner
	journal       Journal
	max           int
	maxPerUser    int
	maxQueued     int
	grace         time.Duration
	maxAge        time.Duration
	noticeTimeout time.Duration
	now           func() time.Time
	log           zerolog.Logger
	err           error // misconfiguration, returned by Start and Submit
	stops         Stops

	mu        sync.Mutex
	state     hubState
	platforms map[string]Platform
	threads   map[string]*mailbox // thread key -> mailbox, only while busy
	inflight  map[string]bool     // eventKey of every queued or running message
	queued    uint64              // messages ever put in a thread's queue (item.seq)
	ready     []*mailbox          // threads waiting for a turn slot, FIFO
	running   int                 // turns holding a slot, at most max
	resuming  int                 // answered turns waiting for a slot back (Stats.Resuming)
	byUser    map[userID]int      // running turns per user
	slotFree  chan struct{}       // closed and replaced when a slot frees
	chores    map[uint64]context.CancelFunc
	choreSeq  uint64
	// starting keeps Start and Submit apart: a Submit journals and queues
	// its message wholly before Start reads the journal (which then
	// resumes it) or wholly after Start has queued what it resumed.
	// Submits share it; Start holds it alone.
	starting sync.RWMutex
	closing  chan struct{} // closed when Close begins

	cluster   Cluster
	owned     map[string]bool          // threads this process holds the claim of
	releasing map[string]chan struct{} // claims being released, closed when done
	linger    time.Duration
	lingering map[string]*time.Timer // idle claims, released when their timer fires
	idleGen   map[string]int         // which idle spell a lingering timer belongs to
	settling  map[string]bool        // threads whose pending stops or expired messages are being settled
	// verified holds, for a claimed thread whose journal this process
	// has read since claiming it, the mark of that read (a number from
	// marks): from then on, every message another process journals in
	// the thread is handed over here. It goes with the claim.
	verified map[string]uint64
	marks    uint64 // last mark handed out
	// settled holds, for a verified thread, the event IDs of its last
	// few messages whose turns ended here: a message answered here may
	// still look pending to a journal write whose snapshot came before
	// its mark committed, and it is known here all the same.
	settled map[string][]string
	// unsure counts what can make a journal read miss a hand-over:
	// a hand-over for a thread not held here, a claim lost or let go.
	// A read during which it moved verifies nothing.
	unsure uint64

	workers    sync.WaitGroup // turn workers
	pool       *warm.Pool     // the goroutines turns run on, kept warm between turns
	choreGroup sync.WaitGroup // notices and stop handling
}

// parkedWorkers is how many turn goroutines the hub keeps parked between
// turns (warm): a turn grows its goroutine's stack to tens of kilobytes,
// and a new goroutine would grow it again.
const parkedWorkers = 16

// New returns a hub. Attach at least one Platform, then call Start.
func New(opts Options) *Hub {
	h := &Hub{
		runner: opts.Runner, journal: opts.Journal, max: opts.MaxConcurrent,
		maxPerUser: opts.MaxPerUser, maxQueued: opts.MaxQueued,
		byUser: map[userID]int{}, slotFree: make(chan struct{}),
		grace: opts.Grace, maxAge: opts.MaxAge, noticeTimeout: opts.NoticeTimeout,
		now: opts.Now, log: opts.Logger,
		platforms: map[string]Platform{}, threads: map[string]*mailbox{},
		inflight: map[string]bool{}, chores: map[uint64]context.CancelFunc{},
		closing: make(chan struct{}),
		cluster: opts.Cluster, owned: map[string]bool{}, releasing: map[string]chan struct{}{},
		linger: opts.Linger, lingering: map[string]*time.Timer{}, idleGen: map[string]int{}, settling: map[string]bool{},
		verified: map[string]uint64{}, settled: map[string][]string{},
		pool: warm.New(parkedWorkers), stops: opts.Stops,
	}
	switch {
	case opts.Runner == nil:
		h.err = errors.New("conversation: Options.Runner is nil")
	case opts.Journal == nil:
		h.err = errors.New("conversation: Options.Journal is nil")
	}
	if h.max <= 0 {
		h.max = DefaultMaxConcurrent
	}
	if h.maxPerUser <= 0 {
		h.maxPerUser = max(h.max/4, 1)
	}
	if h.maxQueued <= 0 {
		h.maxQueued = DefaultMaxQueued
	}
	if h.grace == 0 {
		h.grace = DefaultGrace
	}
	if h.maxAge <= 0 {
		h.maxAge = DefaultMaxAge
	}
	if h.noticeTimeout <= 0 {
		h.noticeTimeout = DefaultNoticeTimeout
	}
	if h.now == nil {
		h.now = time.Now
	}
	return h
}

// Attach registers the platform that owns threads whose Thread.Platform is
// name. Attach before Start, so resumed messages find their platform.
func (h *Hub) Attach(name string, p Platform) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.platforms[name] = p
}

// Submit journals in durably and queues its turn; it returns once the
// message is journaled and never waits for a turn. accepted is false for a
// duplicate (same platform and EventID), which is dropped. A message whose
// text is "stop" or "cancel" cancels the thread's running turn instead (see
// the package documentation). Before Start, Submit only journals: Start
// resumes the message. After Close it returns ErrClosed. A thread's turns
// run in the order its Submit calls return; an adapter that submits one
// thread's messages from several goroutines at once gives up that order.
// Over a LaterJournal the turn may start while the record commits; Submit
// returns after the commit all the same.
func (h *Hub) Submit(ctx context.Context, in core.Inbound) (accepted bool, err error) {
	if h.err != nil {
		return false, h.err
	}
	h.starting.RLock()
	defer h.starting.RUnlock()
	h.mu.Lock()
	state, p := h.state, h.platforms[in.Thread.Platform]
	h.mu.Unlock()
	switch {
	case state == stateClosed:
		return false, ErrClosed
	case p == nil:
		return false, fmt.Errorf("conversation: submit to %s: %w %q", in.Thread, ErrNoPlatform, in.Thread.Platform)
	case in.EventID == "":
		return false, fmt.Errorf("conversation: submit to %s: message has no event ID", in.Thread)
	}
	if err := in.Thread.Validate(); err != nil {
		return false, fmt.Errorf("conversation: submit: %w", err)
	}
	if h.setAsideIfFull(p, in) {
		return false, fmt.Errorf("conversation: submit to %s: %w", in.Thread, core.ErrQueueFull)
	}
	if lj, ok := h.journal.(LaterJournal); ok && state == stateRunning && h.cluster == nil && redelivers(p) && !core.IsStop(in.Text) {
		return h.submitEarly(ctx, lj, p, in)
	}
	if aj, ok := h.journal.(AheadJournal); ok && h.cluster != nil {
		return h.submitAhead(ctx, aj, p, in)
	}
	fresh, err := h.journal.JournalInbound(ctx, in)
	if ok, err := h.taken(in, fresh, err); !ok {
		return false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.admitIfRunningLocked(p, in)
	return true, nil
}

// setAsideIfFull sets in aside, telling its author, when its thread's
// queue is full: such a message is never journaled, so a flood into one
// thread costs no disk. (A queue that fills while in is being journaled
// is caught in admitLocked, which settles the record.)
func (h *Hub) setAsideIfFull(p Platform, in core.Inbound) bool {
	if core.IsStop(in.Text) {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	mb := h.threads[in.Thread.Key()]
	if h.state != stateRunning || mb == nil || len(mb.queue) < h.maxQueued || h.inflight[eventKey(in)] {
		return false
	}
	rep := p.Reporter(in.Thread)
	h.choreLocked(func(ctx context.Context) { h.notice(ctx, rep, in, queueFullText(h.maxQueued)) })
	return true
}

// taken turns a journal's answer about in into Submit's: an error, a
// duplicate dropped, or a fresh message to queue.
func (h *Hub) taken(in core.Inbound, fresh bool, err error) (bool, error) {
	if err != nil {
		return false, fmt.Errorf("conversation: journal %s in %s: %w", in.EventID, in.Thread, err)
	}
	if !fresh {
		h.log.Debug().Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("duplicate message dropped")
	}
	return fresh, nil
}

// admitIfRunningLocked queues in's turn and returns its item (nil when
// it was not queued: a stop, a duplicate, a full queue). Before Start or
// after Close it leaves the message in the journal: Start, or the next
// process, resumes it.
func (h *Hub) admitIfRunningLocked(p Platform, in core.Inbound) *item {
	if h.state != stateNew && h.state != stateClosed {
		return h.admitLocked(p, in)
	}
	return nil
}

// submitAhead is Submit over an AheadJournal with a Cluster. When this
// process held the thread, with its journal read, from before the
// message was journaled until the message's turn starts, and every
// message pending ahead of it was already queued or running here, the
// turn skips the journal read it would make first (claimed): nothing it
// could find is missing. Any message another process journals after
// this one is handed over here, as always, and runs after it.
func (h *Hub) submitAhead(ctx context.Context, aj AheadJournal, p Platform, in core.Inbound) (bool, error) {
	key := in.Thread.Key()
	since, claimedNow := h.claimFirst(ctx, in)
	var (
		fresh bool
		ahead []string
		err   error
	)
	if since != 0 {
		fresh, ahead, err = aj.JournalInboundAhead(ctx, in)
	} else {
		fresh, err = h.journal.JournalInbound(ctx, in) // its turn reads the journal in any case
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if claimedNow {
		// A claim made for a message that is not queued after all (a
		// duplicate, a failed write) is let go again; a closed hub's
		// claims end with the process's claims session.
		defer func() {
			if h.state != stateClosed {
				h.letIdleGoLocked([]string{key})
			}
		}()
	}
	if ok, err := h.taken(in, fresh, err); !ok {
		return false, err
	}
	known := since != 0 && h.verified[key] == since && h.knownLocked(in.Thread, ahead)
	if it := h.admitIfRunningLocked(p, in); it != nil && known {
		it.known = since
	}
	return true, nil
}

// claimFirst returns the mark since which this process has held in's
// thread, knowing what is pending in it (Hub.verified), or 0. A thread
// nobody here holds or talks in (a new thread, or one idle past the
// linger) is claimed first, before the message is journaled: then the
// journal write's list of the messages pending ahead of it tells all a
// read of the journal after the claim would, and a message that finds
// nothing unknown ahead runs without that read. claimedNow is whether
// the claim was made here now. A failed claim, or a hand-over that
// arrived meanwhile, leaves the turn to claim and read as before.
func (h *Hub) claimFirst(ctx context.Context, in core.Inbound) (since uint64, claimedNow bool) {
	key := in.Thread.Key()
	h.mu.Lock()
	since = h.verified[key]
	first := since == 0 && h.state == stateRunning && !core.IsStop(in.Text) &&
		!h.owned[key] && h.threads[key] == nil && h.releasing[key] == nil
	unsure := h.unsure
	h.mu.Unlock()
	if !first {
		return since, false
	}
	ok, err := h.cluster.Claim(ctx, key)
	if err != nil {
		h.log.Warn().Err(err).Str("thread", key).Msg("claim thread before journaling its message; its turn claims it")
	}
	if !ok {
		return 0, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	claimedNow = !h.owned[key]
	h.owned[key] = true
	if h.verified[key] == 0 && h.unsure == unsure {
		h.marks++
		h.verified[key] = h.marks
	}
	return h.verified[key], claimedNow
}

// knownLocked reports whether every message of ahead (event IDs of
// thread t) is queued or running here, or had its turn end here lately.
// Callers hold h.mu.
func (h *Hub) knownLocked(t core.Thread, ahead []string) bool {
	for _, id := range ahead {
		if !h.inflight[t.Platform+"\x00"+id] && !slices.Contains(h.settled[t.Key()], id) {
			return false
		}
	}
	return true
}

// keepSettled is how many of a verified thread's last settled messages
// the hub remembers (Hub.settled): enough for the marks of the turns
// before a message to be still committing when it is journaled.
const keepSettled = 4

// settledLocked remembers that the turn of a thread's message ended
// here, while the thread is verified. Callers hold h.mu.
func (h *Hub) settledLocked(thread, eventID string) {
	if h.verified[thread] == 0 {
		return
	}
	s := h.settled[thread]
	if len(s) >= keepSettled {
		s = slices.Delete(s, 0, 1)
	}
	h.settled[thread] = append(s, eventID)
}

// submitEarly is Submit over a LaterJournal: the turn starts as soon as
// the message is known to be fresh, so its first status and model call
// overlap the journal's commit, and the record shares a commit with the
// turn's first write. Submit still returns once the message is durable,
// and the platform is acknowledged only then. Should the commit fail, the
// turn is called off before it can act: every step that acts or speaks
// writes durably first, and that write fails or waits behind the record.
func (h *Hub) submitEarly(ctx context.Context, lj LaterJournal, p Platform, in core.Inbound) (bool, error) {
	fresh, durable, err := lj.JournalInboundLater(ctx, in)
	if ok, err := h.taken(in, fresh, err); !ok {
		return false, err
	}
	// Only a turn that can start now starts early: in a busy thread it
	// would wait anyway, and its "queued" notice must not come first.
	h.mu.Lock()
	early := h.threads[in.Thread.Key()] == nil
	if early {
		h.admitIfRunningLocked(p, in)
	}
	h.mu.Unlock()
	if err := <-durable; err != nil {
		if early {
			h.callOff(ctx, p, in)
		}
		return false, fmt.Errorf("conversation: journal %s in %s: %w", in.EventID, in.Thread, err)
	}
	if !early {
		h.mu.Lock()
		h.admitIfRunningLocked(p, in)
		h.mu.Unlock()
	}
	return true, nil
}

// redelivers reports whether p delivers unacknowledged messages again.
func redelivers(p Platform) bool {
	r, ok := p.(Redeliverer)
	return ok && r.Redelivers()
}

// errNotJournaled is the cause of a turn called off because its message
// could not be journaled: the intake asks its author to send it again.
var errNotJournaled = errors.New("conversation: the message could not be journaled")

// callOff drops the turn of a message whose journal record failed: taken
// out of its thread's queue (it waited for a slot), or cancelled if it is
// running. A cancelled turn may have shown a status line; once it has
// ended, a Tidier platform clears it, before the intake apologises. No
// other turn can be running in the thread by then: the turn started in an
// idle thread, and the adapter holds the thread's next message until this
// Submit returns.
func (h *Hub) callOff(ctx context.Context, p Platform, in core.Inbound) {
	h.mu.Lock()
	mb, k := h.threads[in.Thread.Key()], eventKey(in)
	var ended chan struct{}
	switch {
	case mb == nil:
	case mb.cur != nil && eventKey(mb.cur.in) == k:
		mb.cur.cancel(errNotJournaled)
		ended = mb.cur.done
	default:
		if i := slices.IndexFunc(mb.queue, func(it *item) bool { return eventKey(it.in) == k }); i >= 0 {
			mb.queue = slices.Delete(mb.queue, i, i+1)
			delete(h.inflight, k)
			h.forgetLocked(mb)
		}
	}
	h.mu.Unlock()
	td, ok := p.(Tidier)
	if ended == nil || !ok {
		return
	}
	select {
	case <-ended:
		td.Tidy(ctx, in.Thread)
	case <-ctx.Done():
	}
}

// Close stops taking new messages, lets running turns finish within Grace
// (or until ctx ends), then cancels them and waits for every goroutine the
// hub started. Turns cancelled this way, and queued turns, stay pending in
// the journal and resume after a restart. Close returns an error only when
// ctx ends before the goroutines do.
func (h *Hub) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.state != stateClosed {
		h.state = stateClosed
		close(h.closing)
	}
	h.stopLingering()
	h.mu.Unlock()

	done := make(chan struct{})
	go func() { // ends when the last worker and chore end
		h.workers.Wait()
		h.choreGroup.Wait()
		h.pool.Close()
		close(done)
	}()
	if h.grace > 0 {
		grace := time.NewTimer(h.grace)
		defer grace.Stop()
		select {
		case <-done:
			return nil
		case <-grace.C:
		case <-ctx.Done():
		}
	}
	h.cancelAll()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("conversation: close: turns still running: %w", ctx.Err())
	}
}

// cancelAll cancels every running turn (cause core.ErrShutdown) and chore.
func (h *Hub) cancelAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, mb := range h.threads {
		if mb.cur != nil {
			mb.cur.cancel(core.ErrShutdown)
		}
	}
	for _, cancel := range h.chores {
		cancel()
	}
}

// chore runs fn in a goroutine the hub owns, with a context bounded by
// NoticeTimeout and cancelled by Close after Grace. Callers hold h.mu and
// have checked the hub is not closed.
func (h *Hub) choreLocked(fn func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), h.noticeTimeout)
	h.choreSeq++
	id := h.choreSeq
	h.chores[id] = cancel
	h.choreGroup.Go(func() {
		defer func() {
			h.mu.Lock()
			delete(h.chores, id)
			h.mu.Unlock()
			cancel()
		}()
		fn(ctx)
	})
}

// LazyCompleter is a Journal that can mark a message done without waiting
// for the mark to be durable (*store.DB): it commits with the next write.
// The hub asks for it only when the turn's answer is stored, so a crash
// that loses the mark resumes a turn that finds itself answered and says
// nothing; one fsync fewer per turn.
type LazyCompleter interface {
	CompleteInboundLater(t core.Thread, eventID string)
}

// completeAnswered marks in done once its answer is stored: lazily when
// the journal can.
func (h *Hub) completeAnswered(ctx context.Context, in core.Inbound) {
	if lc, ok := h.journal.(LazyCompleter); ok {
		lc.CompleteInboundLater(in.Thread, in.EventID)
		return
	}
	h.complete(ctx, in)
}

// complete marks in done in the journal. A failure is logged: the message
// resumes after a restart, where the Runner's resume contract keeps it from
// being answered twice.
func (h *Hub) complete(ctx context.Context, in core.Inbound) {
	if err := h.journal.CompleteInbound(context.WithoutCancel(ctx), in.Thread, in.EventID); err != nil {
		h.log.Error().Err(err).Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("complete message")
	}
}

// notice posts text through rep, logging a failure: a notice is a courtesy
// and its loss must not stop the message from completing.
func (h *Hub) notice(ctx context.Context, rep core.Reporter, in core.Inbound, text string) {
	if rep == nil {
		return
	}
	ctx = core.WithTurn(ctx, &core.Turn{Inbound: in, Reporter: rep})
	if err := rep.Notice(ctx, text); err != nil {
		h.log.Warn().Err(err).Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("post notice")
	}
}

// eventKey identifies a message across the hub: dedupe is per platform.
func eventKey(in core.Inbound) string {
	return in.Thread.Platform + "\x00" + in.EventID
}

// Stats is a snapshot of the hub's load.
type Stats struct {
	// Running is the number of turns holding a slot.
	Running int
	// Threads is the number of threads with a turn running or waiting.
	Threads int
	// Queued is the number of messages waiting for their turn.
	Queued int
	// Resuming is the number of turns whose approval was answered, waiting
	// for a slot to go on.
	Resuming int
	// Started reports whether the hub has resumed its journal and runs
	// turns (false before Start and after Close).
	Started bool
}

// Stats returns the hub's load now, for metrics and readiness.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Stats{Running: h.running, Threads: len(h.threads), Started: h.state == stateRunning, Resuming: h.resuming}
	for _, mb := range h.threads {
		s.Queued += len(mb.queue)
	}
	return s
}
