package compact

import (
	"slices"
	"testing"
)

// TestPrefixedIdentifiersWhole: an identifier with a prefix is kept whole,
// never as its last digit group.
func TestPrefixedIdentifiersWhole(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"request req-550e8400-e29b-41d4-a716-446655440000 failed", []string{"req-550e8400-e29b-41d4-a716-446655440000"}},
		{"sent in tx_9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.", []string{"tx_9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}},
		{"order ord-20261124-88817733 shipped", []string{"ord-20261124-88817733"}},
		{"plain uuid 550e8400-e29b-41d4-a716-446655440000", []string{"550e8400-e29b-41d4-a716-446655440000"}},
		{"block 19000000 at api.example.com", []string{"19000000"}},
		{"nothing here, just well-known words_and-things", nil},
	}
	for _, tt := range tests {
		if got := Artifacts(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Artifacts(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestValidatorWholeTokens: a summary keeps an identifier only when the
// whole token is there; one with a digit appended, or cut short, does not.
func TestValidatorWholeTokens(t *testing.T) {
	history := "paid 0x52908400098527886E0F7030069857D2E4169EE7 amount 1250000 ref req-550e8400-e29b-41d4-a716-446655440000"
	tests := []struct {
		name, summary string
		dropped       []string
	}{
		{"all kept", "Paid 0x52908400098527886E0F7030069857D2E4169EE7 1250000 (req-550e8400-e29b-41d4-a716-446655440000).", nil},
		{"address with a digit appended", "Paid 0x52908400098527886E0F7030069857D2E4169EE71 1250000 req-550e8400-e29b-41d4-a716-446655440000",
			[]string{"0x52908400098527886E0F7030069857D2E4169EE7"}},
		{"amount with a digit appended", "Paid 0x52908400098527886E0F7030069857D2E4169EE7 12500001 req-550e8400-e29b-41d4-a716-446655440000",
			[]string{"1250000"}},
		{"prefix lost", "Paid 0x52908400098527886E0F7030069857D2E4169EE7 1250000 ref 550e8400-e29b-41d4-a716-446655440000",
			[]string{"req-550e8400-e29b-41d4-a716-446655440000"}},
		{"inside a URL", "See https://scan.test/tx/0x52908400098527886E0F7030069857D2E4169EE7?n=1250000&r=req-550e8400-e29b-41d4-a716-446655440000", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dropped := ValidateSummary(tt.summary, history)
			if !slices.Equal(dropped, tt.dropped) {
				t.Errorf("dropped %q, want %q", dropped, tt.dropped)
			}
		})
	}
}
