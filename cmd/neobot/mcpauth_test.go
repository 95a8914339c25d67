package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
