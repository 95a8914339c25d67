package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/mcp"
)

func TestClientDoc(t *testing.T) {
	tests := []struct {
		public, doc string
		want        string // the client ID; "" means no document
	}{
		{"", "", ""},
		{"http://neo.example.com", "", ""},
		{"https://neo.example.com/", "", "https://neo.example.com/mcp/oauth/client.json"},
		{"https://neo.example.com/", "https://ids.example.org/neo.json", "https://ids.example.org/neo.json"},
		{"http://neo.example.com", "https://ids.example.org/neo.json", "https://ids.example.org/neo.json"},
	}
	for _, tt := range tests {
		cfg := &Config{PublicURL: tt.public, ClientDocURL: tt.doc, HealthAddr: ":8081"}
		rec := httptest.NewRecorder()
		serveClientDoc(cfg)(rec, httptest.NewRequest(http.MethodGet, clientDocPath, nil))
		if tt.want == "" {
			if rec.Code != http.StatusNotFound || cfg.clientMetadataURL() != "" {
				t.Errorf("NEO_PUBLIC_URL=%q: document %d, client ID %q; want none", tt.public, rec.Code, cfg.clientMetadataURL())
			}
			continue
		}
		var doc struct {
			ClientID     string   `json:"client_id"`
			RedirectURIs []string `json:"redirect_uris"`
			AuthMethod   string   `json:"token_endpoint_auth_method"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc.ClientID != tt.want || cfg.clientMetadataURL() != tt.want ||
			len(doc.RedirectURIs) != 1 || doc.RedirectURIs[0] != strings.TrimRight(tt.public, "/")+callbackPath || doc.AuthMethod != "none" {
			t.Errorf("NEO_PUBLIC_URL=%q: document %s (%v), want client_id %s and the callback", tt.public, rec.Body, err, tt.want)
		}
	}
}

// fakeLogins finishes the login whose state is "good".
type fakeLogins struct{}

func (fakeLogins) Login(context.Context, string) (string, error) { return "", nil }
func (fakeLogins) Logout(context.Context, string, string) error  { return nil }
func (fakeLogins) FinishLogin(_ context.Context, state, code, _ string) (string, string, error) {
	switch state {
	case "good":
		return "notes", "", nil
	case "refused":
		return "notes", "", errors.New("oauth: token endpoint answered HTTP 400: invalid_grant")
	}
	return "", "", mcp.ErrUnknownLogin
}

func TestCallbackPage(t *testing.T) {
	tests := []struct {
		query  string
		status int
		want   string
	}{
		{"?state=good&code=c0de-SECRET", http.StatusOK, "connected to notes"},
		{"?state=stale&code=c0de-SECRET", http.StatusBadRequest, "expired or was already used"},
		{"?state=refused&code=c0de-SECRET", http.StatusBadGateway, "refused the code"},
		{"?error=access_denied&state=good", http.StatusBadRequest, "did not grant access (access_denied)"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		serveCallback(fakeLogins{}, nil)(rec, httptest.NewRequest(http.MethodGet, callbackPath+tt.query, nil))
		body := rec.Body.String()
		if rec.Code != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("callback%s = %d %q, want %d saying %q", tt.query, rec.Code, body, tt.status, tt.want)
		}
		if strings.Contains(body, "SECRET") || strings.Contains(body, "invalid_grant") {
			t.Errorf("callback%s shows the code or the authorization server's error: %q", tt.query, body)
		}
		if rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("callback%s Cache-Control = %q, want no-store", tt.query, rec.Header().Get("Cache-Control"))
		}
	}
}

// TestWebPageAddress: the links neobot prints and sends for the web chat open in
// a browser, whatever host NEO_WEB_ADDR binds.
func TestWebPageAddress(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080":    "http://127.0.0.1:8080",
		":8080":             "http://127.0.0.1:8080",
		"0.0.0.0:8080":      "http://127.0.0.1:8080",
		"[::]:8080":         "http://127.0.0.1:8080",
		"neo.internal:8080": "http://neo.internal:8080",
		"[::1]:8080":        "http://[::1]:8080",
	} {
		if got := (&Config{WebAddr: addr}).webPage(); got != want {
			t.Errorf("webPage(NEO_WEB_ADDR=%q) = %q, want %q", addr, got, want)
		}
	}
}
