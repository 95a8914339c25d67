package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/delegate"
	"github.com/neobot/neobot/core/execute"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/tools"
	acct "github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store"
)

// app is what every command that talks shares: the store, the models, the
// tool surface, memory and the agent, built once from Config.
type app struct {
	cfg     *Config
	log     zerolog.Logger
	db      database
	cluster *cluster // nil unless the database is shared (PostgreSQL)
	gates   *core.Gates
	meter   *acct.Meter
	cortex  *memory.Cortex
	surface *tools.Surface
	agent   *agent.Agent
	skills  *skill.Set // nil: the built-in default everywhere
}

// buildOptions says which parts a command needs.
type buildOptions struct {
	// model: the command talks to the model (not a dry run).
	model bool
}

// build assembles the app. Everything it opens is closed by m.Close.
func (m *Main) build(ctx context.Context, cfg *Config, log zerolog.Logger, opts buildOptions) (*app, error) {
	a := &app{cfg: cfg, log: log}
	if m.tel == nil {
		m.tel = newTelemetry()
	}

	// The manifest comes first: its DID is who the models' calls are
	// metered for, unless NEO_ACTOR_DID says otherwise.
	manifest, err := loadManifest(cfg.Manifest)
	if err != nil {
		return nil, err
	}
	actor := cmp.Or(cfg.ActorDID, manifest.DID)
	if a.skills, err = cfg.loadSkills(manifest); err != nil {
		return nil, err
	}
	if a.skills == nil {
		// Empty, it gives every place the built-in default as nil does,
		// and can take the places' stored settings (governPlaces).
		a.skills, _ = skill.Compile(nil, manifest)
	}

	var main, cheap agent.Model
	var mainClient *llm.Client
	var window int
	var vision bool
	if opts.model {
		if err := cfg.requireModel(); err != nil {
			return nil, err
		}
		client, err := m.newLLM(cfg, cfg.mainEndpoint(), actor, log, cfg.visionEdit(), func(lc *llm.Config) {
			lc.Posture, _ = llm.ParsePosture("NEO_MODEL_OPENS_IN_REASONING", cfg.ModelPosture) // validated with the settings
		})
		if err != nil {
			return nil, err
		}
		mainClient = client
		main, window, vision = &meteredModel{Client: client, t: m.tel}, client.ContextWindow(), client.SeesImages()
		logWindow(log, client)
		if cfg.CheapModel != "" {
			c, err := m.newLLM(cfg, cfg.cheapEndpoint(), actor, log)
			if err != nil {
				return nil, fmt.Errorf("NEO_CHEAP_MODEL: %w", err)
			}
			cheap = &meteredModel{Client: c, t: m.tel}
		}
	}
	if cfg.ContextWindow > 0 {
		window = cfg.ContextWindow
	}

	db, err := openDatabase(ctx, cfg, log.With().Str("component", "store").Logger(), dbOptions{
		observeWrite: m.tel.observeWrite,
		writers:      cfg.MaxConcurrentTurns,
		retention:    store.Retention{ThreadIdle: time.Duration(cfg.RetentionDays) * 24 * time.Hour},
	})
	if err != nil {
		return nil, err
	}
	m.onClose(db.Close)
	a.db = db
	if a.cluster = newCluster(db, log.With().Str("component", "cluster").Logger()); a.cluster != nil {
		m.onClose(func() error { a.cluster.claims.Close(); return nil }) // before the database closes
	}
	a.meter, err = acct.NewMeter(ctx, acct.Options{Store: db, DailyBudget: int64(cfg.DailyTokenBudget), Logger: log.With().Str("component", "usage").Logger()})
	if err != nil {
		return nil, err
	}
	m.runMeter(ctx, a.meter) // stops, with a last flush, before the database closes
	m.tel.watchBudget(int64(cfg.DailyTokenBudget), a.meter.MostSpent)
	if main != nil {
		main.(*meteredModel).record = a.meter.Record
	}
	if mainClient != nil {
		// What an earlier run learned of the model's reasoning: its first
		// answer streams at once. A failed read only costs that answer a
		// short hold.
		if err := mainClient.Recall(ctx, db); err != nil {
			log.Warn().Err(err).Msg("the model's reasoning posture could not be read; the first answer is held back until its first words")
		}
	}
	if cheap != nil {
		cheap.(*meteredModel).record = a.meter.Record
	}
	a.gates = core.NewGates(core.GatesOptions{Store: db, SelfApprove: cfg.SelfApprove})
	m.tel.watchGates(db.PendingGates)
	m.tel.watchDisk(db.DiskFull)

	// Memory writes back with the cheap model; the main model stands in
	// when it is unset or fails, as it does for compaction.
	mopts := memory.Options{Store: db, Logger: log.With().Str("component", "memory").Logger()}
	if cheap != nil {
		mopts.Model = cheap
	}
	if main != nil {
		mopts.Main = main
	}
	a.cortex, err = memory.New(ctx, mopts)
	if err != nil {
		return nil, fmt.Errorf("open memory: %w", err)
	}

	oauthOpts, err := oauthOptions(cfg, db)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	topts := tools.Options{
		OAuth:       oauthOpts,
		Manifest:    manifest,
		Skills:      a.skills,
		Recall:      tools.FromContext(a.cortex.RecallTool),
		Forget:      tools.FromContext(a.cortex.ForgetTool),
		History:     agent.NewHistory(db).Search,
		OnStatus:    m.tel.observeServer,
		LookupEnv:   m.lookupEnv,
		Calls:       db,
		CallTimeout: cfg.ToolTimeout,
		Logger:      log.With().Str("component", "tools").Logger(),
		// Servers ask their questions through the turn's approver, as a
		// gate: in the thread, of the person whose turn it is.
		Questions:       true,
		QuestionTimeout: cfg.QuestionTimeout,
	}
	// Without a daemon, spends run in neobot's own executor, which plans
	// with the main model over the surface's spend tools: the surface is
	// built first, the executor after, so core_execute reaches it late.
	var exec *execute.Executor
	if cfg.DaemonURL == "" {
		topts.Execute = tools.FromContext(func(ctx context.Context, intent string) (string, error) {
			if exec == nil { // a dry run: nothing is ever dispatched
				return "", errors.New("no model to plan spends with")
			}
			return exec.Run(ctx, intent)
		})
	}
	if cfg.DaemonURL != "" {
		d, err := delegate.New(delegate.Options{
			BaseURL:      cfg.DaemonURL,
			Token:        cfg.DaemonToken.Reveal(),
			CallerDID:    actor,
			CallerWallet: cfg.CallerWallet,
			PollInterval: cfg.DaemonPoll,
			MaxWait:      cfg.DaemonWait,
			Authorize:    cfg.spendPolicy().Authorize,
			Ledger:       db,
			HTTPClient:   &http.Client{Transport: m.outbound(cfg)},
			Logger:       log.With().Str("component", "delegate").Logger(),
		})
		if err != nil {
			return nil, err
		}
		topts.Delegate = tools.FromContext(d.Run)
	}
	a.surface, err = tools.Spawn(ctx, topts)
	if err != nil {
		return nil, fmt.Errorf("start tools: %w", err)
	}
	m.onClose(a.surface.Close)
	if topts.Execute != nil && main != nil {
		exec, err = execute.New(execute.Options{
			Model: main, Tools: a.surface, Ledger: db, Delegations: db, Skills: a.skills,
			Authorize: cfg.spendPolicy().Authorize, Observe: m.tel.observeSpend,
			Logger: log.With().Str("component", "execute").Logger(),
		})
		if err != nil {
			return nil, err
		}
	}
	for _, w := range a.surface.Warnings() {
		log.Warn().Str("component", "tools").Msg(w)
	}

	aopts := agent.Options{
		Tools:           meteredTools{Surface: a.surface, t: m.tel},
		Observe:         m.tel.observeAgent,
		Transcript:      db,
		Memory:          a.cortex,
		ActorDID:        actor,
		ContextWindow:   window,
		Vision:          vision,
		SoftPct:         cfg.CompactSoft,
		HardPct:         cfg.CompactHard,
		StepBudget:      cfg.StepBudget,
		ResultCap:       cfg.ToolResultCap,
		StoredResultCap: cfg.StoredCap,
		Skills:          a.skills,
		Logger:          log.With().Str("component", "agent").Logger(),
	}
	if main != nil {
		aopts.Model, aopts.Cheap = main, cheap
	}
	a.agent, err = agent.New(aopts)
	if err != nil {
		return nil, fmt.Errorf("build agent: %w", err)
	}
	m.onClose(a.agent.Close) // before the database closes: write-backs still running finish
	return a, nil
}

