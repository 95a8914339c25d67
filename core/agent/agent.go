package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/warm"
	"github.com/rs/zerolog"
)

// Model is a chat-completions model (*llm.Client).
type Model interface {
	Chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatResult, error)
}

// Toolbox is Neo's tool surface (*tools.Surface). Dispatch runs one call
// of the turn, which says whose call it is; it reports a tool's own
// failure in-band (isError), and as err a failure the ladder may retry.
type Toolbox interface {
	Schemas(ctx context.Context) []llm.Tool
	Dispatch(ctx context.Context, call core.ToolCall) (content string, isError bool, err error)
}

// Transcript stores a thread's entries (*store.DB).
type Transcript interface {
	// AppendEntries appends data as new entries, in order, and returns the
	// last entry's sequence number.
	AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (lastSeq uint64, err error)
	// LoadTranscript returns the summary and the live entries (Seq >
	// summary.UpTo), in order.
	LoadTranscript(ctx context.Context, t core.Thread) (core.Summary, []core.Entry, error)
	// Compact archives the entries with Seq <= s.UpTo and stores s,
	// atomically.
	Compact(ctx context.Context, t core.Thread, s core.Summary) error
}

// LaterAppender is a Transcript that can append without waiting for the
// disk (*store.DB): the entries commit with its next durable write, before
// it. A turn's user message goes this way. The journal keeps the message
// until the turn completes, so a crash that loses the record only means
// the resumed turn starts afresh; and every step that acts or speaks
// afterwards makes a durable write first, which carries the record along.
type LaterAppender interface {
	AppendEntriesLater(ctx context.Context, t core.Thread, data ...[]byte) (lastSeq uint64, err error)
}

// Memory is long-term memory (*memory.Cortex): what a turn faults in and
// what it writes back. QuickWriteBack reports whether in's write-back
// returns at once (no model call, no commit to wait for); a quick one runs
// on the turn.
type Memory interface {
	Fault(ctx context.Context, in core.Inbound, query string) (core.Recall, error)
	WriteBack(ctx context.Context, in core.Inbound, turn []llm.Message) error
	QuickWriteBack(in core.Inbound) bool
}

// Budget is the daily token budgets over a turn's place (*usage.Meter).
// A long, tool-using turn may use one up partway through.
type Budget interface {
	// Exhausted returns "" while every budget over in's place has tokens
	// left, else a sentence for the people there: which budget is used
	// up, when it resets and who can raise it (or, with err, that it
	// cannot be counted just now).
	Exhausted(ctx context.Context, in core.Inbound) (string, error)
}

// Defaults of the tunables in Options.
const (
	DefaultContextWindow     = 128_000
	DefaultStepBudget        = 24
	DefaultResultCap         = 16 << 10
	DefaultStoredResultCap   = 256 << 10
	DefaultMaxRetriesPerTool = 3
	DefaultMaxAdaptAttempts  = 2
	DefaultNoProgressStall   = 3
	DefaultRefaultEvery      = 6
	DefaultMaxCallsPerStep   = 8
	DefaultMaxParallelCalls  = 4
)

// ErrNoModel reports a Run on an agent built without a model (dry run only).
var ErrNoModel = errors.New("agent: no model configured")

