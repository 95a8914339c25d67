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

	"github.com/neobot/neobot/cmd/neobot/internal/cluster"
	"github.com/neobot/neobot/cmd/neobot/internal/connect"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/delegate"
	"github.com/neobot/neobot/core/execute"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/tools"
	acct "github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/postgres"
)

// app is what every command that talks shares: the store, the models, the
// tool surface, memory and the agent, built once from Config.
type app struct {
	cfg     *Config
	log     zerolog.Logger
	db      database
	cluster *cluster.Cluster // nil unless the database is shared (PostgreSQL)
	gates   *core.Gates
	meter   *acct.Meter
	cortex  *memory.Cortex
	surface *tools.Surface
	agent   *agent.Agent
	skills  *skill.Set     // nil: the built-in default everywhere
	links   *connect.Links // nil without NEO_SECRET_KEY: per_user connect links
	// reapply applies the stored place settings on this instance after a
	// change (governPlaces); nil for commands that change none.
	reapply func(context.Context) error
}

// buildOptions says which parts a command needs.
type buildOptions struct {
	// model: the command talks to the model (not a dry run).
	model bool
}

// build assembles the app in dependency order, each part from the parts
// before it, none patched afterwards: the manifest and skills, the store,
// usage accounting, the models (metered into it from the start), the
// gates and memory, the tool surface with core_execute behind it, and the
// agent. Everything it opens is closed by m.Close.
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
		if a.skills, err = skill.Compile(nil, manifest); err != nil {
			return nil, fmt.Errorf("skills: the built-in default against the manifest: %w", err)
		}
	}

	if opts.model {
		if err := cfg.requireModel(); err != nil {
			return nil, err
		}
	}
	if err := m.buildStore(ctx, a); err != nil {
		return nil, err
	}
	var ms models
	if opts.model {
		if ms, err = m.buildModels(ctx, a, actor); err != nil {
			return nil, err
		}
	}
	a.gates = core.NewGates(core.GatesOptions{Store: a.db, SelfApprove: cfg.SelfApprove})
	m.tel.watchGates(a.db.PendingGates)
	m.tel.watchDisk(a.db.DiskFull)

	// Memory writes back with the cheap model; the main model stands in
	// when it is unset or fails, as it does for compaction.
	mopts := memory.Options{Store: a.db, Logger: log.With().Str("component", "memory").Logger()}
	if ms.cheap != nil {
		mopts.Model = ms.cheap
	}
	if ms.main != nil {
		mopts.Main = ms.main
	}
	if a.cortex, err = memory.New(ctx, mopts); err != nil {
		return nil, fmt.Errorf("open memory: %w", err)
	}
	if err := m.buildTools(ctx, a, manifest, actor, ms.main); err != nil {
		return nil, err
	}
	return a, m.buildAgent(a, actor, ms)
}

// models are the clients a command talks to; both are nil for a command
// that does not (a dry run), and cheap is nil without NEO_CHEAP_MODEL.
type models struct {
	main, cheap *meteredModel
	// places are the other main models a place may choose (NEO_MODELS),
	// by name.
	places map[string]*meteredModel
	window int  // the main model's context window, in tokens
	vision bool // the main model reads pictures
}

// buildStore opens the database, the cluster when it is shared, and the
// usage meter that writes into it.
func (m *Main) buildStore(ctx context.Context, a *app) error {
	cfg, log := a.cfg, a.log
	db, err := openDatabase(ctx, cfg, log.With().Str("component", "store").Logger(), dbOptions{
		observeWrite: m.tel.observeWrite,
		writers:      cfg.MaxConcurrentTurns,
		retention:    store.Retention{ThreadIdle: time.Duration(cfg.RetentionDays) * 24 * time.Hour},
	})
	if err != nil {
		return err
	}
	m.onClose(db.Close)
	a.db = db
	if pg, ok := db.(*postgres.DB); ok {
		a.cluster = cluster.New(pg, pg.Claims(), cluster.Intervals{}, log.With().Str("component", "cluster").Logger())
		m.onClose(func() error { a.cluster.Close(); return nil }) // before the database closes
	}
	a.meter, err = acct.NewMeter(ctx, acct.Options{Store: db, DailyBudget: int64(cfg.DailyTokenBudget), Raisers: cfg.budgetRaisers, Logger: log.With().Str("component", "usage").Logger()})
	if err != nil {
		return err
	}
	m.runMeter(ctx, a.meter) // stops, with a last flush, before the database closes
	m.tel.watchBudget(int64(cfg.DailyTokenBudget), a.meter.MostSpent)
	return nil
}

