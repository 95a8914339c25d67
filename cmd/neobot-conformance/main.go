// Command neobot-conformance is the client the MCP conformance suite
// (@modelcontextprotocol/conformance) drives: it runs one client scenario
// against the suite's server, built on neobot's own MCP package (core/mcp)
// and OAuth client (core/mcp/oauth), exactly as neobot talks to a remote
// server.
//
// The suite starts it as `neobot-conformance SERVER_URL` with the
// scenario's name in MCP_CONFORMANCE_SCENARIO and, for scenarios that
// hand out credentials, a JSON object in MCP_CONFORMANCE_CONTEXT. It exits
// 0 when the scenario ran through; the suite judges the rest from what it
// saw on the wire. cmd/neobot-conformance's test runs the suite.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/mcp/oauth"
)

// clientMetadataURL is the client ID metadata document the suite's CIMD
// scenario expects a client to use as its client_id.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// redirectURI is where the suite's authorization server redirects with
// the code; nothing listens there (the client reads the redirect's
// Location instead of following it).
const redirectURI = "http://localhost:3000/callback"

func main() {
	if len(os.Args) != 2 || os.Getenv("MCP_CONFORMANCE_SCENARIO") == "" {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=NAME neobot-conformance SERVER_URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	play := run
	if os.Getenv("NEOBOT_BINARY") != "" {
		play = runBinary // through the product binary (binary.go)
	}
	if err := play(ctx, os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "neobot-conformance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scenario, serverURL string) error {
	opts := mcp.DialOptions{URL: serverURL, ClientName: "neobot-conformance", ClientVersion: "1.0.0"}
	switch {
	case scenario == "elicitation-sep1034-client-defaults", scenario == "sep-2322-client-request-state":
		// Questions, asked by the server (2025-11-25) or in a call's
		// input_required result (2026-07-28), answered with the defaults.
		opts.Elicit = acceptDefaults
	case strings.HasPrefix(scenario, "auth/"):
		hc, err := oauthClient(serverURL, os.Getenv("MCP_CONFORMANCE_CONTEXT"))
		if err != nil {
			return err
		}
		opts.HTTPClient = hc
	}
	s, err := mcp.Dial(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	tools, err := s.Tools(ctx)
	if err != nil {
		return err
	}
	plan, err := calls(scenario, os.Getenv("MCP_CONFORMANCE_CONTEXT"), tools)
	if err != nil {
		return err
	}
	for _, c := range plan {
		if err := call(ctx, s, c.Name, c.Arguments); err != nil {
			return err
		}
	}
	return nil
}

// toolCall is one call a scenario wants made.
type toolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// calls are the calls to make in scenario, given the server's tools and
// the suite's context (MCP_CONFORMANCE_CONTEXT): the calls the context
// names (toolCalls, with their arguments), else what the scenario asks
// for, else every tool once with no arguments (the elicitation test, the
// reconnection test, the auth test tool, the header tests' tools).
func calls(scenario, rawContext string, tools []mcp.Tool) ([]toolCall, error) {
	if rawContext != "" {
		var c struct {
			ToolCalls []toolCall `json:"toolCalls"`
		}
		if err := json.Unmarshal([]byte(rawContext), &c); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		if len(c.ToolCalls) > 0 {
			return c.ToolCalls, nil
		}
	}
	switch scenario {
	case "initialize", "json-schema-ref-no-deref":
		// Listing is the scenario (the second one's server has no tool
		// to call: it checks that nothing fetches its schema's $ref).
		return nil, nil
	case "tools_call":
		return []toolCall{{Name: "add_numbers", Arguments: map[string]any{"a": 5, "b": 3}}}, nil
	case "json-schema-2020-12-preservation":
		// Echo the focal tool's schema, as this client received it.
		for _, t := range tools {
			if t.Name == "json_schema_2020_12_tool" {
				return []toolCall{{Name: "json_schema_echo", Arguments: map[string]any{"schema": t.InputSchema}}}, nil
			}
		}
		return nil, errors.New("the server did not list json_schema_2020_12_tool")
	}
	var out []toolCall
	for _, t := range tools {
		out = append(out, toolCall{Name: t.Name, Arguments: map[string]any{}})
	}
	return out, nil
}

func call(ctx context.Context, s *mcp.Session, tool string, args map[string]any) error {
	res, err := s.Call(ctx, tool, args)
	if err != nil {
		return err
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			text = append(text, c.Text)
		}
		return fmt.Errorf("tool %s failed: %s", tool, strings.Join(text, " "))
	}
	return nil
}

// acceptDefaults accepts an elicitation with every field the schema gives
// a default for set to it (SEP-1034): the answer of a user who changes
// nothing in the form, through the same form code Neo's questions use.
func acceptDefaults(_ context.Context, e mcp.Elicitation) (mcp.ElicitResult, error) {
	form, err := core.ParseForm(e.Schema)
	if err != nil {
		return mcp.ElicitResult{}, err
	}
	return mcp.ElicitResult{Action: mcp.ElicitAccept, Content: form.WithDefaults(nil)}, nil
}

// oauthClient is an HTTP client that authorizes with the suite's
// authorization server: the conformance "user" approves at once, so the
// authorization URL's redirect carries the code.
func oauthClient(serverURL, rawContext string) (*http.Client, error) {
	flow := &oauth.Flow{
		ServerURL:         serverURL,
		RedirectURI:       redirectURI,
		ClientMetadataURL: clientMetadataURL,
		ClientName:        "neobot-conformance",
	}
	if rawContext != "" {
		var c struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(rawContext), &c); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		flow.Client = oauth.Client{ID: c.ClientID, Secret: c.ClientSecret}
	}
	t := &oauth.Transport{Flow: flow, Store: &oauth.MemoryStore{}, Authorize: followRedirect}
	return &http.Client{Transport: t}, nil
}

// followRedirect opens the authorization URL as a browser would, and
// reads the code, state and iss off the redirect instead of following it.
func followRedirect(ctx context.Context, p *oauth.Pending) (oauth.Redirect, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return oauth.Redirect{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return oauth.Redirect{}, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return oauth.Redirect{}, errors.New("the authorization endpoint did not redirect back")
	}
	q := loc.Query()
	return oauth.Redirect{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
