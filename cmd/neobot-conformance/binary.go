package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// The product binary mode (scripts/conformance-binary.sh): with
// NEOBOT_BINARY set, this program plays a scenario through neobot itself
// rather than through core/mcp directly. It writes a manifest naming the
// suite's server as "conf", starts `neobot` with the web chat and a
// scripted model that calls the server's tools, logs in the way a person
// would (`neobot mcp login conf` in operator mode, the connect link the
// web chat shows in per-user mode, each opened like a browser that
// approves at once), sends a message as a web user, and answers what
// neobot answers: a question by submitting its form with the defaults, a
// "needs more permission" by logging in again.

const (
	// alias is the suite's server's alias in the manifest.
	alias = "conf"
	// mainModel and cheapModel name the scripted model's two roles.
	mainModel, cheapModel = "conformance-main", "conformance-cheap"
	// rounds bounds the messages sent for one scenario: a first, then one
	// after each login or link the scenario calls for.
	rounds = 4
)

// scenarioTools are the tools the suite's server has in each scenario,
// as the manifest must list them; the auth scenarios' server has
// test-tool. http-invalid-tool-headers' server has ten more, whose
// x-mcp-header annotations break SEP-2243: neobot leaves them out, so
// the manifest does not list them.
func scenarioTools(scenario string) []string {
	if strings.HasPrefix(scenario, "sep-2640-") {
		// The skills extension's servers (SEP-2640) serve resources only.
		return []string{}
	}
	switch scenario {
	case "initialize", "request-metadata":
		return []string{}
	case "tools_call":
		return []string{"add_numbers"}
	case "elicitation-sep1034-client-defaults":
		return []string{"test_client_elicitation_defaults"}
	case "sse-retry":
		return []string{"test_reconnection"}
	case "http-standard-headers":
		return []string{"my-hyphenated-tool", "test_headers"}
	case "http-custom-headers":
		return []string{"test_custom_headers", "test_custom_headers_null"}
	case "sep-2322-client-request-state":
		return []string{"test_mrtr_echo_state", "test_mrtr_no_result_type", "test_mrtr_no_state", "test_mrtr_unrelated"}
	case "http-invalid-tool-headers":
		return []string{"valid_tool"}
	case "json-schema-ref-no-deref":
		return []string{"lookup_user"}
	case "json-schema-2020-12-preservation":
		return []string{"json_schema_2020_12_tool", "json_schema_echo"}
	}
	return []string{"test-tool"}
}

// nothingToCall reports whether the scenario is played by connecting
// alone: its server has no tools, or (json-schema-ref-no-deref) one that
// only has to be listed.
func nothingToCall(scenario string) bool {
	return len(scenarioTools(scenario)) == 0 || scenario == "json-schema-ref-no-deref"
}

// binaryRun is one scenario played through the product binary.
type binaryRun struct {
	neobot, mode, scenario, serverURL string
	dir                               string
	env                               []string
	web, ops, token                   string
	model                             *llmtest.Server
	proc                              *exec.Cmd
	out                               *bytes.Buffer
}

