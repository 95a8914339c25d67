package slack

import "testing"

// TestStreamable: a table still being written at the end of a streamed
// answer is held back until a line that is no row ends it; text without
// one streams whole.
func TestStreamable(t *testing.T) {
	for _, tt := range []struct{ in, ready string }{
		{"Plain words so far", "Plain words so far"},
		{"Spends:\n| Day | Amount |\n|---|---|\n| Mon", "Spends:\n"},
		{"Spends:\n| Day | Amount |\n|---|---|\n| Mon | 3 |\n", "Spends:\n"},
		{"Spends:\n| Day | Amount |\n|---|---|\n| Mon | 3 |\nTotal", "Spends:\n| Day | Amount |\n|---|---|\n| Mon | 3 |\nTotal"},
		{"a | b in a sentence", "a | b in a sentence"},
	} {
		if got := tt.in[:streamable(tt.in)]; got != tt.ready {
			t.Errorf("streamable(%q) shows %q, want %q", tt.in, got, tt.ready)
		}
	}
}
