package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

func TestPendingGatesAndObservedWrites(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	writes := 0
	db := openTemp(t, store.Options{ObserveWrite: func(took time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil && took >= 0 {
			writes++
		}
	}})
	for i, state := range []core.GateState{core.GatePending, core.GateApproved, core.GatePending, core.GateDenied} {
		g := core.Gate{Token: string(rune('a' + i)), IntentID: "i", NodeID: string(rune('a' + i)), State: state}
		if err := db.CreateGate(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.PendingGates(ctx); err != nil || n != 2 {
		t.Errorf("PendingGates = %d, %v; want 2", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if writes != 4 {
		t.Errorf("observed writes = %d, want one per CreateGate (4)", writes)
	}
}
