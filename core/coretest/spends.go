package coretest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/core"
)

// Spends is an in-memory spend ledger and calls log, with the method sets
// of core.SpendLedger and core.CallLog.
type Spends struct {
	mu    sync.Mutex
	byID  map[string]core.Spend
	order []string
	calls map[string]callEntry
}

// NewSpends returns an empty Spends.
func NewSpends() *Spends {
	return &Spends{byID: map[string]core.Spend{}, calls: map[string]callEntry{}}
}

// PlanSpends stores calls unless the intent has some, and returns the
// intent's calls, in order.
func (l *Spends) PlanSpends(ctx context.Context, intentID string, calls []core.Spend) ([]core.Spend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if got := l.intent(intentID); len(got) > 0 {
		return got, nil
	}
	if err := core.CheckPlan(intentID, calls); err != nil {
		return nil, fmt.Errorf("coretest: %w", err)
	}
	for _, s := range calls {
		l.byID[s.ID] = clone(s)
		l.order = append(l.order, s.ID)
	}
	return l.intent(intentID), nil
}

func (l *Spends) intent(intentID string) []core.Spend {
	var out []core.Spend
	for _, id := range l.order {
		if strings.HasPrefix(id, intentID+"/") {
			out = append(out, clone(l.byID[id]))
		}
	}
	return out
}

// UpdateSpend applies fn to the call with id, with the other calls of its
// workspace and day.
func (l *Spends) UpdateSpend(ctx context.Context, id string, fn func(s *core.Spend, sameDay []core.Spend) error) (core.Spend, error) {
	if err := ctx.Err(); err != nil {
		return core.Spend{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.byID[id]
	if !ok {
		return core.Spend{}, fmt.Errorf("coretest: spend %s: %w", id, core.ErrNotFound)
	}
	var day []core.Spend
	for _, oid := range l.order {
		o := l.byID[oid]
		if oid != id && o.Day == s.Day && o.Thread.Platform == s.Thread.Platform && o.Thread.Workspace == s.Thread.Workspace {
			day = append(day, clone(o))
		}
	}
	out, err := s.Edit(day, fn)
	if err != nil {
		return s, err
	}
	l.byID[id] = clone(out)
	return out, nil
}

// SpendsSince returns the calls created at or after since, oldest first.
func (l *Spends) SpendsSince(ctx context.Context, since time.Time) ([]core.Spend, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []core.Spend
	for _, id := range l.order {
		if s := l.byID[id]; !s.Created.Before(since) {
			out = append(out, clone(s))
		}
	}
	slices.SortStableFunc(out, func(a, b core.Spend) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// BeginCall records key as calling, begun by run; when key was begun
// before, it returns the entry as found.
func (l *Spends) BeginCall(ctx context.Context, key, run string) (core.Begun, error) {
	if err := ctx.Err(); err != nil {
		return core.Begun{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.calls[key]; ok {
		return core.Begun{Run: c.run}, nil
	}
	l.calls[key] = callEntry{run: run}
	return core.Begun{Fresh: true, Run: run}, nil
}

// DropCall removes key's entry.
func (l *Spends) DropCall(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.calls, key)
	return nil
}

// EndCall records that the call with key returned.
func (l *Spends) EndCall(ctx context.Context, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.calls[key]
	if !ok {
		return fmt.Errorf("coretest: call %s: %w", key, core.ErrNotFound)
	}
	c.ended = true
	l.calls[key] = c
	return nil
}

// SetCallTask records that the call with key became task, beginning it
// by run when it had no entry.
func (l *Spends) SetCallTask(ctx context.Context, key, run, task string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.calls[key]
	if !ok {
		c = callEntry{run: run}
	}
	c.task = task
	l.calls[key] = c
	return nil
}

// CallTask returns the task recorded for key, "" when none.
func (l *Spends) CallTask(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[key].task, nil
}

// Calling returns the keys of the calls begun and not ended.
func (l *Spends) Calling() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k, c := range l.calls {
		if !c.ended {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func clone(s core.Spend) core.Spend {
	s.Args = json.RawMessage(slices.Clone([]byte(s.Args)))
	return s
}

// callEntry is one entry of the calls log.
type callEntry struct {
	run   string
	ended bool
	task  string
}
