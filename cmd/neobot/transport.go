package main

import (
	"net/http"
	"time"

	"github.com/neobot/neobot/cmd/neobot/internal/direct"
)

// pooledTransport is net/http's transport as neobot's outbound calls use
// it: behind a proxy, and for what direct.Transport does not send. It
// keeps up to conns idle connections to each host, conns being how many
// turns run at once. http.DefaultTransport keeps two, so under load every
// call past the second dialed again and paid a TLS handshake: with 1,000
// busy threads that was a third of the bot's CPU.
func pooledTransport(conns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(conns, 2)
	t.MaxIdleConns = 4 * t.MaxIdleConnsPerHost // Slack or Discord, two models, the daemon
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// outbound returns the transport neobot's outbound calls share (Slack's
// and Discord's APIs, the model, the execution daemon), made on first use
// for cfg's concurrency: direct.Transport, which sends each call on the
// caller's goroutine, over pooledTransport.
func (m *Main) outbound(cfg *Config) http.RoundTripper {
	if m.pool == nil {
		conns := max(cfg.MaxConcurrentTurns, 2)
		m.pool = direct.New(direct.Options{
			Fallback:       pooledTransport(conns),
			MaxIdlePerHost: conns,
			IdleTimeout:    90 * time.Second,
			Getenv:         m.Getenv,
		})
	}
	return m.pool
}
