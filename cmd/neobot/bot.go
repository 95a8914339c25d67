package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neobot/neobot/adapters/slack"
	"github.com/neobot/neobot/core/conversation"
)

// shutdownGrace is how long running turns get to reach a persisted step
// when neobot is asked to stop.
const shutdownGrace = 10 * time.Second

// runBot is plain `neobot`: Neo in Slack when SLACK_BOT_TOKEN is set,
// otherwise a conversation in this terminal.
func (m *Main) runBot(ctx context.Context, args []string) error {
	cfg, _, log, err := m.setup("neobot", args, nil)
	if err != nil {
		return err
	}
	if cfg.SlackBotToken == "" {
		log.Info().Msg("no SLACK_BOT_TOKEN: starting a conversation in this terminal")
		return m.chat(ctx, cfg, log, "default", false)
	}
	if cfg.HealthAddr != "" {
		stop, err := serveHealth(ctx, cfg.HealthAddr)
		if err != nil {
			return err
		}
		m.onClose(stop)
	}
	a, err := m.build(ctx, cfg, log, buildOptions{model: true})
	if err != nil {
		return err
	}
	m.sweep(ctx, a)

	hub := conversation.New(conversation.Options{
		Runner:        a.agent,
		Journal:       a.db,
		MaxConcurrent: cfg.MaxConcurrentTurns,
		Grace:         shutdownGrace,
		Logger:        log.With().Str("component", "conversation").Logger(),
	})
	sl, err := slack.New(slack.Options{
		BotToken:      cfg.SlackBotToken.Reveal(),
		AppToken:      cfg.SlackAppToken.Reveal(),
		SigningSecret: cfg.SlackSigningSecret.Reveal(),
		APIURL:        cfg.SlackAPIURL,
		Mode:          cfg.SlackMode,
		ListenAddr:    cfg.SlackListenAddr,
		Hub:           hub,
		Threads:       a.db,
		Gates:         a.gates,
		Approvers:     cfg.SlackApprovers,
		AllowChannels: cfg.SlackAllowChannels,
		AllowUsers:    cfg.SlackAllowUsers,
		MaxFileBytes:  int64(cfg.SlackMaxFileBytes),
		Logger:        log.With().Str("component", "slack").Logger(),
	})
	if err != nil {
		return fmt.Errorf("slack: %w", err)
	}
	hub.Attach(slack.Platform, sl)
	if err := hub.Start(ctx); err != nil {
		return fmt.Errorf("resume conversations: %w", err)
	}
	log.Info().Str("mode", cfg.SlackMode).Msg("neobot is running in Slack")

	runErr := sl.Run(ctx)
	// The adapter has stopped taking events; let running turns reach a
	// persisted step, then stop them (their gates stay pending).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace+5*time.Second)
	defer cancel()
	closeErr := hub.Close(sctx)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("slack: %w", runErr)
	}
	log.Info().Msg("neobot stopped")
	return closeErr
}

// sweep drops what retention says is too old, at start and then daily,
// until ctx ends.
func (m *Main) sweep(ctx context.Context, a *app) {
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(24 * time.Hour)
		defer t.Stop()
		for {
			if _, err := a.db.Sweep(ctx, time.Now()); err != nil && ctx.Err() == nil {
				a.log.Error().Err(err).Msg("retention sweep failed; retrying tomorrow")
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
