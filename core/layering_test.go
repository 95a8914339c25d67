package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering enforces DESIGN.md's dependency direction: arrows point
// inward. Nothing under core/ reaches an adapter, the store, the command,
// a platform SDK, bbolt or pgx; only core/mcp speaks mcp-go; only
// adapters/slack speaks slack-go; only store/postgres speaks pgx.
func TestLayering(t *testing.T) {
	const mod = "github.com/neobot/neobot"
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports ","}} {{join .Deps ","}}`, mod+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	type rule struct {
		forbidden string
		allowedIn []string // package path prefixes that may depend on it
	}
	// Layers: checked against every transitive dependency.
	layers := []rule{
		{mod + "/adapters/", []string{mod + "/adapters/", mod + "/cmd/"}},
		{mod + "/store", []string{mod + "/store", mod + "/cmd/"}},
		{mod + "/cmd/", []string{mod + "/cmd/"}},
		{"github.com/slack-go/slack", []string{mod + "/adapters/slack", mod + "/cmd/"}},
		{"github.com/bwmarrin/discordgo", []string{mod + "/adapters/discord", mod + "/cmd/"}},
		{"go.etcd.io/bbolt", []string{mod + "/store", mod + "/cmd/"}},
		{"github.com/jackc/pgx", []string{mod + "/store/postgres", mod + "/cmd/"}},
	}
	// SDKs: checked against direct imports; one package speaks each.
	sdks := []rule{
		{"github.com/mark3labs/mcp-go", []string{mod + "/core/mcp"}},
		{"github.com/slack-go/slack", []string{mod + "/adapters/slack"}},
		{"github.com/bwmarrin/discordgo", []string{mod + "/adapters/discord"}},
		{"go.etcd.io/bbolt", []string{mod + "/store"}},
		{"github.com/jackc/pgx", []string{mod + "/store/postgres"}},
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], mod) {
			continue
		}
		pkg := fields[0]
		checked++
		var imports, deps []string
		if len(fields) > 1 {
			imports = strings.Split(fields[1], ",")
		}
		if len(fields) > 2 {
			deps = strings.Split(fields[2], ",")
		}
		check := func(list []string, rules []rule, verb string) {
			for _, dep := range list {
				for _, r := range rules {
					if strings.HasPrefix(dep, r.forbidden) && !hasAnyPrefix(pkg, r.allowedIn) {
						t.Errorf("%s %s %s; only %v may", pkg, verb, dep, r.allowedIn)
					}
				}
			}
		}
		check(deps, layers, "depends on")
		check(imports, sdks, "imports")
	}
	if checked == 0 {
		t.Fatal("go list reported no packages of the module")
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
