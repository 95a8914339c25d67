package discord

import "testing"

// TestSnowflakeAfter: Discord IDs compare as the numbers they are, as
// Before compares a leftover with a message.
func TestSnowflakeAfter(t *testing.T) {
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
		if got := snowflakeAfter(tt.a, tt.b); got != tt.want {
			t.Errorf("snowflakeAfter(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
