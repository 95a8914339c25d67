package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestReachCheck(t *testing.T) {
	tests := []struct {
		server netClass
		url    string
		ok     bool
	}{
		{classPublic, "https://auth.example.com/token", true},
		{classPublic, "https://93.184.216.34/token", true},
		{classPublic, "http://127.0.0.1:8080/token", false},
		{classPublic, "http://localhost/token", false},
		{classPublic, "http://app.localhost/token", false},
		{classPublic, "http://[::1]/token", false},
		{classPublic, "https://10.0.0.5/token", false},
		{classPublic, "https://192.168.1.1/token", false},
		{classPublic, "https://100.64.0.1/token", false},
		{classPublic, "https://[fd00::1]/token", false},
		{classPublic, "http://169.254.169.254/latest/meta-data", false},
		{classPublic, "https://[fe80::1]/token", false},
		{classPublic, "https://0.0.0.0/token", false},
		{classPublic, "https://[::ffff:10.0.0.5]/token", false},
		{classLoopback, "http://127.0.0.1:8080/token", true},
		{classLoopback, "https://auth.example.com/token", true},
		{classLoopback, "https://10.0.0.5/token", false},
		{classLoopback, "http://169.254.169.254/", false},
		{classPrivate, "https://10.0.0.5/token", true},
		{classPrivate, "http://127.0.0.1/token", false},
		{classLinkLocal, "http://169.254.169.254/", true},
		{classLinkLocal, "https://10.0.0.5/token", false},
	}
	for _, tt := range tests {
		err := reach{server: tt.server}.check("token_endpoint", tt.url)
		if (err == nil) != tt.ok {
			t.Errorf("reach{%s}.check(%q) = %v, want ok %v", tt.server, tt.url, err, tt.ok)
		}
	}
}

