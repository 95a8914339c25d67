package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/neobot/neobot/adapters/discord"
	"github.com/neobot/neobot/adapters/slack"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/cmd/neobot/internal/cluster"
	"github.com/neobot/neobot/cmd/neobot/internal/connect"
	"github.com/neobot/neobot/cmd/neobot/internal/ops"
	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/conversation"
	"github.com/neobot/neobot/core/governance"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/quota"
	"github.com/neobot/neobot/store/postgres"
)

// runBot is plain `neobot`: Neo in Slack when SLACK_BOT_TOKEN is set, in
// Discord when DISCORD_BOT_TOKEN is set, in both when both are; otherwise
// a conversation in this terminal.
func (m *Main) runBot(ctx context.Context, args []string) error {
	cfg, _, log, err := m.setup("neobot", args, nil)
	if err != nil {
		return err
	}
	return m.serve(ctx, cfg, log, "")
}

// serve runs the bot on every configured platform; with webLogin set, it
// also prints a one-time link that signs webLogin in on the chat page.
func (m *Main) serve(ctx context.Context, cfg *Config, log zerolog.Logger, webLogin string) error {
	if cfg.SlackBotToken == "" && !cfg.slackDistributed() && cfg.DiscordBotToken == "" && cfg.WebAddr == "" {
		if !m.interactive() {
			// In a container nobody types: a missing token must fail the
			// deploy, not idle in a terminal mode that exits 0.
			return errors.New("configuration: neither SLACK_BOT_TOKEN nor DISCORD_BOT_TOKEN is set, and stdin is not a terminal to talk in: " +
				"set a platform's token, or run `neobot chat` to talk in this terminal")
		}
		log.Info().Msg("no SLACK_BOT_TOKEN or DISCORD_BOT_TOKEN: starting a conversation in this terminal")
		return m.chat(ctx, cfg, log, "default", false)
	}
	ctx, cancel := m.interruptible(ctx) // in Slack or Discord, Ctrl-C is a shutdown, like SIGTERM
	defer cancel()
	o := &ops.Server{}
	if cfg.HealthAddr != "" {
		stop, err := o.Serve(ctx, cfg.HealthAddr, ops.Production(), callbackPath, clientDocPath, connect.Path, connect.SigninPath)
		if err != nil {
			return err
		}
		m.onClose(stop)
	}
	a, err := m.build(ctx, cfg, log, buildOptions{model: true})
	if err != nil {
		return err
	}
	reapply, stopGovern, err := governPlaces(ctx, cfg, a.db, a.skills, a.meter, log.With().Str("component", "governance").Logger())
	if err != nil {
		return err
	}
	defer stopGovern()
	a.reapply = reapply
	if err := cfg.spendAuthority(cfg.DaemonURL != "" || a.surface.HasSpendTools()); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	m.tel.watchReady(o.IsReady)
	o.SetMetrics(m.tel.handler())
	if cfg.AdminToken != "" {
		mux := http.NewServeMux()
		api := adminAPI{src: local{db: a.db, cortex: a.cortex}, token: cfg.AdminToken.Reveal(), allowRemote: cfg.AdminRemote, maxBodyBytes: 1 << 20}
		if b, ok := a.db.(backupper); ok {
			api.backup = b.Backup
		}
		api.register(mux)
		api.registerMCP(mux, a.surface)
		if places, ok := a.db.(governance.Store); ok {
			api.registerPlaces(mux, places, a.skills, cfg.checkPlaceModel, reapply)
		}
		o.SetAdmin(mux)
	}
	oauthMux := http.NewServeMux()
	oauthMux.Handle("GET "+callbackPath, connect.Callback(a.surface, a.links))
	if a.links != nil {
		oauthMux.HandleFunc("GET "+connect.Path+"{id}", a.links.ServeLink)
		oauthMux.HandleFunc("GET "+connect.SigninPath, a.links.ServeSignin)
	}
	oauthMux.Handle("GET "+clientDocPath, serveClientDoc(cfg))
	o.SetOAuth(oauthMux)
	m.sweep(ctx, a)

	b, err := m.wire(cfg, log, a)
	if err != nil {
		return err
	}
	if webLogin != "" && b.web != nil {
		link, err := b.web.LoginLink(cfg.webPage(), webLogin)
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "Neo is on the web. Open this link to sign in as %s (it works once, for 15 minutes):\n\n  %s\n\n", webLogin, link)
	}
	if err := b.hub.Start(ctx); err != nil {
		return fmt.Errorf("resume conversations: %w", err)
	}
	clusterCtx, stopCluster := context.WithCancel(ctx)
	defer stopCluster()
	clusterDone := make(chan struct{})
	if a.cluster != nil {
		go func() {
			defer close(clusterDone)
			to := cluster.Targets{Hub: b.hub, Gates: a.gates, Memory: a.cortex}
			if b.web != nil {
				to.Web = b.web
			}
			a.cluster.Run(clusterCtx, to)
		}()
	} else {
		close(clusterDone)
	}
	o.Ready(readiness(a, b)...)

	runErr := runPlatforms(ctx, b.platforms)
	stopCluster() // no more work handed to the hub, which closes next
	<-clusterDone
	if cfg.HeapProfile != "" {
		if err := writeHeapProfile(cfg.HeapProfile); err != nil {
			log.Error().Err(err).Msg("NEO_HEAP_PROFILE")
		}
	}
	// The adapters have stopped taking events; let running turns reach a
	// persisted step, then stop them (their gates stay pending).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace+5*time.Second)
	defer cancel()
	closeErr := b.hub.Close(sctx)
	if runErr != nil {
		return runErr
	}
	log.Info().Msg("neobot stopped")
	return closeErr
}