// buildModels makes the main model's client and the cheap one's, each
// counted in the metrics and in a's usage meter.
func (m *Main) buildModels(ctx context.Context, a *app, actor string) (models, error) {
	cfg, log := a.cfg, a.log
	client, err := m.newLLM(cfg, cfg.mainEndpoint(), actor, log, cfg.visionEdit(), func(lc *llm.Config) {
		lc.Posture, _ = llm.ParsePosture("NEO_MODEL_OPENS_IN_REASONING", cfg.ModelPosture) // validated with the settings
	})
	if err != nil {
		return models{}, err
	}
	logWindow(log, client)
	// What an earlier run learned of the model's reasoning: its first
	// answer streams at once. A failed read only costs that answer a short
	// hold.
	if err := client.Recall(ctx, a.db); err != nil {
		log.Warn().Err(err).Msg("the model's reasoning posture could not be read; the first answer is held back until its first words")
	}
	ms := models{
		main:   &meteredModel{Client: client, t: m.tel, record: a.meter.Record},
		window: client.ContextWindow(), vision: client.SeesImages(),
	}
	for _, name := range cfg.placeModels()[1:] {
		ep := cfg.mainEndpoint()
		ep.model, ep.modelVar = name, "NEO_MODELS"
		c, err := m.newLLM(cfg, ep, actor, log)
		if err != nil {
			return models{}, fmt.Errorf("NEO_MODELS: %w", err)
		}
		if ms.places == nil {
			ms.places = map[string]*meteredModel{}
		}
		// The turn's window and pictures suit every model a place may
		// choose: the smallest window, pictures only if all see them.
		ms.places[name] = &meteredModel{Client: c, t: m.tel, record: a.meter.Record}
		ms.window, ms.vision = min(ms.window, c.ContextWindow()), ms.vision && c.SeesImages()
	}
	if cfg.CheapModel != "" {
		c, err := m.newLLM(cfg, cfg.cheapEndpoint(), actor, log)
		if err != nil {
			return models{}, fmt.Errorf("NEO_CHEAP_MODEL: %w", err)
		}
		ms.cheap = &meteredModel{Client: c, t: m.tel, record: a.meter.Record}
	}
	return ms, nil
}