// TestReachDial: a name (or a redirect) that leads to an address of
// another class than the MCP server's is refused when dialed.
func TestReachDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{}`)) }))
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		server netClass
		ok     bool
	}{{classLoopback, true}, {classPublic, false}, {classPrivate, false}} {
		hc := reach{server: tt.server}.client(&http.Client{})
		resp, err := hc.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != tt.ok {
			t.Errorf("a dial to loopback for a %s server = %v, want ok %v", tt.server, err, tt.ok)
		}
	}
}

// TestDiscoverResourceRefusesInternal: a challenge that names resource
// metadata on an internal address is refused before any request.
func TestDiscoverResourceRefusesInternal(t *testing.T) {
	server, _ := url.Parse("https://mcp.example.com/mcp")
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("a request was sent to %s", r.URL)
		return nil, http.ErrUseLastResponse
	})}
	for _, rm := range []string{"http://169.254.169.254/latest/meta-data", "https://10.1.2.3/.well-known/oauth-protected-resource", "http://127.0.0.1:9/prm"} {
		_, err := discoverResource(context.Background(), hc, reach{server: classPublic}, server, Challenge{ResourceMetadata: rm})
		if err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("discoverResource(resource_metadata=%s) = %v, want a refusal", rm, err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCheckServerMetadata(t *testing.T) {
	good := func() ServerMetadata {
		return ServerMetadata{
			Issuer:                        "https://auth.example.com",
			AuthorizationEndpoint:         "https://auth.example.com/authorize",
			TokenEndpoint:                 "https://auth.example.com/token",
			RegistrationEndpoint:          "https://auth.example.com/register",
			CodeChallengeMethodsSupported: []string{"plain", "S256"},
		}
	}
	tests := []struct {
		name   string
		edit   func(*ServerMetadata)
		issuer string
		want   string // part of the error; "" for none
	}{
		{"good", func(*ServerMetadata) {}, "https://auth.example.com", ""},
		{"issuer with a trailing slash", func(*ServerMetadata) {}, "https://auth.example.com/", ""},
		{"another issuer", func(md *ServerMetadata) { md.Issuer = "https://evil.example.com" }, "https://auth.example.com", "names the issuer"},
		{"no issuer", func(md *ServerMetadata) { md.Issuer = "" }, "https://auth.example.com", "names the issuer"},
		{"issuer path differs", func(*ServerMetadata) {}, "https://auth.example.com/tenant", "names the issuer"},
		{"no code_challenge_methods_supported", func(md *ServerMetadata) { md.CodeChallengeMethodsSupported = nil }, "https://auth.example.com", "S256"},
		{"plain only", func(md *ServerMetadata) { md.CodeChallengeMethodsSupported = []string{"plain"} }, "https://auth.example.com", "S256"},
		{"no token endpoint", func(md *ServerMetadata) { md.TokenEndpoint = "" }, "https://auth.example.com", "lacks"},
		{"http token endpoint", func(md *ServerMetadata) { md.TokenEndpoint = "http://auth.example.com/token" }, "https://auth.example.com", "not https"},
		{"private registration endpoint", func(md *ServerMetadata) { md.RegistrationEndpoint = "https://10.0.0.5/register" }, "https://auth.example.com", "private address"},
		{"link-local token endpoint", func(md *ServerMetadata) { md.TokenEndpoint = "https://[fe80::1]/token" }, "https://auth.example.com", "link-local address"},
		{"loopback revocation endpoint", func(md *ServerMetadata) { md.RevocationEndpoint = "http://127.0.0.1/revoke" }, "https://auth.example.com", "loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := good()
			tt.edit(&md)
			err := checkServerMetadata(&md, "https://auth.example.com/.well-known/oauth-authorization-server", tt.issuer, reach{server: classPublic})
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("checkServerMetadata() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestFinishChecksIss: the redirect's iss (RFC 9207) must be the
// issuer's when present, and present when the issuer promised it.
func TestFinishChecksIss(t *testing.T) {
	ts := newTokenServer(t)
	tests := []struct {
		name     string
		required bool
		iss      string
		ok       bool
	}{
		{"promised and right", true, "https://auth.example.com", true},
		{"promised and missing", true, "", false},
		{"promised and wrong", true, "https://evil.example.com", false},
		{"not promised, absent", false, "", true},
		{"not promised, wrong", false, "https://evil.example.com", false},
		{"not promised, right", false, "https://auth.example.com", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Pending{State: "s", Verifier: "v", Issuer: "https://auth.example.com", IssRequired: tt.required, TokenEndpoint: ts.srv.URL + "/token"}
			_, err := (&Flow{}).Finish(context.Background(), p, Redirect{Code: "c", State: "s", Iss: tt.iss})
			refusedIss := err != nil && strings.Contains(err.Error(), "RFC 9207")
			if refusedIss == tt.ok {
				t.Errorf("Finish(iss %q) = %v, want refused for its iss: %v", tt.iss, err, !tt.ok)
			}
		})
	}
}

// TestBeginRefusesMetadata drives discovery against a loopback server
// whose authorization server metadata is wrong in one way each.
func TestBeginRefusesMetadata(t *testing.T) {
	tests := []struct {
		name string
		edit func(md map[string]any, base string)
		want string // part of the error; "" for none
	}{
		{"good", func(map[string]any, string) {}, ""},
		{"issuer mismatch", func(md map[string]any, _ string) { md["issuer"] = "https://other.example.com" }, "names the issuer"},
		{"no code_challenge_methods_supported", func(md map[string]any, _ string) { delete(md, "code_challenge_methods_supported") }, "S256"},
		{"token endpoint on a private address", func(md map[string]any, _ string) { md["token_endpoint"] = "https://10.0.0.5/token" }, "private address"},
		{"registration endpoint on a link-local address", func(md map[string]any, _ string) {
			md["registration_endpoint"] = "https://169.254.169.254/register"
		}, "link-local address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srv *httptest.Server
			mux := http.NewServeMux()
			mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
				writeTestJSON(w, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
			})
			mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
				md := map[string]any{
					"issuer": srv.URL, "authorization_endpoint": srv.URL + "/authorize", "token_endpoint": srv.URL + "/token",
					"registration_endpoint": srv.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
				}
				tt.edit(md, srv.URL)
				writeTestJSON(w, md)
			})
			mux.HandleFunc("POST /register", func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusCreated)
				writeTestJSON(w, map[string]any{"client_id": "c1"})
			})
			srv = httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			f := &Flow{ServerURL: srv.URL + "/mcp", RedirectURI: "http://127.0.0.1:9/cb"}
			_, err := f.Begin(context.Background(), Challenge{}, "")
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Begin() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRegistrationsPerIssuer: a dynamic registration is reused for its
// own issuer, and never presented to another.
func TestRegistrationsPerIssuer(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n++
		w.WriteHeader(http.StatusCreated)
		writeTestJSON(w, map[string]any{"client_id": "c" + string(rune('0'+n))})
	}))
	t.Cleanup(srv.Close)
	f := &Flow{ServerURL: "http://127.0.0.1:9/mcp", RedirectURI: "http://127.0.0.1:9/cb", Registrations: &Registrations{}}
	get := func(issuer string) string {
		c, err := f.client(context.Background(), http.DefaultClient, &ServerMetadata{Issuer: issuer, RegistrationEndpoint: srv.URL})
		if err != nil {
			t.Fatalf("client(%s) error = %v", issuer, err)
		}
		return c.ID
	}
	a1, a2, b := get("https://a.example.com"), get("https://a.example.com"), get("https://b.example.com")
	if a1 != a2 || a1 == b || n != 2 {
		t.Errorf("clients = %s, %s, %s after %d registrations; want issuer a's reused, b's its own", a1, a2, b, n)
	}
	// A token endpoint that no longer knows the client drops it: the
	// next login registers anew.
	tok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		writeTestJSON(w, map[string]any{"error": "invalid_client"})
	}))
	t.Cleanup(tok.Close)
	p := &Pending{State: "s", Issuer: "https://a.example.com", RedirectURI: f.RedirectURI, Client: Client{ID: a1}, TokenEndpoint: tok.URL}
	if _, err := f.Finish(context.Background(), p, Redirect{Code: "c", State: "s"}); err == nil {
		t.Fatal("Finish() with an unknown client = nil error")
	}
	if a3 := get("https://a.example.com"); a3 == a1 || n != 3 {
		t.Errorf("client after invalid_client = %s (%d registrations), want a new registration", a3, n)
	}
}

func writeTestJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func TestApplicationType(t *testing.T) {
	for redirect, want := range map[string]string{
		"https://neo.example.com/mcp/oauth/callback": "web",
		"http://127.0.0.1:8081/mcp/oauth/callback":   "native",
		"http://localhost:3000/callback":             "native",
		"http://[::1]:9/cb":                          "native",
	} {
		if got := applicationType(redirect); got != want {
			t.Errorf("applicationType(%q) = %q, want %q", redirect, got, want)
		}
	}
}