// bot is the product as it runs: the hub, and the chat adapters attached
// to it.
type bot struct {
	hub       *conversation.Hub
	platforms []platform
	web       *web.Adapter // nil unless NEO_WEB_ADDR is set
}

// wire builds the hub over the app's agent and store, and an adapter for
// every platform with a token, attached to the hub. Nothing runs yet: the
// caller starts the hub and runs the adapters. Benchmarks build the
// product through here too, so they measure what neobot runs.
func (m *Main) wire(cfg *Config, log zerolog.Logger, a *app) (*bot, error) {
	var b bot
	var cl conversation.Cluster
	if a.cluster != nil {
		cl = a.cluster
	}
	hub := conversation.New(conversation.Options{
		Cluster:       cl,
		Linger:        cluster.Linger,
		Stops:         a.gates,
		Runner:        a.meter.Guard(a.agent),
		Journal:       a.db,
		MaxConcurrent: cfg.MaxConcurrentTurns,
		MaxPerUser:    cfg.MaxTurnsPerUser,
		MaxQueued:     cfg.MaxQueuedPerThread,
		Grace:         cfg.ShutdownGrace,
		Logger:        log.With().Str("component", "conversation").Logger(),
	})
	share := quota.New(quota.Limits{
		PerMinute: orOff(cfg.UserMessagesPerMinute), BytesPerDay: int64(orOff(cfg.UserBytesPerDay)), Streams: orOff(cfg.WebStreamsPerUser),
	}, nil)
	if pg, ok := a.db.(*postgres.DB); ok {
		share.Share(pg) // one limit for every instance
	}
	if a.cluster != nil {
		share.ShareStreams(a.cluster) // live web streams too
	}
	rater, err := m.newRater(a)
	if err != nil {
		return nil, err
	}
	var slackTokens connect.BotTokens // the admin page's Slack sign-in asks users.info with them
	if cfg.SlackBotToken != "" || cfg.slackDistributed() {
		sl, err := slackApp(cfg, a.db, slack.Options{
			BotToken:      cfg.SlackBotToken.Reveal(),
			AppToken:      cfg.SlackAppToken.Reveal(),
			SigningSecret: cfg.SlackSigningSecret.Reveal(),
			APIURL:        cfg.SlackAPIURL,
			Mode:          cfg.SlackMode,
			ListenAddr:    cfg.SlackListenAddr,
			Hub:           hub,
			Threads:       a.db,
			Gates:         a.gates,
			HTTPClient:    m.tel.apiClient("slack", m.outbound(cfg)),
			Approvers:     cfg.SlackApprovers,
			Home:          slack.Home{Skills: a.skills, Accounts: a.surface, Spends: a.db, Budgets: a.meter, Model: cfg.Model},
			Rater:         rater,
			Limits: slack.Limits{AllowChannels: cfg.SlackAllowChannels, AllowUsers: cfg.SlackAllowUsers,
				MaxFileBytes: int64(cfg.SlackMaxFileBytes), Quota: share},
			Logger: log.With().Str("component", "slack").Logger(),
		})
		if err != nil {
			return nil, fmt.Errorf("slack: %w", err)
		}
		hub.Attach(slack.Platform, sl)
		slackTokens = botTokens(sl)
		b.platforms = append(b.platforms, platform{name: "slack", run: sl.Run, adapter: sl, connected: sl.Connected})
		log.Info().Str("mode", cfg.SlackMode).Msg("neobot is running in Slack")
	}
	if cfg.DiscordBotToken != "" {
		dc, err := discord.New(discord.Options{
			Token:      cfg.DiscordBotToken.Reveal(),
			APIURL:     cfg.DiscordAPIURL,
			Hub:        hub,
			Threads:    a.db,
			Gates:      a.gates,
			HTTPClient: m.tel.apiClient("discord", m.outbound(cfg)),
			Approvers:  cfg.DiscordApprovers,
			Rater:      rater,
			Home:       discord.Home{Skills: a.skills, Accounts: a.surface, Spends: a.db, Budgets: a.meter, Model: cfg.Model},
			Limits: discord.Limits{AllowChannels: cfg.DiscordAllowChannels, AllowUsers: cfg.DiscordAllowUsers,
				MaxFileBytes: int64(cfg.DiscordMaxFileBytes), Quota: share},
			Logger: log.With().Str("component", "discord").Logger(),
		})
		if err != nil {
			return nil, err
		}
		hub.Attach(discord.Platform, dc)
		p := platform{name: "discord", run: dc.Run, adapter: dc, connected: dc.Connected}
		if a.cluster != nil {
			// One gateway session per shard across every instance: the
			// others stand by, and the first to claim the shard after
			// its holder dies takes over.
			var standby atomic.Bool
			standby.Store(true)
			p.standby = standby.Load
			p.run = func(ctx context.Context) error {
				if !a.cluster.Shard(ctx, 0) {
					return ctx.Err()
				}
				standby.Store(false)
				log.Info().Msg("this instance holds the Discord gateway session")
				held, release := a.cluster.HoldShard(ctx, 0)
				defer release()
				err := dc.Run(held)
				if cause := context.Cause(held); ctx.Err() == nil && errors.Is(cause, cluster.ErrShardLost) {
					return fmt.Errorf("discord: %w", cause)
				}
				return err
			}
		}
		b.platforms = append(b.platforms, p)
		log.Info().Msg("neobot is running in Discord")
	}
	if cfg.WebAddr != "" {
		users, err := web.ParseUsers(cfg.WebUsers)
		if err != nil {
			return nil, fmt.Errorf("NEO_WEB_USERS: %w", err)
		}
		wopts := web.Options{
			Addr: cfg.WebAddr, Users: users, Hub: hub, History: newWebHistory(a.db), Gates: a.gates, Rater: rater,
			Approvers: cfg.WebApprovers, CORSOrigins: cfg.WebCORSOrigins, Quota: share, Files: a.db,
			FeedBytes: int64(cfg.WebFeedBytes), FeedConversationBytes: int64(cfg.WebFeedConvBytes),
			Logger: log.With().Str("component", "web").Logger(),
		}
		if a.cluster != nil {
			wopts.Relay = a.cluster // a browser on any instance sees every turn
		}
		if pg, ok := a.db.(*postgres.DB); ok {
			wopts.Pending = pg // any instance lists every approval, asked before it started too
		}
		if a.links != nil {
			wopts.Connector = a.links // the chat page proves who opens a connect link
		}
		adminPage(cfg, a, &wopts, slackTokens)
		wa, err := web.New(wopts)
		if err != nil {
			return nil, err
		}
		hub.Attach(web.Platform, wa)
		b.web = wa
		run := wa.Run
		if a.cluster != nil {
			// Served once this instance hears the others: a conversation
			// another instance announces from then on is known here.
			run = func(ctx context.Context) error {
				select {
				case <-a.cluster.Listening():
				case <-ctx.Done():
					return nil
				}
				return wa.Run(ctx)
			}
		}
		b.platforms = append(b.platforms, platform{name: "web", run: run, adapter: wa, connected: wa.Connected})
		log.Info().Str("addr", cfg.WebAddr).Msg("neobot is on the web")
	}
	b.hub = hub
	m.tel.watchHub(hub)
	return &b, nil
}

