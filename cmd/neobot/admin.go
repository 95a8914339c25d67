package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/memory"
	acct "github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store"
)

// admin is what the operator commands (memory, usage, threads) read and
// change: the store itself when no bot holds it, or else the running bot
// through its admin API. Both answer the same.
type admin interface {
	ListMemory(ctx context.Context, f memory.Filter) ([]memory.Record, error)
	SearchMemory(ctx context.Context, f memory.Filter, query string, limit int) ([]memory.Record, error)
	// ForgetMemory deletes the records with ids in f's scope, or every
	// record of the scope when ids is empty.
	ForgetMemory(ctx context.Context, f memory.Filter, ids []string) ([]memory.Record, error)
	Usage(ctx context.Context, since string) ([]acct.Row, error)
	Threads(ctx context.Context) ([]store.ThreadInfo, error)
	Transcript(ctx context.Context, key string) (transcript, error)
	// Spends returns the spend ledger's calls created since.
	Spends(ctx context.Context, since time.Time) ([]core.Spend, error)
	// SpendChain returns the spend ledger's chain entries, oldest first.
	SpendChain(ctx context.Context) ([]core.LedgerEntry, error)
	// VerifySpends walks the spend ledger's chain (spendscmd.go).
	VerifySpends(ctx context.Context) (chainReport, error)
	// Approvals returns the approvals asked since, with their decisions
	// (approvalscmd.go).
	Approvals(ctx context.Context, since time.Time) ([]approvalRow, error)
	// Ratings returns the ratings of answers made since.
	Ratings(ctx context.Context, since time.Time) ([]core.Rating, error)
}

// transcript is one conversation as an operator exports it.
type transcript struct {
	Thread   string          `json:"thread"`
	Summary  string          `json:"summary,omitempty"`
	Messages []exportMessage `json:"messages"`
}

type exportMessage struct {
	Role      string   `json:"role"`
	Name      string   `json:"name,omitempty"`
	Content   string   `json:"content,omitempty"`
	ToolCalls []string `json:"tool_calls,omitempty"`
}

// local is admin over the store, for a command that opened it or for the
// running bot's API (with the bot's own memory, so a forget reaches its
// index).
type local struct {
	db     database
	cortex *memory.Cortex
}

func (l local) ListMemory(ctx context.Context, f memory.Filter) ([]memory.Record, error) {
	return l.cortex.List(ctx, f)
}

func (l local) SearchMemory(ctx context.Context, f memory.Filter, query string, limit int) ([]memory.Record, error) {
	hits, err := l.cortex.Search(ctx, f, query, limit)
	recs := make([]memory.Record, len(hits))
	for i, h := range hits {
		recs[i] = h.Record
	}
	return recs, err
}

func (l local) ForgetMemory(ctx context.Context, f memory.Filter, ids []string) ([]memory.Record, error) {
	return l.cortex.Forget(ctx, f, ids...)
}

func (l local) Usage(ctx context.Context, since string) ([]acct.Row, error) {
	return l.db.Usage(ctx, since)
}

func (l local) Spends(ctx context.Context, since time.Time) ([]core.Spend, error) {
	return l.db.SpendsSince(ctx, since)
}

func (l local) Ratings(ctx context.Context, since time.Time) ([]core.Rating, error) {
	return l.db.Ratings(ctx, since)
}

func (l local) Threads(ctx context.Context) ([]store.ThreadInfo, error) { return l.db.Threads(ctx) }

func (l local) Transcript(ctx context.Context, key string) (transcript, error) {
	t, err := core.ParseThread(key)
	if err != nil {
		return transcript{}, fmt.Errorf("thread %q: %w (copy a key from neobot threads list)", key, err)
	}
	sum, live, err := l.db.LoadTranscript(ctx, t)
	if err != nil {
		return transcript{}, err
	}
	old, err := l.db.Archived(ctx, t)
	if err != nil {
		return transcript{}, err
	}
	if len(live)+len(old) == 0 {
		return transcript{}, fmt.Errorf("thread %s: %w", key, core.ErrNotFound)
	}
	msgs, err := agent.Messages(append(old, live...))
	if err != nil {
		return transcript{}, err
	}
	out := transcript{Thread: t.Key(), Summary: sum.Text, Messages: make([]exportMessage, 0, len(msgs))}
	for _, m := range msgs {
		out.Messages = append(out.Messages, exportOf(m))
	}
	return out, nil
}

func exportOf(m llm.Message) exportMessage {
	e := exportMessage{Role: m.Role, Name: m.Name, Content: m.Content}
	for _, tc := range m.ToolCalls {
		e.ToolCalls = append(e.ToolCalls, tc.Function.Name+" "+tc.Function.Arguments)
	}
	return e
}

