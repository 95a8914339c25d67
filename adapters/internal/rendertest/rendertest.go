// Package rendertest holds the golden cases every adapter's renderer is
// checked against. Each case is a txtar archive in adapters/testdata/render:
// an "input.md" section, the answer as the model wrote it, and one section
// per platform ("slack", "discord") with the messages that platform's Say
// posts for it, separated by [Separator]. Every renderer sees the same
// inputs, so a case added for one platform is a case for all of them.
package rendertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Dir is where the cases live, relative to an adapter's package directory.
const Dir = "../testdata/render"

// Input is the section holding a case's markdown.
const Input = "input.md"

// Separator separates the messages of one answer in a platform's section.
const Separator = "======== next message ========\n"

// Run renders each case's input with render and compares the messages to
// the case's section named platform. With update it writes the section
// instead (run `go test -update` and review the diff), leaving the other
// platforms' sections as they are.
func Run(t *testing.T, platform string, update bool, render func(markdown string) []string) {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join(Dir, "*.txtar"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("rendertest: no cases in %s: %v", Dir, err)
	}
	for _, path := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in, ok := section(ar, Input)
			if !ok {
				t.Fatalf("%s has no %s section", path, Input)
			}
			got := join(render(in))
			if update {
				put(ar, platform, got)
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, ok := section(ar, platform)
			if !ok {
				t.Fatalf("%s has no %s section (run go test -update to write it, then review it)", path, platform)
			}
			if got != want {
				t.Errorf("%s renders %s differently from its %s section (run go test -update and review the diff); got:\n%s", platform, path, platform, got)
			}
		})
	}
}

// join writes messages as a section holds them: each ends in a newline,
// and a separator line stands between two.
func join(messages []string) string {
	var b strings.Builder
	for i, m := range messages {
		if i > 0 {
			b.WriteString(Separator)
		}
		b.WriteString(m)
		if !strings.HasSuffix(m, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func section(ar *txtar.Archive, name string) (string, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

func put(ar *txtar.Archive, name, data string) {
	for i, f := range ar.Files {
		if f.Name == name {
			ar.Files[i].Data = []byte(data)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
}
