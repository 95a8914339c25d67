package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// viaBinary is why a client scenario fails when it is played through the
// product binary (NEOBOT_BINARY mode) rather than through core/mcp
// directly, per suite; a scenario not named here must pass in both
// modes. A scenario the library client cannot pass fails the same way
// through the binary, so the library's reasons are not repeated.
var viaBinary = map[string]map[string]string{}

// suiteClientDoc is the client ID metadata document URL the suite's
// authorization servers accept (auth/basic-cimd): neobot takes it as an
// operator's hosted document (NEO_CLIENT_METADATA_URL).
const suiteClientDoc = "https://conformance-test.local/client-metadata.json"

// TestConformanceBinary plays every client scenario of both suites through
// the product binary, in both authorization modes: operator (`neobot mcp
// login`) and per-user (the connect link the web chat shows). It is what
// scripts/conformance-binary.sh prints, with each expected failure named
// and held to failing. It builds neobot and runs a neobot per scenario, so
// -short skips it.
func TestConformanceBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the product binary once per scenario (-short)")
	}
	client := buildClient(t)
	neobot := filepath.Join(t.TempDir(), "neobot")
	if out, err := exec.Command("go", "build", "-o", neobot, "../neobot").CombinedOutput(); err != nil {
		t.Fatalf("go build ../neobot: %v\n%s", err, out)
	}
	// Three at a time over the whole test: a scenario is a Node server, this
	// client and a neobot, each mostly waiting on the others.
	sem := make(chan struct{}, 3)
	for _, s := range []struct {
		pkg  string
		list []scenario
	}{{"conformance", scenarios}, {"conformance-next", nextScenarios}} {
		t.Run(s.pkg, func(t *testing.T) {
			node, cli := suite(t, s.pkg)
			tags := scenarioTags(t, node, cli)
			for _, mode := range []string{"oauth", "per_user"} {
				var tally tally
				t.Run(mode, func(t *testing.T) {
					for _, sc := range s.list {
						failure := sc.failure
						if why, ok := viaBinary[s.pkg][sc.name]; ok && failure == "" {
							failure = why
						}
						t.Run(sc.name, func(t *testing.T) {
							t.Parallel()
							sem <- struct{}{}
							defer func() { <-sem }()
							passed := playBinary(t, node, cli, client, neobot, mode, sc.name, failure)
							tally.add(slices.Contains(tags[sc.name], latest), passed)
						})
					}
				})
				// The figures docs/mcp-auth.md quotes.
				t.Logf("%s through the binary, %s mode: %d of %d client scenarios pass; of the %d tagged %s, %d",
					s.pkg, mode, tally.passed, tally.all, tally.latest, latest, tally.latestPassed)
			}
		})
	}
}

// latest is the newest protocol revision the suites tag scenarios with.
const latest = "2026-07-28"

// tally counts the scenarios played in one mode and those that passed.
type tally struct {
	mu                                sync.Mutex
	all, passed, latest, latestPassed int
}

func (t *tally) add(latest, passed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.all++
	if latest {
		t.latest++
	}
	if passed {
		t.passed++
		if latest {
			t.latestPassed++
		}
	}
}

// scenarioTags maps each client scenario to the protocol revisions the
// suite tags it with ("- name [2025-11-25,2026-07-28]" in its list).
func scenarioTags(t *testing.T, node, cli string) map[string][]string {
	out, err := exec.Command(node, cli, "list").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	_, clientPart, _ := strings.Cut(string(out), "Client scenarios")
	clientPart, _, _ = strings.Cut(clientPart, "\n\n")
	tags := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*- (\S+) \[([^\]]*)\]`).FindAllStringSubmatch(clientPart, -1) {
		tags[m[1]] = strings.Split(m[2], ",")
	}
	return tags
}

// playBinary runs one scenario through the binary and checks it passes,
// or fails when failure says why it must; it reports whether it passed.
func playBinary(t *testing.T, node, cli, client, neobot, mode, name, failure string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "client", "--command", client, "--scenario", name, "-o", t.TempDir())
	cmd.Env = append(os.Environ(), "NEOBOT_BINARY="+neobot, "NEOBOT_MODE="+mode, "NEOBOT_CONFORMANCE_LOG=1",
		"NEO_CLIENT_METADATA_URL="+suiteClientDoc)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	switch {
	case failure == "" && err != nil:
		t.Errorf("%s through the binary (%s mode) failed (%v):\n%s", name, mode, err, tail(out.String(), 80))
	case failure != "" && err == nil:
		t.Errorf("%s passes through the binary (%s mode) but is listed as an expected failure (%s): take it off the list", name, mode, strings.TrimSpace(failure))
	}
	return err == nil
}
