package discord

import (
	"flag"
	"os"
	"testing"
)

// TestMain lets the loopback tests overlap beyond GOMAXPROCS: each spends
// most of its time in discordgo's one-second Session.Close sleep, not on
// a CPU.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.parallel"); f != nil && f.Value.String() == f.DefValue {
		_ = f.Value.Set("16")
	}
	os.Exit(m.Run())
}
