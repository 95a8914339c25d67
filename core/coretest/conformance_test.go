package coretest_test

import (
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/store/storetest"
)

// The fakes pass the conformance suite the real stores pass, so a test
// written against a fake holds against bbolt and PostgreSQL too.
func TestConformance(t *testing.T) {
	storetest.RunGates(t, func(*testing.T) core.GateStore { return coretest.NewGateStore() })
	storetest.RunLedger(t, func(*testing.T) storetest.Ledger { return coretest.NewLedger() })
	storetest.RunSpends(t, func(*testing.T) storetest.SpendBackend { return coretest.NewSpends() })
}
