package execute

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
)

// TestOutcomeReceipt: each call's outcome line carries its ledger
// entry's short hash as a receipt, one token; a call read from a ledger
// without a chain has none.
func TestOutcomeReceipt(t *testing.T) {
	hash := "3f9a1c2e" + strings.Repeat("0", 56)
	done := core.Spend{ID: "x1/1", Server: "wallet", Name: "transfer", State: core.SpendCompleted, Result: "sent", Hash: hash}
	got, err := outcome("x1", []core.Spend{done})
	if err != nil || !strings.Contains(got, "- wallet/transfer (x1/1): completed, receipt 3f9a1c2e: sent") {
		t.Errorf("outcome = %q, %v; want the receipt on the call's line", got, err)
	}
	denied := core.Spend{ID: "x1/1", Server: "wallet", Name: "transfer", State: core.SpendDenied, DecidedBy: "UBOB", Reason: "<@UBOB> denied it", Hash: hash}
	if _, err := outcome("x1", []core.Spend{denied}); err == nil || !strings.Contains(err.Error(), "denied, receipt 3f9a1c2e: <@UBOB> denied it") {
		t.Errorf("outcome of a denial = %v; want the receipt on the call's line", err)
	}
	done.Hash = ""
	if got, _ := outcome("x1", []core.Spend{done}); strings.Contains(got, "receipt") {
		t.Errorf("outcome without a chain = %q; want no receipt", got)
	}
}