// openAdmin opens the store for an operator command; when a running bot
// holds it, it goes through that bot's admin API instead.
func (m *Main) openAdmin(ctx context.Context, cfg *Config) (admin, error) {
	db, err := openDatabase(ctx, cfg, zerolog.Nop(), dbOptions{lockTimeout: 300 * time.Millisecond})
	if err == nil {
		m.onClose(db.Close)
		cortex, err := memory.New(ctx, memory.Options{Store: db})
		if err != nil {
			return nil, fmt.Errorf("open memory: %w", err)
		}
		return local{db: db, cortex: cortex}, nil
	}
	if !errors.Is(err, store.ErrLocked) {
		return nil, err
	}
	return remoteAdmin(cfg, 30*time.Second)
}

// remoteAdmin is the running bot's admin API, for a command that found
// the database held; timeout bounds each call (0: none, for a stream).
func remoteAdmin(cfg *Config, timeout time.Duration) (remote, error) {
	if cfg.AdminToken == "" {
		return remote{}, fmt.Errorf("NEO_DB_PATH=%s is held by a running neobot; set NEO_ADMIN_TOKEN, the same for the bot and this command, "+
			"to go through the bot's admin API (or stop the bot)", cfg.DBPath)
	}
	base := cfg.AdminURL
	if base == "" {
		_, port, err := net.SplitHostPort(cfg.HealthAddr)
		if err != nil || port == "" {
			return remote{}, fmt.Errorf("NEO_DB_PATH=%s is held by a running neobot, and NEO_ADMIN_URL is unset with no port in NEO_HEALTH_ADDR (%q) to reach it on", cfg.DBPath, cfg.HealthAddr)
		}
		base = "http://127.0.0.1:" + port
	}
	return remote{base: strings.TrimRight(base, "/") + "/admin/v1", token: cfg.AdminToken.Reveal(), http: &http.Client{Timeout: timeout}}, nil
}

// remote is admin through a running bot's API.
type remote struct {
	base, token string
	http        *http.Client
}

func filterQuery(f memory.Filter) url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"platform": f.Platform, "workspace": f.Workspace, "user": f.User, "channel": f.Channel} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

func (r remote) ListMemory(ctx context.Context, f memory.Filter) ([]memory.Record, error) {
	var out []memory.Record
	return out, r.call(ctx, http.MethodGet, "/memory", filterQuery(f), nil, &out)
}

func (r remote) SearchMemory(ctx context.Context, f memory.Filter, query string, limit int) ([]memory.Record, error) {
	q := filterQuery(f)
	q.Set("q", query)
	q.Set("limit", strconv.Itoa(limit))
	var out []memory.Record
	return out, r.call(ctx, http.MethodGet, "/memory/search", q, nil, &out)
}

func (r remote) ForgetMemory(ctx context.Context, f memory.Filter, ids []string) ([]memory.Record, error) {
	var out []memory.Record
	return out, r.call(ctx, http.MethodPost, "/memory/forget", filterQuery(f), map[string]any{"ids": ids}, &out)
}

func (r remote) Usage(ctx context.Context, since string) ([]acct.Row, error) {
	var out []acct.Row
	return out, r.call(ctx, http.MethodGet, "/usage", url.Values{"since": {since}}, nil, &out)
}

func (r remote) Spends(ctx context.Context, since time.Time) ([]core.Spend, error) {
	var out []core.Spend
	return out, r.call(ctx, http.MethodGet, "/spends", url.Values{"since": {since.UTC().Format(time.RFC3339)}}, nil, &out)
}

func (r remote) Ratings(ctx context.Context, since time.Time) ([]core.Rating, error) {
	var out []core.Rating
	return out, r.call(ctx, http.MethodGet, "/feedback", url.Values{"since": {since.UTC().Format(time.RFC3339)}}, nil, &out)
}

func (r remote) Threads(ctx context.Context) ([]store.ThreadInfo, error) {
	var out []store.ThreadInfo
	return out, r.call(ctx, http.MethodGet, "/threads", nil, nil, &out)
}

func (r remote) Transcript(ctx context.Context, key string) (transcript, error) {
	var out transcript
	return out, r.call(ctx, http.MethodGet, "/thread", url.Values{"key": {key}}, nil, &out)
}

