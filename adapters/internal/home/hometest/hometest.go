// Package hometest has the doubles the tests of a person's page share:
// per-user accounts kept in memory, and a gate store that tells when a
// gate's message is recorded.
package hometest

import (
	"context"
	"sync"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/mcp"
)

// Accounts is one per_user server, Alias, whose connections are kept in
// memory; Connect's link names the person it is for.
type Accounts struct {
	Alias string

	mu        sync.Mutex
	connected map[string]bool // place.UserValue() -> connected
}

// NewAccounts returns alias with the people at places connected.
func NewAccounts(alias string, places ...mcp.Place) *Accounts {
	a := &Accounts{Alias: alias, connected: map[string]bool{}}
	for _, p := range places {
		a.connected[p.UserValue()] = true
	}
	return a
}

// Accounts lists the one server and whether the person at p is connected.
func (a *Accounts) Accounts(_ context.Context, p mcp.Place) ([]mcp.Account, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return []mcp.Account{{Alias: a.Alias, Connected: a.connected[p.UserValue()]}}, nil
}

// Connect returns the person's link; the connection is made only when a
// test says so (NewAccounts).
func (a *Accounts) Connect(_ context.Context, alias string, p mcp.Place) (string, error) {
	return "https://auth.example/authorize?server=" + alias + "&for=" + p.UserValue(), nil
}

// Disconnect forgets the person's connection.
func (a *Accounts) Disconnect(_ context.Context, _ string, p mcp.Place) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.connected, p.UserValue())
	return nil
}

// PostedStore is a gate store that sends on Posted the MessageRef of each
// gate whose message is recorded (when nobody is waiting, it drops it):
// from then on the gate is listed with a link to its message.
type PostedStore struct {
	*coretest.GateStore
	Posted chan string
}

// NewPostedStore returns an empty PostedStore.
func NewPostedStore() PostedStore {
	return PostedStore{GateStore: coretest.NewGateStore(), Posted: make(chan string, 1)}
}

// UpdateGate updates as coretest.GateStore does, then tells.
func (s PostedStore) UpdateGate(ctx context.Context, token string, fn func(*core.Gate) error) (core.Gate, error) {
	g, err := s.GateStore.UpdateGate(ctx, token, fn)
	if err == nil && g.MessageRef != "" {
		select {
		case s.Posted <- g.MessageRef:
		default:
		}
	}
	return g, err
}