// buildTools starts the tool surface, with core_execute going to the
// execution daemon when one is configured, else to neobot's own executor,
// which plans with main over the surface's own spend tools.
func (m *Main) buildTools(ctx context.Context, a *app, manifest *mcp.Manifest, actor string, main *meteredModel) error {
	cfg, log := a.cfg, a.log
	oauthOpts, err := oauthOptions(cfg, a.db)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if oauthOpts != nil {
		a.links = connect.New(linkOptions(cfg, log.With().Str("component", "links").Logger()))
		oauthOpts.Links = a.links
		a.links.WarnUnbindable(map[string]bool{"slack": cfg.SlackBotToken != "", "discord": cfg.DiscordBotToken != ""}, manifest)
	}
	topts := tools.Options{
		OAuth:       oauthOpts,
		Manifest:    manifest,
		Skills:      a.skills,
		Recall:      tools.FromContext(a.cortex.RecallTool),
		Forget:      tools.FromContext(a.cortex.ForgetTool),
		History:     agent.NewHistoryPaged(a.db, cfg.ToolResultCap).Search,
		OnStatus:    m.tel.observeServer,
		OnProcess:   m.tel.observeProcess,
		LookupEnv:   m.lookupEnv,
		Calls:       a.db,
		Holds:       a.gates,
		CallTimeout: cfg.ToolTimeout,
		Logger:      log.With().Str("component", "tools").Logger(),
		// Servers ask their questions through the turn's approver, as a
		// gate: in the thread, of the person whose turn it is.
		Questions:       true,
		QuestionTimeout: cfg.QuestionTimeout,
	}
	switch {
	case cfg.DaemonURL != "":
		d, err := delegate.New(delegate.Options{
			BaseURL:      cfg.DaemonURL,
			Token:        cfg.DaemonToken.Reveal(),
			CallerDID:    actor,
			CallerWallet: cfg.CallerWallet,
			PollInterval: cfg.DaemonPoll,
			MaxWait:      cfg.DaemonWait,
			Authorize:    cfg.spendPolicy().Authorize,
			// The daemon's gates, like neobot's own, may be approved by
			// the people the place's stored settings name.
			PlaceApprovers: func(in core.Inbound) []string { return a.skills.For(in).Approvers },
			Ledger:         a.db,
			HTTPClient:     &http.Client{Transport: m.outbound(cfg)},
			Logger:         log.With().Str("component", "delegate").Logger(),
		})
		if err != nil {
			return err
		}
		topts.Delegate = tools.FromContext(d.Run)
	case main != nil:
		topts.NewExecute = func(s *tools.Surface) (tools.Synthetic, error) {
			exec, err := execute.New(execute.Options{
				Model: main, Tools: s, Ledger: a.db, Delegations: a.db, Skills: a.skills,
				Authorize: cfg.spendPolicy().Authorize, Observe: m.tel.observeSpend,
				Logger: log.With().Str("component", "execute").Logger(),
			})
			if err != nil {
				return nil, err
			}
			return tools.FromContext(exec.Run), nil
		}
	default:
		// A dry run (neobot check): core_execute is described as it will
		// be offered, and never dispatched.
		topts.Execute = func(context.Context, core.ToolCall, string) (string, error) {
			return "", errors.New("no model to plan spends with")
		}
	}
	if a.surface, err = tools.Spawn(ctx, topts); err != nil {
		return fmt.Errorf("start tools: %w", err)
	}
	m.onClose(a.surface.Close)
	for _, w := range a.surface.Warnings() {
		log.Warn().Str("component", "tools").Msg(w)
	}
	return nil
}

// buildAgent makes the agent over a's tools, transcript and memory.
func (m *Main) buildAgent(a *app, actor string, ms models) error {
	cfg := a.cfg
	aopts := agent.Options{
		Tools:           meteredTools{Surface: a.surface, t: m.tel},
		Observe:         m.tel.observeAgent,
		Transcript:      a.db,
		Memory:          a.cortex,
		ActorDID:        actor,
		ContextWindow:   cmp.Or(cfg.ContextWindow, ms.window),
		Vision:          ms.vision,
		SoftPct:         cfg.CompactSoft,
		HardPct:         cfg.CompactHard,
		StepBudget:      cfg.StepBudget,
		ResultCap:       cfg.ToolResultCap,
		StoredResultCap: cfg.StoredCap,
		Skills:          a.skills,
		Logger:          a.log.With().Str("component", "agent").Logger(),
	}
	if a.meter != nil {
		aopts.Budget = a.meter // a long turn stops at a daily budget
	}
	if ms.main != nil {
		aopts.Model = ms.main
	}
	for name, c := range ms.places {
		if aopts.Models == nil {
			aopts.Models = map[string]agent.Model{}
		}
		aopts.Models[name] = c
	}
	if ms.cheap != nil {
		aopts.Cheap = ms.cheap
	}
	var err error
	if a.agent, err = agent.New(aopts); err != nil {
		return fmt.Errorf("build agent: %w", err)
	}
	m.onClose(a.agent.Close) // before the database closes: write-backs still running finish
	return nil
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