// call makes one admin API request and decodes its JSON answer into out.
func (r remote) call(ctx context.Context, method, path string, q url.Values, body, out any) error {
	u := r.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.http.Do(req)
	if err != nil {
		return fmt.Errorf("reach the running bot's admin API at %s (is NEO_ADMIN_URL right?): %w", r.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("admin API %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("admin API %s: %s: %s", path, resp.Status, strings.TrimSpace(string(data)))
	}
	return json.Unmarshal(data, out)
}

// backupper is a store that can copy itself while in use (the bbolt
// file; PostgreSQL has pg_dump).
type backupper interface {
	Backup(ctx context.Context, start func(size int64) (io.Writer, error)) (int64, error)
}

// adminAPI serves admin over HTTP at /admin/v1/ for holders of the token.
type adminAPI struct {
	src admin
	// backup copies the database as it is now (GET /admin/v1/backup); nil
	// when the store cannot (PostgreSQL).
	backup       func(ctx context.Context, start func(size int64) (io.Writer, error)) (int64, error)
	token        string
	allowRemote  bool
	maxBodyBytes int64
}

// register adds the API's routes to mux.
func (a adminAPI) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin/v1/memory", a.serve(func(r *http.Request) (any, error) {
		return a.src.ListMemory(r.Context(), filterOf(r))
	}))
	mux.HandleFunc("GET /admin/v1/memory/search", a.serve(func(r *http.Request) (any, error) {
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		return a.src.SearchMemory(r.Context(), filterOf(r), r.URL.Query().Get("q"), max(limit, 1))
	}))
	mux.HandleFunc("POST /admin/v1/memory/forget", a.serve(func(r *http.Request) (any, error) {
		var body struct {
			IDs []string `json:"ids"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, a.maxBodyBytes)).Decode(&body); err != nil {
			return nil, badRequest{fmt.Errorf("body: want {\"ids\": [...]}: %w", err)}
		}
		f := filterOf(r)
		if len(body.IDs) == 0 && f.Workspace == "" {
			return nil, badRequest{errors.New("forgetting a whole scope needs workspace=, so one workspace's memory is never wiped by accident")}
		}
		return a.src.ForgetMemory(r.Context(), f, body.IDs)
	}))
	mux.HandleFunc("GET /admin/v1/usage", a.serve(func(r *http.Request) (any, error) {
		return a.src.Usage(r.Context(), r.URL.Query().Get("since"))
	}))
	mux.HandleFunc("GET /admin/v1/feedback", a.serve(func(r *http.Request) (any, error) {
		since, err := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
		if err != nil {
			return nil, badRequest{errors.New("since: want an RFC 3339 time, such as 2026-11-01T00:00:00Z")}
		}
		return a.src.Ratings(r.Context(), since)
	}))
	mux.HandleFunc("GET /admin/v1/spends", a.serve(func(r *http.Request) (any, error) {
		since, err := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
		if err != nil {
			return nil, badRequest{errors.New("since: want an RFC 3339 time, such as 2026-11-01T00:00:00Z")}
		}
		return a.src.Spends(r.Context(), since)
	}))
	a.registerSpends(mux)
	a.registerApprovals(mux)
	mux.HandleFunc("GET /admin/v1/threads", a.serve(func(r *http.Request) (any, error) {
		return a.src.Threads(r.Context())
	}))
	mux.HandleFunc("GET /admin/v1/thread", a.serve(func(r *http.Request) (any, error) {
		return a.src.Transcript(r.Context(), r.URL.Query().Get("key"))
	}))
	mux.HandleFunc("GET /admin/v1/backup", a.serveBackup)
}

// serveBackup streams a consistent copy of the bbolt file, taken in one
// read transaction while the bot goes on writing; Content-Length is the
// copy's size, so a cut stream is told from a whole one.
func (a adminAPI) serveBackup(w http.ResponseWriter, r *http.Request) {
	if !a.allowed(w, r) {
		return
	}
	if a.backup == nil {
		http.Error(w, "this bot keeps its data in PostgreSQL: back it up with pg_dump or the provider's backups", http.StatusNotImplemented)
		return
	}
	started := false
	_, err := a.backup(r.Context(), func(size int64) (io.Writer, error) {
		started = true
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		return w, nil
	})
	if err != nil && !started {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	} // a failure mid-stream shows as a short body
}

// allowed checks the caller's address and token, answering a refusal
// itself.
func (a adminAPI) allowed(w http.ResponseWriter, r *http.Request) bool {
	if !a.allowRemote && !loopbackPeer(r.RemoteAddr) {
		http.Error(w, "the admin API answers only on loopback (set NEO_ADMIN_REMOTE=true to allow other machines)", http.StatusForbidden)
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(a.token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="neobot admin"`)
		http.Error(w, "send Authorization: Bearer $NEO_ADMIN_TOKEN", http.StatusUnauthorized)
		return false
	}
	return true
}

// Backup streams the running bot's backup into w and checks it arrived
// whole.
func (r remote) Backup(ctx context.Context, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/backup", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("reach the running bot's admin API at %s (is NEO_ADMIN_URL right?): %w", r.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return 0, fmt.Errorf("admin API /backup: %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("admin API /backup: the copy broke off after %d bytes: %w", n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, fmt.Errorf("admin API /backup: got %d of %d bytes", n, resp.ContentLength)
	}
	return n, nil
}

type badRequest struct{ error }

func filterOf(r *http.Request) memory.Filter {
	q := r.URL.Query()
	return memory.Filter{Platform: q.Get("platform"), Workspace: q.Get("workspace"), User: q.Get("user"), Channel: q.Get("channel")}
}

// serve checks the caller, runs h and writes its answer as JSON.
func (a adminAPI) serve(h func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !a.allowed(w, r) {
			return
		}
		v, err := h(r)
		var bad badRequest
		switch {
		case errors.As(err, &bad):
			http.Error(w, bad.Error(), http.StatusBadRequest)
			return
		case errors.Is(err, core.ErrNotFound):
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

func loopbackPeer(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
