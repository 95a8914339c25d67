package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigPlaces: `neobot config set` records versions of a place's
// settings with who made each change; history lists them with what
// changed; export prints the newest of every place, and diff compares an
// earlier export with the store; a set with a bad field records nothing.
func TestConfigPlaces(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			env := map[string]string{"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db")}
			db.use(t, env)
			neobot := func(args ...string) (string, error) {
				t.Helper()
				out, errOut, err := run(t, env, "", append([]string{"config"}, args...)...)
				return out + errOut, err
			}
			must := func(args ...string) string {
				t.Helper()
				out, err := neobot(args...)
				if err != nil {
					t.Fatalf("neobot config %s = %v\n%s", strings.Join(args, " "), err, out)
				}
				return out
			}
			if out := must("set", "--by", "slack:T1/UALICE", "slack:T1/C1", "skill=reader", "approvers=UCAROL"); !strings.Contains(out, "Recorded version 1") ||
				!strings.Contains(out, `skill: (the file's) → "reader"`) || !strings.Contains(out, "do not use stored place settings yet") {
				t.Errorf("first set said:\n%s", out)
			}
			exported := filepath.Join(t.TempDir(), "places.json")
			if err := os.WriteFile(exported, []byte(must("export")), 0o600); err != nil {
				t.Fatal(err)
			}
			must("set", "--by", "cli:ops", "slack:T1/C1", "instructions=Answer in French.", "spend=false")
			if out, err := neobot("set", "slack:T1/C1", "skill=finance", "bogus=1"); err == nil || !strings.Contains(out, `"bogus" is not a field`) {
				t.Errorf("set with a bad field = %v\n%s\nwant a refusal naming it", err, out)
			}
			if out, err := neobot("set", "#general", "skill=reader"); err == nil || !strings.Contains(out, "not a place") {
				t.Errorf("set in a place written wrong = %v\n%s\nwant a refusal", err, out)
			}

			hist := strings.Split(strings.TrimSpace(must("history", "slack:T1/C1")), "\n")
			if len(hist) != 2 || !strings.Contains(hist[0], "slack:T1/UALICE") || !strings.Contains(hist[1], "cli:ops") ||
				!strings.Contains(hist[1], `instructions: (the file's) → "Answer in French."`) || strings.Contains(hist[1], "finance") {
				t.Errorf("history =\n%s\nwant two versions, by UALICE then ops, the refused set not among them", strings.Join(hist, "\n"))
			}
			out, err := neobot("diff", exported)
			if err == nil || !strings.Contains(out, "slack:T1/C1: version 1 in the file, 2 stored (last changed by cli:ops") ||
				!strings.Contains(out, "spend: (as the skill says) → false") || strings.Contains(out, "skill:") {
				t.Errorf("diff against the first export = %v\n%s\nwant the second change listed, and a failure", err, out)
			}
			if err := os.WriteFile(exported, []byte(must("export")), 0o600); err != nil {
				t.Fatal(err)
			}
			if out := must("diff", exported); !strings.Contains(out, "The stored settings are those of") {
				t.Errorf("diff against a fresh export said:\n%s", out)
			}
			if out := must("export"); !strings.Contains(out, `"slack:T1/C1"`) || !strings.Contains(out, `"version": 2`) || !strings.Contains(out, `"approvers": [`) {
				t.Errorf("export =\n%s\nwant slack:T1/C1 at version 2 with its approvers", out)
			}
		})
	}
}
