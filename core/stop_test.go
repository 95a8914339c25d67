package core_test

import (
	"testing"

	"github.com/neobot/neobot/core"
)

func TestIsStop(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"stop", true},
		{"STOP", true},
		{"Cancel", true},
		{"  stop.  ", true},
		{"stop!", true},
		{"<@U0BOT> stop", true},
		{"stop it", false},
		{"please stop", false},
		{"cancel my subscription", false},
		{"don't stop", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := core.IsStop(tt.text); got != tt.want {
				t.Errorf("IsStop(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}
