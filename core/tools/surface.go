package tools

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/neobot/neobot/core"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
	"github.com/rs/zerolog"
)

// Options configures [Spawn].
type Options struct {
	// Manifest declares the MCP servers. Nil means no MCP tools: only the
	// synthetic functions.
	Manifest *mcp.Manifest
	// EscalatePatterns replace DefaultEscalatePatterns; the manifest's
	// escalate_patterns add to them. They classify a tool that declares no
	// side-effect class: a case-insensitive substring of its name makes it
	// spend, as does a payment word ([DefaultEscalateWords], which always
	// apply); anything else counts as external, and is asked before each
	// call where an external one would run outright.
	EscalatePatterns []string
	// Skills decide, per place, which tools the model sees and what each
	// call may do. Nil gives every place the built-in default skill.
	Skills *skill.Set
	// Delegate runs core_execute. Nil keeps core_execute advertised; it
	// then answers that no execution daemon is configured.
	Delegate Synthetic
	// Execute runs core_execute with neobot's own executor when Delegate
	// is nil. It is offered only in places whose skill may use at least
	// one spend-class tool; with neither, core_execute is not offered.
	Execute Synthetic
	// NewExecute, when Execute is nil, makes it from the surface itself,
	// once the surface is built: neobot's own executor plans over the
	// surface's spend tools, so it cannot exist before the surface does.
	// Spawn fails with its error.
	NewExecute func(*Surface) (Synthetic, error)
	// Calls records approved calls before they are made, so none is made
	// twice under one approval (see core.CallLog). Nil keeps no record.
	Calls core.CallLog
	// Holds, when set, keeps a turn whose tool runs as a task from being
	// stopped by anyone but its person while the task runs (a stop
	// cancels the task): core.Gates.
	Holds Holder
	// Run names this run of neobot in the calls log, so that a call found
	// begun by an earlier run is known to have been cut off by a stop
	// (default: a random name, new for each Spawn; one surface lives as
	// long as its process).
	Run string
	// Recall runs memory_recall. Nil hides memory_recall.
	Recall Synthetic
	// Forget runs memory_forget. Nil hides memory_forget.
	Forget Synthetic
	// History runs history_search over the thread's archived messages.
	// Nil hides history_search.
	History Synthetic
	// Questions lets servers ask the person whose turn it is questions
	// during a call (MCP elicitation), through the turn's approver; off,
	// neobot declares no elicitation and servers cannot ask.
	Questions bool
	// QuestionTimeout is how long a question waits for its answer before
	// it is cancelled (default DefaultQuestionTimeout). The call's own
	// timeout does not run meanwhile.
	QuestionTimeout time.Duration
	// CallTimeout bounds each MCP tool call (default 60s). core_execute
	// and memory_recall are bounded by their own implementations.
	CallTimeout time.Duration
	// StartTimeout bounds each server's start (default 60s; see mcp.Options).
	StartTimeout time.Duration
	// LookupEnv resolves the manifest's $env: references (default
	// os.LookupEnv).
	LookupEnv mcp.LookupEnv
	// OAuth authorizes the manifest's http servers with auth (see
	// mcp.Options.OAuth); nil leaves them waiting for NEO_SECRET_KEY.
	OAuth *mcp.OAuth
	// InProcess holds Go servers for "inprocess" manifest entries.
	InProcess map[string]*mcp.Server
	// RestartBackoff is the first delay before restarting a crashed server
	// (default 500ms).
	RestartBackoff time.Duration
	// OnStatus, when set, is told of every change of a server's state
	// (see mcp.Options.OnStatus); it must not block.
	OnStatus func(mcp.Status)
	// OnProcess, when set, is told when a place's process of a server
	// starts or stops (see mcp.Options.OnProcess); it must not block.
	OnProcess func(mcp.ProcessEvent)
	// Logger receives server lifecycle events. The zero value is silent.
	Logger zerolog.Logger
}

// binding is what a function name stands for.
type binding struct {
	alias, tool string
	uri         mcp.ToolURI
	uriText     string
	effect      mcp.Effect
	declared    bool // the manifest declares effect; else the name patterns decided
	class       Class
}

