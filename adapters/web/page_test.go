package web

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVendoredLibraries: the page's copies of marked and DOMPurify are
// byte for byte the versions package.json pins (npm ci installs them);
// to upgrade, change package.json, npm install, and copy the files over.
func TestVendoredLibraries(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "node_modules")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node_modules is missing: run npm ci (make test does)")
		}
		t.Skip("node_modules is missing: run npm ci")
	}
	for vendored, installed := range map[string]string{
		"page/vendor/marked.umd.js": "node_modules/marked/lib/marked.umd.js",
		"page/vendor/purify.min.js": "node_modules/dompurify/dist/purify.min.js",
	} {
		ours, err := pageFiles.ReadFile(vendored)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := os.ReadFile(filepath.Join(root, installed))
		if err != nil {
			t.Fatalf("%v: run npm ci", err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("adapters/web/%s differs from %s: copy it over (cp %s adapters/web/%s)", vendored, installed, installed, vendored)
		}
	}
}

// TestPageIsStrict: the page is served with a CSP that allows no inline
// script or style and nothing from elsewhere, and its HTML has none.
func TestPageIsStrict(t *testing.T) {
	a, _ := newAdapter(t)
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	csp := rec.Header().Get("Content-Security-Policy")
	if rec.Code != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") {
		t.Errorf("GET / = %d, CSP %q", rec.Code, csp)
	}
	html := rec.Body.String()
	if m := regexp.MustCompile(`<script>|<style|\son[a-z]+=|style="|src="(https?:)?//`).FindString(html); m != "" {
		t.Errorf("index.html has inline or remote code: %q", m)
	}
	for _, path := range []string{"/app.js", "/style.css", "/vendor/marked.umd.js", "/vendor/purify.min.js"} {
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 {
			t.Errorf("GET %s = %d", path, rec.Code)
		}
	}
}
