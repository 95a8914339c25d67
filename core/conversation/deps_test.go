package conversation

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the hub platform-neutral: besides the standard
// library it may import only core, core/warm and zerolog.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/neobot/neobot/core":      true,
		"github.com/neobot/neobot/core/warm": true,
		"github.com/rs/zerolog":              true,
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.Split(path, "/")[0], ".")
			if !std && !allowed[path] {
				t.Errorf("%s imports %s; core/conversation may import only the standard library, core, core/warm and zerolog", name, path)
			}
		}
	}
}