// Options configures an [Agent]. Only Model and Transcript are needed to
// Run; an agent without them can still render its [Agent.Prompt].
type Options struct {
	// Model is the main, tool-calling model.
	Model Model
	// Models are the other main models a place's stored settings may
	// choose (skill.Skill.Model), by name; a turn in such a place calls
	// its model instead of Model. A name not here calls Model.
	Models map[string]Model
	// Cheap compacts and summarizes; nil or failing falls back to Model.
	Cheap Model
	// Tools is the tool surface; nil offers no tools.
	Tools Toolbox
	// Transcript persists every step.
	Transcript Transcript
	// Memory faults in recall and takes write-back; nil disables both.
	Memory Memory
	// Budget, when set, is asked before every model call of a turn but
	// its first (which the caller checks before running the turn, as
	// usage.Meter.Guard does): once a daily token budget is used up, the
	// turn ends there with its sentence, what the turn did and where it
	// got to. Nil: no budget is checked during a turn.
	Budget Budget

	// ActorDID is Neo's identity, pinned in the system block.
	ActorDID string
	// Charter replaces the built-in charter when set.
	Charter string
	// Constraints are extra hard constraints pinned in the system block.
	Constraints []string
	// Skills give each place its instructions and say whether Neo may
	// spend there (the tools themselves are gated by Tools). Nil gives
	// every place the built-in default skill.
	Skills *skill.Set

	// Vision says the main model sees images: a message's pictures go to
	// it as image content. Without it they are named in the text as not
	// shown, and the user is told Neo cannot see them.
	Vision bool

	// ContextWindow is the main model's window in tokens (default 128k).
	ContextWindow int
	// SoftPct and HardPct are the compaction thresholds (0.80, 0.92).
	SoftPct, HardPct float64
	// Counter estimates tokens when the provider reports no usage
	// (default compact.Heuristic).
	Counter compact.Counter
	// StepBudget caps model calls per turn (default 24).
	StepBudget int
	// ResultCap caps each tool result shown to the model, in bytes
	// (default 16 KiB); the result stays in the transcript up to
	// StoredResultCap.
	ResultCap int
	// StoredResultCap caps each tool result kept in the transcript, in
	// bytes (default 256 KiB), so one tool cannot fill the disk; the
	// stored text says how much was not kept.
	StoredResultCap int
	// MaxRetriesPerTool, MaxAdaptAttempts, NoProgressStall and
	// RefaultEvery tune the ladder (defaults 3, 2, 3, 6).
	MaxRetriesPerTool int
	MaxAdaptAttempts  int
	NoProgressStall   int
	RefaultEvery      int
	// MaxCompactionsPerTurn, when positive, caps a turn's compactions.
	// By default a turn compacts as often as it needs while each
	// compaction frees room; when one frees (almost) nothing, or the cap
	// is reached, the turn's oldest tool results are set aside (archived
	// behind one-line stubs), and only a request that still cannot fit
	// ends the turn honestly. StepBudget bounds it either way.
	MaxCompactionsPerTurn int
	// MaxCallsPerStep caps the tool calls run from one model reply
	// (default 8); the rest are answered "not run" so the model asks
	// again. MaxParallelCalls caps how many run at once (default 4).
	// core_execute calls always run one at a time, in order.
	MaxCallsPerStep  int
	MaxParallelCalls int
	// BackoffBase and BackoffMax shape retry delays (500ms, 8s); a
	// provider's Retry-After wins, capped at one minute.
	BackoffBase, BackoffMax time.Duration

	// Logger records what the user does not see (zero value: silent).
	Logger zerolog.Logger
	// Observe, when set, is told of every step, compaction, stall and
	// turn outcome (for metrics). It must not block.
	Observe func(Event)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Sleep waits between retries (default: a timer that honours ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a float in [0,1) for jitter (default math/rand/v2).
	Rand func() float64
}

// Agent runs turns. It is safe for concurrent use by turns of different
// threads; turns of one thread must run one at a time.
type Agent struct {
	opts      Options
	budget    compact.Budget
	compactor *compact.Compactor
	log       zerolog.Logger
	tools     toolsMemo // token estimates of the tool lists seen

	later sync.WaitGroup // memory write-backs after their turns
	// shows runs each turn's first status beside the turn, on goroutines
	// kept warm between turns (core/warm).
	shows   *warm.Pool
	writers chan struct{} // a slot per running write-back
	// quit ends when Close gives up waiting: write-backs still running stop.
	quit    context.Context
	quitNow context.CancelFunc
}

// New returns an Agent with defaults filled in.
func New(opts Options) (*Agent, error) {
	if opts.ContextWindow < 0 || opts.StepBudget < 0 || opts.ResultCap < 0 {
		return nil, fmt.Errorf("agent: negative option (window %d, steps %d, cap %d)", opts.ContextWindow, opts.StepBudget, opts.ResultCap)
	}
	if opts.SoftPct != 0 && opts.HardPct != 0 && opts.SoftPct >= opts.HardPct {
		return nil, fmt.Errorf("agent: soft threshold %.2f must be below hard %.2f", opts.SoftPct, opts.HardPct)
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.ContextWindow, DefaultContextWindow)
	def(&opts.StepBudget, DefaultStepBudget)
	def(&opts.ResultCap, DefaultResultCap)
	def(&opts.StoredResultCap, DefaultStoredResultCap)
	def(&opts.MaxRetriesPerTool, DefaultMaxRetriesPerTool)
	def(&opts.MaxAdaptAttempts, DefaultMaxAdaptAttempts)
	def(&opts.NoProgressStall, DefaultNoProgressStall)
	def(&opts.RefaultEvery, DefaultRefaultEvery)
	def(&opts.MaxCallsPerStep, DefaultMaxCallsPerStep)
	def(&opts.MaxParallelCalls, DefaultMaxParallelCalls)
	if opts.SoftPct <= 0 {
		opts.SoftPct = compact.DefaultSoftPct
	}
	if opts.HardPct <= 0 {
		opts.HardPct = compact.DefaultHardPct
	}
	if opts.Counter == nil {
		opts.Counter = compact.Heuristic
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 500 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 8 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	quit, quitNow := context.WithCancel(context.Background())
	return &Agent{
		opts:   opts,
		budget: compact.Budget{Window: opts.ContextWindow, SoftPct: opts.SoftPct, HardPct: opts.HardPct},
		compactor: compact.New(compact.Options{
			Cheap: opts.Cheap, Main: opts.Model, Logger: opts.Logger,
			MaxTokens: int(summaryShare * float64(opts.ContextWindow)), Counter: opts.Counter,
		}),
		log:     opts.Logger,
		writers: make(chan struct{}, maxWriteBacks),
		shows:   warm.New(parkedShows),
		quit:    quit,
		quitNow: quitNow,
	}, nil
}

// parkedShows is how many status goroutines the agent keeps parked
// between turns.
const parkedShows = 16

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
