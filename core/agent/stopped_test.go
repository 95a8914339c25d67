package agent

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
)

// TestStoppedAnswer: the stored words of a stopped answer read back as an
// assistant message ending with StoppedMark; no words, no entry.
func TestStoppedAnswer(t *testing.T) {
	data, err := StoppedAnswer("Rotating the key takes")
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := Messages([]core.Entry{{Seq: 1, Data: data}})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Messages = %v, %v", msgs, err)
	}
	if m := msgs[0]; m.Role != "assistant" || m.Content != "Rotating the key takes"+StoppedMark || len(m.ToolCalls) != 0 {
		t.Errorf("read back %+v", m)
	}
	if _, err := StoppedAnswer(" \n"); err == nil || !strings.Contains(err.Error(), "no words") {
		t.Errorf("StoppedAnswer of nothing = %v", err)
	}
}