func runBinary(ctx context.Context, scenario, serverURL string) error {
	r := &binaryRun{neobot: os.Getenv("NEOBOT_BINARY"), mode: os.Getenv("NEOBOT_MODE"), scenario: scenario, serverURL: serverURL}
	if r.mode == "" {
		r.mode = "oauth"
	}
	dir, err := os.MkdirTemp("", "neobot-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r.dir = dir
	r.model = llmtest.NewServer()
	defer r.model.Close()
	named, err := contextCalls(os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		return err
	}
	r.model.Handle(script(scenario, named))
	if err := r.configure(); err != nil {
		return err
	}
	if err := r.start(ctx); err != nil {
		return err
	}
	defer r.stop()
	err = r.play(ctx)
	if err != nil && os.Getenv("NEOBOT_CONFORMANCE_LOG") != "" {
		fmt.Fprintf(os.Stderr, "neobot output:\n%s\n", r.out.String())
	}
	return err
}

// contextCalls are the calls the suite's context names (toolCalls, with
// their arguments); none when it names none.
func contextCalls(rawContext string) (map[string]map[string]any, error) {
	if rawContext == "" {
		return nil, nil
	}
	var c struct {
		ToolCalls []toolCall `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(rawContext), &c); err != nil {
		return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	named := map[string]map[string]any{}
	for _, tc := range c.ToolCalls {
		named[tc.Name] = tc.Arguments
	}
	return named, nil
}

// script is the model: a user's message is answered by calling the
// suite's server's tools once each (those the suite's context names,
// with its arguments; else all of them), a tool's result by a short
// answer. In json-schema-2020-12-preservation it calls the echo tool
// with the schema neobot gave it for the focal tool, which is what that
// scenario checks: that the schema reached the model unchanged.
func script(scenario string, named map[string]map[string]any) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		if req.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		if n := len(req.Messages); n == 0 || req.Messages[n-1].Role != "user" {
			return llmtest.Text("done")
		}
		var calls []llm.ToolCall
		for i, t := range req.Tools {
			name := t.Function.Name
			tool, ok := strings.CutPrefix(name, alias+"__")
			if !ok {
				continue
			}
			args := map[string]any{}
			switch {
			case len(named) > 0:
				if args, ok = named[tool]; !ok {
					continue
				}
			case tool == "add_numbers":
				args = map[string]any{"a": 5, "b": 3}
			case scenario == "json-schema-2020-12-preservation":
				if tool != "json_schema_echo" {
					continue
				}
				for _, focal := range req.Tools {
					if focal.Function.Name == alias+"__json_schema_2020_12_tool" {
						args = map[string]any{"schema": focal.Function.Parameters}
					}
				}
			}
			raw, _ := json.Marshal(args)
			calls = append(calls, llmtest.Call(fmt.Sprintf("call_%d", i), name, string(raw)))
		}
		if len(calls) == 0 {
			return llmtest.Text("done")
		}
		return llmtest.Calls(calls...)
	}
}

// configure writes the manifest and settings and prepares neobot's
// environment.
func (r *binaryRun) configure() error {
	token, hash, err := web.NewToken()
	if err != nil {
		return err
	}
	r.token = token
	webAddr, err := freeAddr()
	if err != nil {
		return err
	}
	opsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	r.web, r.ops = "http://"+webAddr, "http://"+opsAddr
	spec := map[string]any{"alias": alias, "transport": "http", "url": r.serverURL, "version": "1.0.0",
		"tools": scenarioTools(r.scenario), "side_effects": "read"}
	env := map[string]string{}
	if strings.HasPrefix(r.scenario, "auth/") {
		spec["auth"] = r.mode
		if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
			var c struct {
				ClientID     string `json:"client_id"`
				ClientSecret string `json:"client_secret"`
			}
			if err := json.Unmarshal([]byte(raw), &c); err != nil {
				return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
			}
			if c.ClientID != "" {
				o := map[string]any{"client_id": c.ClientID}
				if c.ClientSecret != "" {
					o["client_secret"] = "$env:CONFORMANCE_CLIENT_SECRET"
					env["CONFORMANCE_CLIENT_SECRET"] = c.ClientSecret
				}
				spec["oauth"] = o
			}
		}
	}
	manifest, err := r.write("manifest.json", map[string]any{"did": "did:web:neobot.conformance:agents:binary", "servers": []any{spec}})
	if err != nil {
		return err
	}
	settings, err := r.write("settings.json", map[string]any{"skills": map[string]any{
		"default": map[string]any{"side_effects": map[string]string{"read": "allow"}}}})
	if err != nil {
		return err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	admin := make([]byte, 20)
	_, _ = rand.Read(admin)
	for k, v := range map[string]string{
		"NEO_MODEL": mainModel, "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": r.model.BaseURL(),
		"NEO_DB_PATH": filepath.Join(r.dir, "neobot.db"), "NEO_WEB_ADDR": webAddr, "NEO_WEB_USERS": "driver=" + hash,
		"NEO_HEALTH_ADDR": opsAddr, "NEO_ADMIN_TOKEN": hex.EncodeToString(admin), "NEO_SECRET_KEY": hex.EncodeToString(key),
		"NEO_MANIFEST": manifest, "NEO_CONFIG": settings, "NEO_LOG_FORMAT": "json",
	} {
		env[k] = v
	}
	// An operator's hosted client ID metadata document (the suite's own, as
	// auth/basic-cimd wants: scripts/conformance-binary.sh and
	// TestConformanceBinary set it) passes through.
	if doc := os.Getenv("NEO_CLIENT_METADATA_URL"); doc != "" {
		env["NEO_CLIENT_METADATA_URL"] = doc
	}
	r.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		r.env = append(r.env, k+"="+v)
	}
	return nil
}

func (r *binaryRun) write(name string, v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	path := filepath.Join(r.dir, name)
	return path, os.WriteFile(path, data, 0o600)
}

// start starts neobot and waits for its web chat.
func (r *binaryRun) start(ctx context.Context) error {
	r.out = &bytes.Buffer{}
	r.proc = exec.Command(r.neobot)
	r.proc.Env = r.env
	r.proc.Stdout, r.proc.Stderr = &lockedWriter{w: r.out}, &lockedWriter{w: r.out}
	if err := r.proc.Start(); err != nil {
		return fmt.Errorf("start neobot: %w", err)
	}
	return poll(ctx, "neobot's web chat", func() bool {
		resp, err := http.Get(r.web + "/v1/openapi.json")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (r *binaryRun) stop() {
	if r.proc != nil && r.proc.Process != nil {
		_ = r.proc.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = r.proc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = r.proc.Process.Kill()
			<-done
		}
	}
}

// play logs in (operator mode), then sends messages until a call of the
// server's tools came back, answering what neobot asks on the way.
func (r *binaryRun) play(ctx context.Context) error {
	auth := strings.HasPrefix(r.scenario, "auth/")
	if auth && r.mode == "oauth" {
		if err := r.login(ctx); err != nil {
			return err
		}
	}
	if nothingToCall(r.scenario) {
		// Nothing to call: the handshake (and listing nothing) is the
		// scenario.
		return poll(ctx, "the server up", func() bool { return r.ready(alias + " up") })
	}
	var conv struct{ ID string }
	if err := r.api(ctx, "POST", "/v1/conversations", map[string]any{}, &conv); err != nil {
		return err
	}
	events, err := r.follow(ctx, conv.ID)
	if err != nil {
		return err
	}
	for range rounds {
		if err := r.api(ctx, "POST", "/v1/conversations/"+conv.ID+"/messages", map[string]string{"text": "run the conformance tools"}, nil); err != nil {
			return err
		}
		link, err := r.turn(ctx, events)
		if err != nil {
			return err
		}
		result := r.lastResult()
		switch {
		case link != "":
			if err := r.connect(ctx, link); err != nil {
				return err
			}
		case strings.Contains(result, "neobot mcp login "+alias):
			if err := r.login(ctx); err != nil {
				return err
			}
		case result != "" && !strings.HasPrefix(result, "error:"):
			return nil
		default:
			return fmt.Errorf("the tool call failed: %q", result)
		}
	}
	return fmt.Errorf("no tool call went through in %d messages", rounds)
}

// turn follows one turn's events to its answer, answering questions with
// their defaults, and returns a connect link neobot showed, if any.
func (r *binaryRun) turn(ctx context.Context, events <-chan web.Event) (string, error) {
	link := ""
	for {
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for neobot's answer: %w", ctx.Err())
		case e, ok := <-events:
			if !ok {
				return "", errors.New("neobot's event stream ended")
			}
			switch e.Type {
			case web.EventNotice:
				var d struct{ Text string }
				_ = json.Unmarshal(e.Data, &d)
				if u := linkRe.FindString(d.Text); u != "" {
					link = u
				}
			case web.EventQuestionAsked:
				if err := r.answerDefaults(ctx, e.Data); err != nil {
					return "", err
				}
			case web.EventAnswer:
				return link, nil
			}
		}
	}
}

// linkRe matches a login link: the authorization URL `neobot mcp login`
// prints, or a person's connect link (neobot's page that first proves
// who opens it).
var linkRe = regexp.MustCompile(`https?://\S+(/authorize\?|/mcp/connect/)\S+`)

// answerDefaults submits a question's form with every field's default,
// as a person who changes nothing would.
func (r *binaryRun) answerDefaults(ctx context.Context, data json.RawMessage) error {
	var q struct {
		Token string
		Form  []struct {
			Name, Type, Default string
		}
	}
	if err := json.Unmarshal(data, &q); err != nil {
		return err
	}
	values := map[string]any{}
	for _, f := range q.Form {
		if f.Default != "" {
			values[f.Name] = f.Default
		}
	}
	return r.api(ctx, "POST", "/v1/gates/"+q.Token+"/form", map[string]any{"values": values}, nil)
}

// lastResult is what the model was last told a call of the server's
// tools returned.
func (r *binaryRun) lastResult() string {
	reqs := r.model.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Model != mainModel {
			continue
		}
		for j := len(reqs[i].Messages) - 1; j >= 0; j-- {
			if m := reqs[i].Messages[j]; m.Role == "tool" {
				return m.Content
			}
		}
	}
	return ""
}

// login runs `neobot mcp login conf` and opens the link it prints, and
// does it again when the server refuses the grant that login brought
// (auth/authorization-server-migration: the server moves to another
// authorization server, and says so with a 401, after the first login).
func (r *binaryRun) login(ctx context.Context) error {
	for range rounds {
		lost := r.ready("revoked or has expired")
		cmd := exec.CommandContext(ctx, r.neobot, "mcp", "login", alias)
		cmd.Env = r.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("neobot mcp login: %w\n%s", err, out)
		}
		link := linkRe.FindString(string(out))
		if link == "" {
			return fmt.Errorf("neobot mcp login printed no link:\n%s", out)
		}
		if err := open(ctx, link); err != nil {
			return err
		}
		// The server comes up, or says why not (a login no longer among
		// the reasons), or refuses the new grant (a first login's grant
		// said to be revoked: log in again).
		again := false
		err = poll(ctx, "the server up after the login", func() bool {
			if r.ready(alias+" up") || !r.ready("neobot mcp login "+alias) {
				return true
			}
			again = !lost && r.ready("revoked or has expired")
			return again
		})
		if err != nil || !again {
			return err
		}
	}
	return fmt.Errorf("the server refused %d logins in a row", rounds)
}

// ready reports whether neobot's /readyz mentions want.
func (r *binaryRun) ready(want string) bool {
	resp, err := http.Get(r.ops + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(body), want)
}

// connect opens a person's connect link as the web user's browser: the
// link sends it to the web chat page (#connect=STATE), where the
// signed-in page tells neobot who it is (POST /v1/connect); the answer
// is where the browser goes on, with the link's cookie, through the
// authorization server to neobot's callback page. An authorization URL
// is opened directly.
func (r *binaryRun) connect(ctx context.Context, link string) error {
	if !strings.Contains(link, "/mcp/connect/") {
		return open(ctx, link)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return err
	}
	resp, err := browser.Do(req)
	if err != nil {
		return fmt.Errorf("open the connect link: %w", err)
	}
	resp.Body.Close()
	page, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return fmt.Errorf("the connect link led to %q: %w", resp.Header.Get("Location"), err)
	}
	frag, _ := url.ParseQuery(page.Fragment)
	if frag.Get("connect") == "" {
		return fmt.Errorf("the connect link led to %q, not the web chat's connect page (HTTP %d)", page, resp.StatusCode)
	}
	var next struct{ URL string }
	if err := r.api(ctx, "POST", "/v1/connect", map[string]string{"state": frag.Get("connect")}, &next); err != nil {
		return err
	}
	browser.CheckRedirect = nil
	return openWith(ctx, browser, next.URL)
}

