package discord

import "testing"

// TestBefore: Discord IDs compare as the numbers they are, as Before
// compares a leftover with a message. Each row says whether a was made
// after b.
func TestBefore(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"1180000000000000002", "1180000000000000001", true},
		{"1180000000000000001", "1180000000000000002", false},
		{"1180000000000000001", "1180000000000000001", false},
		{"1180000000000000000", "999999999999999999", true},
		{"999999999999999999", "1180000000000000000", false},
	} {
		if got := (*Adapter)(nil).Before(tt.b, tt.a); got != tt.want {
			t.Errorf("Before(%s, %s) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}