// newLLM builds a client for the model at ep; API keys come from the
// process environment (FIREWORKS_API_KEY and friends) unless the
// endpoint's key (NEO_LLM_API_KEY, NEO_CHEAP_LLM_API_KEY) is set.
func (m *Main) newLLM(cfg *Config, ep modelEndpoint, actor string, log zerolog.Logger, edit ...func(*llm.Config)) (*llm.Client, error) {
	model := ep.model
	lc := llm.Config{
		Model:          model,
		Provider:       ep.provider,
		BaseURL:        ep.baseURL,
		BaseURLSetting: ep.baseVar,
		APIKey:         ep.key.Reveal(),
		GatewayURL:     cfg.GatewayURL,
		GatewayToken:   cfg.GatewayToken.Reveal(),
		ActorDID:       actor,
		ContextWindow:  cfg.ContextWindow,
		Env:            m.Getenv,
		HTTPClient:     &http.Client{Transport: m.outbound(cfg)},
		Logger:         log.With().Str("component", "llm").Str("model_role", ep.role).Logger(),
	}
	for _, e := range edit {
		e(&lc)
	}
	c, err := llm.New(lc)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", model, err)
	}
	return c, nil
}

// setup loads the configuration and the logger, the first step of every
// command but version and help.
func (m *Main) setup(name string, args []string, extra func(*flag.FlagSet)) (*Config, []string, zerolog.Logger, error) {
	out := m.Stderr
	if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
		out = m.Stdout // asked for: usage is the answer, not an error
	}
	cfg, rest, err := loadConfig(name, args, m.Getenv, out, extra)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, zerolog.Nop(), err
		}
		return nil, nil, zerolog.Nop(), fmt.Errorf("configuration: %w", err)
	}
	m.scrub = newScrubber(m.Stderr)
	m.scrub.add(cfg.secrets()...)
	log, err := newScrubbedLogger(m.Stderr, m.scrub, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, nil, zerolog.Nop(), fmt.Errorf("configuration: %w", err)
	}
	if cfg.CPUProfile != "" {
		if err := m.profileCPU(cfg.CPUProfile); err != nil {
			return nil, nil, zerolog.Nop(), fmt.Errorf("NEO_CPU_PROFILE: %w", err)
		}
	}
	return cfg, rest, log, nil
}

// profileCPU profiles the process until Close, into path.
func (m *Main) profileCPU(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	m.onClose(func() error {
		pprof.StopCPUProfile()
		return f.Close()
	})
	return nil
}

// runMeter flushes recorded usage in the background until Close, which
// waits for its last flush.
func (m *Main) runMeter(ctx context.Context, meter *acct.Meter) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		meter.Run(ctx)
	}()
	m.onClose(func() error {
		cancel()
		<-done
		return nil
	})
}
