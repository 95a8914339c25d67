package core_test

import (
	"testing"

	"github.com/neobot/neobot/core"
)

func TestThreadKey(t *testing.T) {
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1700000000.000100"}
	if got, want := th.Key(), "slack/T1/C1/1700000000.000100"; got != want {
		t.Errorf("Key() = %q, want %q", got, want)
	}
	if th.String() != th.Key() {
		t.Errorf("String() = %q, want the key", th.String())
	}
	back, err := core.ParseThread(th.Key())
	if err != nil || back != th {
		t.Errorf("ParseThread(%q) = %+v, %v; want %+v", th.Key(), back, err, th)
	}
}

func TestParseThreadRefuses(t *testing.T) {
	for _, key := range []string{"", "slack", "slack/T1/C1", "slack/T1/C1/1/extra", "slack//C1/1", "/T1/C1/1", "slack/T1/C1/"} {
		if got, err := core.ParseThread(key); err == nil {
			t.Errorf("ParseThread(%q) = %+v, want an error", key, got)
		}
	}
}

func TestThreadValidate(t *testing.T) {
	tests := []struct {
		th core.Thread
		ok bool
	}{
		{core.Thread{Platform: "discord", Workspace: "G", Channel: "C", ID: "T"}, true},
		{core.Thread{Platform: "discord", Workspace: "G", Channel: "C"}, false},
		{core.Thread{Platform: "discord", Workspace: "G/x", Channel: "C", ID: "T"}, false},
		{core.Thread{}, false},
	}
	for _, tt := range tests {
		if err := tt.th.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tt.th, err, tt.ok)
		}
	}
}