// Surface is Neo's tool surface. It is safe for concurrent use.
type Surface struct {
	mgr         *mcp.Manager // nil without a manifest
	did         string
	patterns    []string
	delegate    Synthetic
	execute     Synthetic
	calls       core.CallLog
	holds       Holder
	run         string // names this run in the calls log
	recall      Synthetic
	forget      Synthetic
	history     Synthetic
	callTimeout time.Duration
	byFunc      map[string]binding
	funcOf      map[toolRef]string
	manifest    *mcp.Manifest // nil without one
	skills      *skill.Set
	gate        gate
	overrides   []string // escalate-named tools the manifest declares otherwise, for check

	// questions and questionTimeout: see Options.
	questions       bool
	questionTimeout time.Duration

	mu    sync.Mutex
	cache map[*skill.Skill]schemaCache
}

// schemaCache is one skill's advertised functions at one generation of the
// servers.
type schemaCache struct {
	gen   uint64
	tools []llm.Tool
}

// Spawn starts every server of the manifest in parallel, binds function
// names and classifies each tool. A server that fails to start, or whose
// tools differ from the manifest, is skipped with a warning (see
// [Surface.Warnings]): Neo degrades rather than refusing to boot. Spawn
// fails on an invalid manifest or when ctx ends during the boot; ctx does
// not bound the servers' lives, Close does.
func Spawn(ctx context.Context, opts Options) (*Surface, error) {
	s, err := start(ctx, opts)
	if err != nil || s.execute != nil || opts.NewExecute == nil {
		return s, err
	}
	execute, err := opts.NewExecute(s)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("tools: core_execute: %w", err)
	}
	s.mu.Lock()
	s.execute = execute
	clear(s.cache) // schemas listed while it was made lack core_execute
	s.mu.Unlock()
	return s, nil
}

// start is Spawn but for Options.NewExecute.
func start(ctx context.Context, opts Options) (*Surface, error) {
	s := &Surface{
		delegate: opts.Delegate, execute: opts.Execute, calls: opts.Calls, holds: opts.Holds, recall: opts.Recall, forget: opts.Forget, history: opts.History, callTimeout: opts.CallTimeout,
		byFunc: map[string]binding{}, funcOf: map[toolRef]string{},
		manifest: opts.Manifest, skills: opts.Skills, gate: newGate(opts.Logger),
		cache: map[*skill.Skill]schemaCache{},
	}
	if s.callTimeout <= 0 {
		s.callTimeout = 60 * time.Second
	}
	if s.run = opts.Run; s.run == "" {
		s.run = newRun()
	}
	s.questions, s.questionTimeout = opts.Questions, opts.QuestionTimeout
	if s.questionTimeout <= 0 {
		s.questionTimeout = DefaultQuestionTimeout
	}
	s.patterns = DefaultEscalatePatterns()
	if opts.EscalatePatterns != nil {
		s.patterns = slices.Clone(opts.EscalatePatterns)
	}
	if opts.Manifest != nil {
		for _, p := range opts.Manifest.EscalatePatterns {
			if !slices.Contains(s.patterns, p) {
				s.patterns = append(s.patterns, p)
			}
		}
	}
	if opts.Manifest == nil {
		return s, nil
	}
	if err := opts.Manifest.Validate(); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	s.did = opts.Manifest.DID
	// Names come from the whole manifest, not from the servers that came
	// up, so a function keeps its name from one boot to the next.
	var refs []toolRef
	for _, spec := range opts.Manifest.Servers {
		for _, t := range spec.Tools {
			refs = append(refs, toolRef{spec.Alias, t})
		}
	}
	versions := map[string]string{}
	for _, spec := range opts.Manifest.Servers {
		versions[spec.Alias] = spec.Version
	}
	for ref, name := range bindNames(refs, core.CoreExecute, MemoryRecall, MemoryForget, HistorySearch, ReadResource) {
		s.funcOf[ref] = name
		b := binding{alias: ref.alias, tool: ref.tool, uri: mcp.ToolURI{Alias: ref.alias, Tool: ref.tool, Version: versions[ref.alias]}}
		b.uriText = b.uri.String()
		b.effect, b.declared = opts.Manifest.Effect(ref.alias, ref.tool)
		own, ownDeclared := opts.Manifest.ToolEffect(ref.alias, ref.tool)
		switch escalate := Classify(ref.tool, s.patterns) == Escalate; {
		case escalate && !ownDeclared:
			// A name that says it moves money wins over a server-wide
			// class: only the tool's own entry can say otherwise.
			b.effect = mcp.EffectSpend
		case escalate && own != mcp.EffectSpend:
			s.overrides = append(s.overrides, fmt.Sprintf("%s/%s matches an escalate pattern but its tool_side_effects entry makes it %s: "+
				"the model calls it directly, without core_execute and without a spend approval; remove the entry unless it truly moves no money", ref.alias, ref.tool, own))
		case !b.declared:
			b.effect = mcp.EffectExternal // the strictest class short of spend
		}
		if b.effect == mcp.EffectSpend {
			b.class = Escalate
		}
		s.byFunc[name] = b
	}
	mgr, err := mcp.Start(ctx, mcp.Options{
		Manifest: opts.Manifest, StartTimeout: opts.StartTimeout, LookupEnv: opts.LookupEnv,
		InProcess: opts.InProcess, RestartBackoff: opts.RestartBackoff, OnStatus: opts.OnStatus, OnProcess: opts.OnProcess, Logger: opts.Logger,
		OAuth:  opts.OAuth,
		Elicit: s.elicitFunc(),
	})
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	s.mgr = mgr
	return s, nil
}

