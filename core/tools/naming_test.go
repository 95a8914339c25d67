package tools

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
)

var funcNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestBindNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		name string
		refs []toolRef
		// want maps a ref to its exact name; "suffixed" means base + "_" + hash.
		want map[toolRef]string
	}{
		{
			name: "plain",
			refs: []toolRef{{"fs", "read_file"}, {"paxeer-net", "get_balance"}},
			want: map[toolRef]string{{"fs", "read_file"}: "fs__read_file", {"paxeer-net", "get_balance"}: "paxeer-net__get_balance"},
		},
		{
			name: "coerced without collision",
			refs: []toolRef{{"gh", "repos/list.all"}},
			want: map[toolRef]string{{"gh", "repos/list.all"}: "gh__repos_list_all"},
		},
		{
			name: "coercion collides: the exact name keeps it",
			refs: []toolRef{{"gh", "a.b"}, {"gh", "a_b"}},
			want: map[toolRef]string{{"gh", "a_b"}: "gh__a_b", {"gh", "a.b"}: "suffixed"},
		},
		{
			name: "truncation collides: both suffixed",
			refs: []toolRef{{"s", long + "1"}, {"s", long + "2"}},
			want: map[toolRef]string{{"s", long + "1"}: "suffixed", {"s", long + "2"}: "suffixed"},
		},
		{
			name: "truncated alone keeps the cut name",
			refs: []toolRef{{"s", long}},
			want: map[toolRef]string{{"s", long}: ("s__" + long)[:64]},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bindNames(tt.refs, core.CoreExecute, MemoryRecall)
			seen := map[string]bool{}
			for ref, want := range tt.want {
				name := got[ref]
				if !funcNameRe.MatchString(name) {
					t.Errorf("bindNames: %v = %q, want a name matching %s", ref, name, funcNameRe)
				}
				if seen[name] {
					t.Errorf("bindNames: %q given twice", name)
				}
				seen[name] = true
				switch {
				case want == "suffixed" && !regexp.MustCompile(`_[0-9a-f]{6}$`).MatchString(name):
					t.Errorf("bindNames: %v = %q, want a hash suffix", ref, name)
				case want != "suffixed" && name != want:
					t.Errorf("bindNames: %v = %q, want %q", ref, name, want)
				}
			}
			// Deterministic whatever the order.
			rev := slices.Clone(tt.refs)
			slices.Reverse(rev)
			again := bindNames(rev, core.CoreExecute, MemoryRecall)
			for ref, name := range got {
				if again[ref] != name {
					t.Errorf("bindNames(reversed): %v = %q, want %q", ref, again[ref], name)
				}
			}
		})
	}
}

// TestSanitizeBoundaries: every character of the function-name charset,
// the ends of each range included, is kept as it is; its neighbours
// outside the charset become '_'; 64 bytes stay whole and the 65th goes.
func TestSanitizeBoundaries(t *testing.T) {
	tests := map[string]string{
		"aAzZ09_-":                    "aAzZ09_-",
		"`a{A@Z[z/0:9.":               "_a_A_Z_z_0_9_",
		strings.Repeat("q", 64):       strings.Repeat("q", 64),
		strings.Repeat("q", 65):       strings.Repeat("q", 64),
		"":                            "_",
		"read file/é":                 "read_file___",
		"a" + strings.Repeat("9", 63): "a" + strings.Repeat("9", 63),
	}
	for in, want := range tests {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}
