package coretest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/neobot/neobot/core"
)

// GateStore is an in-memory core.GateStore.
type GateStore struct {
	mu    sync.Mutex
	seq   uint64
	gates map[string]storedGate // token -> gate
}

type storedGate struct {
	seq  uint64 // creation order, so GateBound finds the most recent
	gate core.Gate
}

// NewGateStore returns an empty GateStore.
func NewGateStore() *GateStore {
	return &GateStore{gates: map[string]storedGate{}}
}

// CreateGate stores a new gate; a token already stored is an error.
func (s *GateStore) CreateGate(ctx context.Context, g core.Gate) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.gates[g.Token]; ok {
		return fmt.Errorf("coretest: gate %q already exists", g.Token)
	}
	s.seq++
	s.gates[g.Token] = storedGate{seq: s.seq, gate: cloneGate(g)}
	return nil
}

// LoadGate returns the gate with token, or core.ErrGateUnknown.
func (s *GateStore) LoadGate(ctx context.Context, token string) (core.Gate, error) {
	if err := ctx.Err(); err != nil {
		return core.Gate{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sg, ok := s.gates[token]
	if !ok {
		return core.Gate{}, core.ErrGateUnknown
	}
	return cloneGate(sg.gate), nil
}

// UpdateGate applies fn to a copy of the stored gate and stores the copy
// when fn returns nil. When fn fails nothing is written and the gate as
// stored is returned with fn's error unchanged.
func (s *GateStore) UpdateGate(ctx context.Context, token string, fn func(*core.Gate) error) (core.Gate, error) {
	if err := ctx.Err(); err != nil {
		return core.Gate{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sg, ok := s.gates[token]
	if !ok {
		return core.Gate{}, core.ErrGateUnknown
	}
	g, err := sg.gate.Edit(fn)
	if err != nil {
		return cloneGate(sg.gate), err
	}
	sg.gate = cloneGate(g)
	s.gates[token] = sg
	return g, nil
}

// GateBound returns the most recently created gate opened with binding, or
// core.ErrNotFound.
func (s *GateStore) GateBound(ctx context.Context, binding string) (core.Gate, error) {
	if err := ctx.Err(); err != nil {
		return core.Gate{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var best storedGate
	found := false
	for _, sg := range s.gates {
		if binding != "" && sg.gate.Binding == binding && (!found || sg.seq > best.seq) {
			best, found = sg, true
		}
	}
	if !found {
		return core.Gate{}, core.ErrNotFound
	}
	return cloneGate(best.gate), nil
}

// All returns every stored gate in creation order, for assertions.
func (s *GateStore) All() []core.Gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	sgs := make([]storedGate, 0, len(s.gates))
	for _, sg := range s.gates {
		sgs = append(sgs, sg)
	}
	slices.SortFunc(sgs, func(a, b storedGate) int { return int(a.seq) - int(b.seq) })
	out := make([]core.Gate, len(sgs))
	for i, sg := range sgs {
		out[i] = cloneGate(sg.gate)
	}
	return out
}

func cloneGate(g core.Gate) core.Gate {
	g.Options = slices.Clone(g.Options)
	g.Allowed = slices.Clone(g.Allowed)
	return g
}