// orOff reads a limit setting: 0 is no limit, which quota spells as a
// negative number (its 0 is the default).
func orOff(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// writeHeapProfile writes the live heap to path, while the bot still
// holds everything it kept during the run.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// platform is one chat adapter: what the hub attaches and how it runs.
type platform struct {
	name      string
	adapter   conversation.Platform
	run       func(ctx context.Context) error
	connected func() bool
	// standby, when set and true, says another instance holds this
	// platform's session: ready, with nothing to connect.
	standby func() bool
}

// readiness is what /readyz checks once the bot runs: the store takes a
// durable write, every platform is connected, the hub runs turns, and the
// MCP surface is up (a server that is down or restarting shows, but the
// bot still serves without its tools).
func readiness(a *app, b *bot) []ops.Check {
	checks := []ops.Check{{Name: "store", Check: func(ctx context.Context) (string, bool) {
		if err := a.db.Ping(ctx); err != nil {
			return err.Error(), false
		}
		return "writable", true
	}}}
	for _, p := range b.platforms {
		checks = append(checks, ops.Check{Name: p.name, Check: func(context.Context) (string, bool) {
			if p.standby != nil && p.standby() {
				return "standby: another instance holds the session", true
			}
			if p.connected() {
				return "connected", true
			}
			return "not connected", false
		}})
	}
	checks = append(checks,
		ops.Check{Name: "conversations", Check: func(context.Context) (string, bool) {
			s := b.hub.Stats()
			if !s.Started {
				return "not running", false
			}
			return fmt.Sprintf("running (%d turns, %d waiting)", s.Running, s.Queued), true
		}},
		ops.Check{Name: "tools", Check: func(context.Context) (string, bool) {
			var parts, down []string
			for _, s := range a.surface.Servers() {
				part := s.Alias + " " + string(s.State)
				if s.Processes > 0 {
					part += fmt.Sprintf(" (%d place processes)", s.Processes)
				}
				if s.State != mcp.StateUp {
					down = append(down, s.Alias)
					if s.Problem != "" {
						part += " (" + s.Problem + ")"
					}
				}
				parts = append(parts, part)
			}
			if len(parts) == 0 {
				return "no MCP servers", true
			}
			detail := strings.Join(parts, ", ")
			if len(down) > 0 {
				// Neo still answers, without those servers' tools.
				detail = "degraded: " + strings.Join(down, ", ") + " not up; " + detail
			}
			return detail, true
		}},
	)
	return checks
}

// runPlatforms runs every adapter until ctx ends or one fails; a failure
// stops the others, and the first is returned.
func runPlatforms(ctx context.Context, ps []platform) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(ps))
	for _, p := range ps {
		go func() {
			err := p.run(ctx)
			if err != nil && !errors.Is(err, context.Canceled) {
				cancel() // errors already name their platform
			} else {
				err = nil
			}
			errc <- err
		}()
	}
	var first error
	for range ps {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// sweep drops what retention says is too old — idle threads, expired
// dedupe keys, old gates and delegations, stale turn excerpts in memory —
// at start and then daily, until ctx ends.
func (m *Main) sweep(ctx context.Context, a *app) {
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(24 * time.Hour)
		defer t.Stop()
		for {
			now := time.Now()
			if st, err := a.db.Sweep(ctx, now); err != nil && ctx.Err() == nil {
				a.log.Error().Err(err).Msg("retention sweep failed; retrying tomorrow")
			} else if err == nil {
				a.log.Debug().Interface("dropped", st).Msg("retention sweep")
			}
			if n, err := a.cortex.Sweep(ctx, now); err != nil && ctx.Err() == nil {
				a.log.Error().Err(err).Msg("memory sweep failed; retrying tomorrow")
			} else if n > 0 {
				a.log.Info().Int("turn_excerpts", n).Msg("memory sweep dropped old turn excerpts")
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			case <-stop:
				return
			}
		}
	}()
	m.onClose(func() error { close(stop); <-done; return nil })
}

// interactive reports whether stdin is a terminal someone can type in.
func (m *Main) interactive() bool {
	f, ok := m.Stdin.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// shutdownBudget is the longest a SIGTERM takes to end the process, which
// the platform's kill timeout must cover (fly.toml's kill_timeout): the
// adapters stop taking events and finish the ones being journaled (5 s),
// the hub lets running turns reach a stored step (NEO_SHUTDOWN_GRACE) and
// stops them (5 s), then memory write-backs finish (agent.CloseGrace), the
// usage meter writes its last counts (5 s), the MCP servers get SIGTERM and
// then SIGKILL (2 s, and 5 s for their output to drain), and the health
// server closes (2 s).
func shutdownBudget(cfg *Config) time.Duration {
	return 5*time.Second + cfg.ShutdownGrace + 5*time.Second + agent.CloseGrace + 5*time.Second + 7*time.Second + 2*time.Second
}
