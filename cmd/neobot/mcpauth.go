package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/cmd/neobot/internal/connect"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/mcp/oauth"
	"github.com/neobot/neobot/store"
)

// callbackPath is where authorization servers send people back after an
// MCP server login, on the ops listener (NEO_HEALTH_ADDR).
const callbackPath = "/mcp/oauth/callback"

// clientDocPath is neobot's OAuth client ID metadata document, on the ops
// listener: with an https NEO_PUBLIC_URL, its URL is neobot's client ID at
// authorization servers that support such documents.
const clientDocPath = "/mcp/oauth/client.json"

// clientMetadataURL is the URL of neobot's client ID metadata document:
// NEO_CLIENT_METADATA_URL, else the one served on the ops listener, or ""
// when NEO_PUBLIC_URL is not https (an authorization server must fetch the
// document, and a client ID is an https URL).
func (c *Config) clientMetadataURL() string {
	if c.ClientDocURL != "" {
		return c.ClientDocURL
	}
	if !strings.HasPrefix(c.PublicURL, "https://") {
		return ""
	}
	return strings.TrimRight(c.PublicURL, "/") + clientDocPath
}

// serveClientDoc answers the client ID metadata document: who neobot is
// and where its logins come back to. With NEO_CLIENT_METADATA_URL it is
// the document to host there (its client_id is that URL).
func serveClientDoc(cfg *Config) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		id := cfg.clientMetadataURL()
		if id == "" {
			http.NotFound(w, nil)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		doc := map[string]any{
			"client_id": id, "client_name": "neobot",
			"redirect_uris":  []string{cfg.publicURL() + callbackPath},
			"grant_types":    []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none",
		}
		if cfg.PublicURL != "" {
			doc["client_uri"] = strings.TrimRight(cfg.PublicURL, "/")
		}
		_ = json.NewEncoder(w).Encode(doc)
	}
}

// publicURL is where browsers reach the ops listener: NEO_PUBLIC_URL, or
// loopback on NEO_HEALTH_ADDR's port.
func (c *Config) publicURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	_, port, err := net.SplitHostPort(c.HealthAddr)
	if err != nil || port == "" {
		return ""
	}
	return "http://127.0.0.1:" + port
}

