package memory_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/memory"
)

func TestScopeVisible(t *testing.T) {
	ws := func(s memory.Scope) memory.Scope { s.Platform, s.Workspace = "slack", "TA"; return s }
	alice := memory.Reader{Platform: "slack", Workspace: "TA", User: "alice", Channel: "general"}
	aliceDM := memory.Reader{Platform: "slack", Workspace: "TA", User: "alice", Channel: "D1", DM: true}
	bob := memory.Reader{Platform: "slack", Workspace: "TA", User: "bob", Channel: "general"}
	otherWS := memory.Reader{Platform: "slack", Workspace: "TB", User: "alice", Channel: "general"}
	otherPlatform := memory.Reader{Platform: "discord", Workspace: "TA", User: "alice", Channel: "general"}
	tests := []struct {
		name  string
		scope memory.Scope
		r     memory.Reader
		want  bool
	}{
		{"workspace fact in workspace", ws(memory.Scope{}), bob, true},
		{"workspace fact in DM", ws(memory.Scope{}), aliceDM, true},
		{"workspace fact in other workspace", ws(memory.Scope{}), otherWS, false},
		{"workspace fact on other platform", ws(memory.Scope{}), otherPlatform, false},
		{"no workspace", memory.Scope{Platform: "slack"}, alice, false},
		{"DM memory in own DM", ws(memory.Scope{User: "alice", DM: true}), aliceDM, true},
		{"DM memory in channel, same user", ws(memory.Scope{User: "alice", DM: true}), alice, false},
		{"DM memory to other user", ws(memory.Scope{User: "alice", DM: true}), bob, false},
		{"user memory for user", ws(memory.Scope{User: "alice"}), alice, true},
		{"user memory in user's DM", ws(memory.Scope{User: "alice"}), aliceDM, true},
		{"user memory for other user", ws(memory.Scope{User: "alice"}), bob, false},
		{"channel memory in channel", ws(memory.Scope{Channel: "general"}), bob, true},
		{"channel memory elsewhere", ws(memory.Scope{Channel: "secret"}), bob, false},
		{"channel memory in DM", ws(memory.Scope{Channel: "general"}), aliceDM, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.scope.Visible(tc.r); got != tc.want {
				t.Errorf("%+v.Visible(%+v) = %v, want %v", tc.scope, tc.r, got, tc.want)
			}
		})
	}
}

// TestScopeEveryRead stores the same fact in many scopes and checks that
// every read path (Recall, Fault, About, RecallTool) returns only what the
// reader may see.
func TestScopeEveryRead(t *testing.T) {
	ctx := context.Background()
	c := newCortex(t, memory.Options{})
	scopes := map[string]memory.Scope{
		"A-workspace": {Platform: "slack", Workspace: "TA"},
		"B-workspace": {Platform: "slack", Workspace: "TB"},
		"A-alice-dm":  {Platform: "slack", Workspace: "TA", User: "alice", DM: true},
		"A-alice":     {Platform: "slack", Workspace: "TA", User: "alice"},
		"A-secret":    {Platform: "slack", Workspace: "TA", Channel: "secret"},
	}
	for tag, s := range scopes {
		remember(t, c, s, memory.KindFact, "the launch code word is "+tag)
		remember(t, c, s, memory.KindPreference, "prefers tea "+tag)
	}
	tests := []struct {
		name string
		in   inboundArgs
		want []string
	}{
		{"alice in A general", inboundArgs{"TA", "general", "alice", false}, []string{"A-workspace", "A-alice"}},
		{"alice in A DM", inboundArgs{"TA", "D1", "alice", true}, []string{"A-workspace", "A-alice-dm", "A-alice"}},
		{"bob in A secret", inboundArgs{"TA", "secret", "bob", false}, []string{"A-workspace", "A-secret"}},
		{"alice in B", inboundArgs{"TB", "general", "alice", false}, []string{"B-workspace"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := inbound(tc.in.ws, tc.in.channel, tc.in.user, tc.in.dm, "launch code word")
			allowed := func(text string) bool {
				return slices.ContainsFunc(tc.want, func(tag string) bool { return hasSuffixWord(text, tag) })
			}
			var seen []string
			for _, h := range c.Recall(memory.ReaderOf(in), "launch code word tea", 50) {
				seen = append(seen, h.Text)
			}
			rec, err := c.Fault(ctx, in, "launch code word")
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, rec.Memories...)
			seen = append(seen, splitLines(rec.Profile)...)
			about, _ := c.About(ctx, in)
			for _, r := range about {
				seen = append(seen, r.Text)
			}
			for _, s := range seen {
				if !allowed(s) {
					t.Errorf("%s recalled %q, allowed only %v", tc.name, s, tc.want)
				}
			}
			if len(rec.Memories) != len(tc.want) {
				t.Errorf("Fault memories = %q, want one per allowed scope %v", rec.Memories, tc.want)
			}
		})
	}
}

type inboundArgs struct {
	ws, channel, user string
	dm                bool
}

func hasSuffixWord(text, tag string) bool {
	return len(text) >= len(tag)+1 && text[len(text)-len(tag)-1:] == " "+tag
}

func splitLines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' })
}