// open follows a login link as a browser whose person approves at once:
// through the authorization server to neobot's callback page.
func open(ctx context.Context, link string) error {
	return openWith(ctx, http.DefaultClient, link)
}

// openWith is open with browser's cookies.
func openWith(ctx context.Context, browser *http.Client, link string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return err
	}
	resp, err := browser.Do(req)
	if err != nil {
		return fmt.Errorf("open the login link: %w", err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the login link ended at HTTP %d: %s", resp.StatusCode, page)
	}
	return nil
}

// api makes a web API request as the driver's web user.
func (r *binaryRun) api(ctx context.Context, method, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, r.web+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// follow opens a conversation's event stream; it ends with ctx.
func (r *binaryRun) follow(ctx context.Context, id string) (<-chan web.Event, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.web+"/v1/conversations/"+id+"/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("event stream: HTTP %d", resp.StatusCode)
	}
	ch := make(chan web.Event, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var e web.Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				e.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.Data = json.RawMessage(line[6:])
			case line == "" && e.Type != "":
				select {
				case ch <- e:
				case <-ctx.Done():
					return
				}
				e = web.Event{}
			}
		}
	}()
	return ch, nil
}

// poll checks cond every 50 ms until it holds or ctx ends. This is a
// driver of a separate process, not a test: polling its health is the
// only way to know it is ready.
func poll(ctx context.Context, what string, cond func() bool) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// lockedWriter serializes writes from neobot's stdout and stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
