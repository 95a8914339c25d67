package core_test

import (
	"flag"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/imports.golden from the code")

const mod = "github.com/neobot/neobot"

// pkgInfo is one of the module's production packages as go list reports
// it (test files left out).
type pkgInfo struct {
	path    string   // relative to the module: "core/tools"
	imports []string // direct imports, full paths
	deps    []string // every transitive dependency, full paths
}

// modulePackages lists the module's packages with their imports.
func modulePackages(t *testing.T) []pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports ","}} {{join .Deps ","}}`, mod+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var pkgs []pkgInfo
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || (fields[0] != mod && !strings.HasPrefix(fields[0], mod+"/")) {
			continue
		}
		p := pkgInfo{path: strings.TrimPrefix(strings.TrimPrefix(fields[0], mod), "/")}
		if p.path == "" {
			p.path = "."
		}
		if len(fields) > 1 {
			p.imports = strings.Split(fields[1], ",")
		}
		if len(fields) > 2 {
			p.deps = strings.Split(fields[2], ",")
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list reported no packages of the module")
	}
	return pkgs
}

// TestLayering enforces the dependency rules of docs/architecture.md:
// arrows point inward. Nothing under core/ reaches an adapter, the store,
// the command, a platform SDK, bbolt or pgx; only core/mcp speaks mcp-go;
// only adapters/slack speaks slack-go; only store/postgres speaks pgx.
func TestLayering(t *testing.T) {
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
		{"github.com/prometheus/client_golang", []string{mod + "/cmd/neobot"}},
	}
	for _, p := range modulePackages(t) {
		full := mod + "/" + p.path
		check := func(list []string, rules []rule, verb string) {
			for _, dep := range list {
				for _, r := range rules {
					if strings.HasPrefix(dep, r.forbidden) && !hasAnyPrefix(full, r.allowedIn) {
						t.Errorf("%s %s %s; only %v may", full, verb, dep, r.allowedIn)
					}
				}
			}
		}
		check(p.deps, layers, "depends on")
		check(p.imports, sdks, "imports")
	}
}

// TestThirdPartyImports keeps testdata/imports.golden, each package's
// direct imports from outside the standard library and the module, in
// step with the code, in the manner of tailscale's depaware: a package
// that starts importing a new module fails here until the allow-list is
// rewritten (go test ./core -run ThirdParty -update), so the new
// dependency is seen in review.
func TestThirdPartyImports(t *testing.T) {
	pkgs := modulePackages(t)
	slices.SortFunc(pkgs, func(a, b pkgInfo) int { return strings.Compare(a.path, b.path) })
	var b strings.Builder
	for _, p := range pkgs {
		var third []string
		for _, imp := range p.imports {
			if !standard(imp) && !strings.HasPrefix(imp, mod) {
				third = append(third, imp)
			}
		}
		if len(third) == 0 {
			continue
		}
		slices.Sort(third)
		b.WriteString(p.path + "\n")
		for _, imp := range third {
			b.WriteString("\t" + imp + "\n")
		}
	}
	const golden = "testdata/imports.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with go test ./core -run ThirdParty -update)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("third-party imports changed; review the new dependencies, then rewrite %s with -update.\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
}

// TestArchitectureDoc keeps docs/architecture.md's package table true:
// every production package has a row (test doubles, packages named
// *test, may share their package's), and a row that says "Standard
// library only" names every module outside it the package imports
// ("except `golang.org/x/...`").
func TestArchitectureDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // package path -> its row's description
	cell := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `") {
			continue
		}
		// "`adapters/internal/serial`, `recent`": the later names are
		// siblings of the first.
		var dir string
		for i, m := range cell.FindAllStringSubmatch(cells[1], -1) {
			name := m[1]
			if i == 0 {
				dir = path.Dir(name)
			} else if !strings.Contains(name, "/") {
				name = path.Join(dir, name)
			}
			rows[name] = cells[2]
		}
	}
	except := regexp.MustCompile(`except ((?:` + "`[^`]+`" + `(?:, | and | or )?)+)`)
	for _, p := range modulePackages(t) {
		desc, ok := rows[p.path]
		if !ok {
			if !strings.HasSuffix(path.Base(p.path), "test") {
				t.Errorf("docs/architecture.md has no row for package %s", p.path)
			}
			continue
		}
		if !strings.Contains(desc, "Standard library only") {
			continue
		}
		var allowed []string
		if m := except.FindStringSubmatch(desc); m != nil {
			for _, a := range cell.FindAllStringSubmatch(m[1], -1) {
				allowed = append(allowed, a[1])
			}
		}
		for _, imp := range p.imports {
			if !standard(imp) && !strings.HasPrefix(imp, mod) && !slices.Contains(allowed, imp) {
				t.Errorf("docs/architecture.md says %s is standard library only, but it imports %s", p.path, imp)
			}
		}
	}
}

// standard reports whether an import path is the standard library's: its
// first element has no dot.
func standard(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestPackageDocsStandardLibrary keeps the package comments that speak of
// the standard library true (core's says it depends on the standard
// library and one Unicode normalizer): every module outside the standard
// library such a package imports is named in its comment, so a new
// dependency fails here until the comment says so.
func TestPackageDocsStandardLibrary(t *testing.T) {
	for _, p := range modulePackages(t) {
		doc := packageDoc(t, p.path)
		if !strings.Contains(doc, "standard library") {
			continue
		}
		for _, imp := range p.imports {
			if !standard(imp) && !strings.HasPrefix(imp, mod) && !strings.Contains(doc, imp) {
				t.Errorf("%s's package comment speaks of the standard library, but the package imports %s, which it does not name", p.path, imp)
			}
		}
	}
}

// packageDoc returns the package comment of the module's package at dir
// (relative to the module), its lines joined by spaces.
func packageDoc(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			doc = append(doc, strings.Join(strings.Fields(f.Doc.Text()), " "))
		}
	}
	return strings.Join(doc, " ")
}