// webPage is where a browser on this machine opens the web chat:
// NEO_WEB_ADDR, with loopback for a host left empty or unspecified
// (":8080", "0.0.0.0:8080"), which a browser cannot open.
func (c *Config) webPage() string {
	host, port, err := net.SplitHostPort(c.WebAddr)
	if err != nil {
		return "http://" + c.WebAddr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// linkOptions are the settings people's connect links take: where their
// browsers reach the ops listener and the sign-ins set up.
func linkOptions(cfg *Config, log zerolog.Logger) connect.Options {
	o := connect.Options{
		Base: cfg.publicURL(), Log: log,
		SlackAPIURL: cfg.SlackAPIURL, SlackClientID: cfg.SlackClientID, SlackClientSecret: cfg.SlackClientSecret.Reveal(),
		DiscordAPIURL: cfg.DiscordAPIURL, DiscordClientID: cfg.DiscordClientID, DiscordClientSecret: cfg.DiscordClientSecret.Reveal(),
	}
	if cfg.WebAddr != "" {
		o.WebPage = cfg.webPage()
	}
	return o
}

// oauthOptions configures the MCP OAuth client, or returns nil without
// NEO_SECRET_KEY (servers with auth then wait, saying so).
func oauthOptions(cfg *Config, db database) (*mcp.OAuth, error) {
	if cfg.SecretKey == "" {
		return nil, nil
	}
	key, err := oauth.ParseKey(cfg.SecretKey.Reveal())
	if err != nil {
		return nil, fmt.Errorf("NEO_SECRET_KEY: %w", err)
	}
	tokens, ok := db.(mcp.TokenStore)
	if !ok {
		return nil, errors.New("this store keeps no MCP tokens")
	}
	redirect, doc := "", "" // no listener for the callback: stored grants work, logins cannot start
	if base := cfg.publicURL(); base != "" {
		redirect, doc = base+callbackPath, cfg.clientMetadataURL() // the document is served where the callback is
	}
	return &mcp.OAuth{
		Tokens:            tokens,
		Key:               key,
		RedirectURL:       redirect,
		ClientMetadataURL: doc,
		HTTPClient:        &http.Client{Timeout: 30 * time.Second},
	}, nil
}

// logins is what the OAuth callback and the admin API need of the tool
// surface.
type logins interface {
	Login(ctx context.Context, alias string) (string, error)
	FinishLogin(ctx context.Context, state, code, iss string) (alias, user string, err error)
	Logout(ctx context.Context, alias, user string) error
}

// registerMCP adds the MCP login routes to the admin API: POST
// /admin/v1/mcp/login?server=ALIAS answers {"url": ...}; POST
// /admin/v1/mcp/logout?server=ALIAS[&user=ID] deletes the grant.
func (a adminAPI) registerMCP(mux *http.ServeMux, l logins) {
	mux.HandleFunc("POST /admin/v1/mcp/login", a.serve(func(r *http.Request) (any, error) {
		alias := r.URL.Query().Get("server")
		if alias == "" {
			return nil, badRequest{errors.New("server: name the manifest server's alias")}
		}
		u, err := l.Login(r.Context(), alias)
		if err != nil {
			return nil, err
		}
		return map[string]string{"url": u}, nil
	}))
	mux.HandleFunc("POST /admin/v1/mcp/logout", a.serve(func(r *http.Request) (any, error) {
		alias := r.URL.Query().Get("server")
		if alias == "" {
			return nil, badRequest{errors.New("server: name the manifest server's alias")}
		}
		return map[string]string{}, l.Logout(r.Context(), alias, r.URL.Query().Get("user"))
	}))
}

// runMCP is `neobot mcp login ALIAS` and `neobot mcp logout ALIAS [--user
// ID]`: an MCP server's OAuth login through the running bot (its listener
// serves the callback), and the removal of a stored grant.
func (m *Main) runMCP(ctx context.Context, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = append([]string{"login"}, args...)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("mcp: say login ALIAS or logout ALIAS [--user ID]")
	}
	verb, args := args[0], args[1:]
	if len(args) > 1 && !strings.HasPrefix(args[0], "-") {
		args = append(args[1:], args[0]) // the alias first, flags after
	}
	user := ""
	cfg, rest, _, err := m.setup("neobot mcp "+verb, args, func(fs *flag.FlagSet) {
		if verb == "logout" {
			fs.StringVar(&user, "user", "", "remove this person's own grant (a per_user server) instead of the operator's")
		}
	})
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fmt.Errorf("mcp %s: give one server alias from the manifest", verb)
	}
	alias := rest[0]
	if verb == "logout" {
		// With no bot holding the database, delete the grant there.
		db, err := openDatabase(ctx, cfg, zerolog.Nop(), dbOptions{lockTimeout: storeLockWait})
		if err == nil {
			m.onClose(db.Close)
			tokens, ok := db.(mcp.TokenStore)
			if !ok {
				return errors.New("mcp logout: this store keeps no MCP tokens")
			}
			if err := tokens.DeleteMCPToken(ctx, mcp.TokenKey(alias, user)); err != nil {
				return fmt.Errorf("mcp logout: %w", err)
			}
			m.loggedOut(alias, user)
			return nil
		}
		if !errors.Is(err, store.ErrLocked) {
			return fmt.Errorf("mcp logout: %w", err)
		}
	}
	if cfg.AdminToken == "" {
		return fmt.Errorf("mcp %s: this goes through the running bot's admin API: set NEO_ADMIN_TOKEN, the same for the bot and this command (and NEO_HEALTH_ADDR or NEO_ADMIN_URL to reach it)", verb)
	}
	r, err := remoteAdmin(cfg, 60*time.Second)
	if err != nil {
		return fmt.Errorf("mcp %s: %w", verb, err)
	}
	q := url.Values{"server": {alias}}
	switch verb {
	case "login":
		var out struct {
			URL string `json:"url"`
		}
		if err := r.call(ctx, http.MethodPost, "/mcp/login", q, nil, &out); err != nil {
			return fmt.Errorf("mcp login: %w (the login goes through the running bot, whose listener serves the callback: start neobot with NEO_HEALTH_ADDR, NEO_ADMIN_TOKEN and NEO_SECRET_KEY set)", err)
		}
		fmt.Fprintf(m.Stdout, "Open this link to let neobot use %s (it works once, for 15 minutes):\n\n  %s\n\nThe server starts as soon as the login completes.\n", alias, out.URL)
		return nil
	case "logout":
		if user != "" {
			q.Set("user", user)
		}
		var out map[string]string
		if err := r.call(ctx, http.MethodPost, "/mcp/logout", q, nil, &out); err != nil {
			return fmt.Errorf("mcp logout: %w", err)
		}
		m.loggedOut(alias, user)
		return nil
	}
	return fmt.Errorf("mcp: unknown verb %q; say login or logout", verb)
}

func (m *Main) loggedOut(alias, user string) {
	who := "the operator's"
	if user != "" {
		who = user + "'s"
	}
	fmt.Fprintf(m.Stdout, "Removed %s token for %s.\n", who, alias)
}
