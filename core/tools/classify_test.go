package tools

import (
	"slices"
	"testing"
)

// TestClassify: the payment vocabulary escalates as whole
// words in every case style, the seed's patterns still match anywhere,
// and the look-alikes and reads stay natural.
func TestClassify(t *testing.T) {
	tests := []struct {
		tool string
		want Class
	}{
		// The names, each a payment a model must not make directly.
		{"pay", Escalate},
		{"create_payment", Escalate},
		{"charge", Escalate},
		{"payout", Escalate},
		{"purchase", Escalate},
		{"buy", Escalate},
		{"place_order", Escalate},
		{"create_invoice", Escalate},
		{"checkout", Escalate},
		{"subscribe", Escalate},
		// Case styles.
		{"createPayment", Escalate},
		{"CreatePayment", Escalate},
		{"create-payment", Escalate},
		{"PlaceOrder", Escalate},
		{"HTTPPay", Escalate},
		{"pay2merchant", Escalate},
		{"buyNow", Escalate},
		{"shop.purchase", Escalate},
		{"CHARGE_CARD", Escalate},
		{"pay_invoice", Escalate},
		{"refund", Escalate},
		{"create_refund", Escalate},
		{"capture_payment", Escalate},
		{"finalize_invoice", Escalate},
		{"donate", Escalate},
		// The seed's patterns match anywhere, as before.
		{"transfer_tokens", Escalate},
		{"sendRawTransaction", Escalate},
		{"approve_spender", Escalate},
		{"bridge_assets", Escalate},
		{"multisend", Escalate},
		{"TokenSwap", Escalate},
		{"autofund", Escalate},
		{"get_transfer_status", Escalate}, // the seed's substrings do not spare reads
		// Reads and dry runs.
		{"get_balance", Natural},
		{"simulate_call", Natural},
		{"list_files", Natural},
		{"compile_contract", Natural},
		// Look-alikes: the words are not whole.
		{"payload", Natural},
		{"display", Natural},
		{"get_payload", Natural},
		{"buyer_info_lookup", Natural},
		{"paypal_balance", Natural},
		{"recharge_history", Natural},
		{"unsubscribe", Natural},
		{"purchaser_profile", Natural},
		// Nouns reads share, without a verb that commits them.
		{"get_invoice", Natural},
		{"invoice_status", Natural},
		{"list_orders", Natural},
		{"order_history", Natural},
		{"payment_methods", Natural},
		// A name that starts with a read verb.
		{"get_charge", Natural},
		{"list_payouts", Natural},
		{"lookupPurchase", Natural},
		{"search-buy-offers", Natural},
	}
	for _, tt := range tests {
		if got := Classify(tt.tool, DefaultEscalatePatterns()); got != tt.want {
			t.Errorf("Classify(%q) = %s, want %s", tt.tool, got, tt.want)
		}
	}
	// The vocabulary holds whatever the patterns: replacing them does not
	// make a payment tool ordinary.
	if got := Classify("create_payment", []string{"balance"}); got != Escalate {
		t.Errorf("Classify(create_payment, [balance]) = %s, want escalate", got)
	}
	if got := Classify("send_email", []string{"transfer"}); got != Natural {
		t.Errorf("Classify(send_email, [transfer]) = %s, want natural: given patterns replace the defaults", got)
	}
}

func TestSplitWords(t *testing.T) {
	tests := map[string][]string{
		"create_payment":    {"create", "payment"},
		"createPayment":     {"create", "payment"},
		"HTTPPayHandler":    {"http", "pay", "handler"},
		"pay2me":            {"pay", "2", "me"},
		"buyer-info.lookup": {"buyer", "info", "lookup"},
		"__x__":             {"x"},
		"":                  nil,
		"ÉchangeRapide":     {"échange", "rapide"},
	}
	for in, want := range tests {
		if got := splitWords(in); !slices.Equal(got, want) {
			t.Errorf("splitWords(%q) = %q, want %q", in, got, want)
		}
	}
}