// Schemas returns the functions advertised to the model in the place of
// ctx's turn (core.WithTurn; outside a turn, the default skill's): every
// Natural tool of the servers that are up (or restarting) that the
// place's skill and the manifest's allowed_side_effects do not deny,
// sorted by name, then core_execute where the skill may spend, then
// memory_recall, memory_forget and history_search when their functions
// are wired. Escalate tools are never included. The result is cached per
// skill until a server changes; callers must not modify it.
func (s *Surface) Schemas(ctx context.Context) []llm.Tool {
	sk, ok := s.skillOf(ctx)
	if !ok {
		// Only what is advertised (neobot check lists it so): a call is
		// decided by Dispatch, which refuses one made outside a turn.
		sk = s.skills.For(core.Inbound{})
	}
	var gen uint64
	if s.mgr != nil {
		gen = s.mgr.Generation()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.cache[sk]; ok && c.gen == gen {
		return c.tools
	}
	var out []llm.Tool
	if s.mgr != nil {
		for _, t := range s.mgr.Tools() {
			name, ok := s.funcOf[toolRef{t.Alias, t.Name}]
			if !ok {
				continue
			}
			if b := s.byFunc[name]; b.class == Escalate || s.verdict(sk, b).Rule == skill.Deny {
				continue
			}
			out = append(out, llm.NewFunctionTool(name, t.Description, parameters(t.InputSchema)))
		}
	}
	slices.SortFunc(out, func(a, b llm.Tool) int { return cmp.Compare(a.Function.Name, b.Function.Name) })
	if s.offersExecute(sk) {
		out = append(out, coreExecuteSchema())
	}
	if s.recall != nil {
		out = append(out, memoryRecallSchema())
	}
	if s.forget != nil {
		out = append(out, memoryForgetSchema())
	}
	if s.history != nil {
		out = append(out, historySearchSchema())
	}
	if servers := s.readableServers(sk); len(servers) > 0 {
		out = append(out, readResourceSchema(servers))
	}
	s.cache[sk] = schemaCache{gen: gen, tools: out}
	return out
}

// parameters makes sure a tool's schema is an object schema with
// properties, which some providers insist on.
func parameters(schema map[string]any) map[string]any {
	p := maps.Clone(schema)
	if p == nil {
		p = map[string]any{}
	}
	if _, ok := p["type"]; !ok {
		p["type"] = "object"
	}
	if _, ok := p["properties"]; !ok && p["type"] == "object" {
		p["properties"] = map[string]any{}
	}
	return p
}

// Servers returns each server's status, in manifest order.
func (s *Surface) Servers() []mcp.Status {
	if s.mgr == nil {
		return nil
	}
	return s.mgr.Status()
}

// Warnings returns the non-fatal problems seen: tools named like spends
// that the manifest declares otherwise, and servers that failed to start
// or were rejected for tool drift.
func (s *Surface) Warnings() []string {
	out := slices.Clone(s.overrides)
	if s.mgr != nil {
		out = append(out, s.mgr.Warnings()...)
	}
	return out
}

// Close stops every server and waits until their processes are gone.
func (s *Surface) Close() error {
	if s.mgr == nil {
		return nil
	}
	if err := s.mgr.Close(); err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	return nil
}

// Server names the MCP server behind function (its manifest alias), or
// "neo" for a synthetic function; "" when function is unknown.
func (s *Surface) Server(function string) string {
	switch function {
	case core.CoreExecute, MemoryRecall, MemoryForget, HistorySearch, ReadResource:
		return "neo"
	}
	if b, ok := s.byFunc[function]; ok {
		return b.alias
	}
	return ""
}

// newRun names a run of neobot: random, so that no two runs share one.
func newRun() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
