// Package slacktest is a fake Slack on loopback: the Web API methods neobot
// calls, the Socket Mode websocket, and signed HTTP-mode deliveries.
//
// A test starts one with [New], points the adapter at [Server.APIURL] (the
// Socket Mode URL comes from apps.connections.open, as with real Slack),
// then plays users: [Server.Mention], [Server.Message], [Server.DM],
// [Server.AssistantThreadStarted], [Server.Click]. Every delivery is
// wrapped in an envelope whose ack the test can wait for
// ([Server.WaitAck]); every Web API call is recorded ([Server.Calls],
// [Server.WaitCall]); every message the bot posts, edits or streams is kept
// ([Server.Messages], [Server.WaitMessage]). [Server.Script] makes a method
// answer with 429s or errors.
//
// All state lives in the Server: two servers never share anything, and every
// method is safe for concurrent use.
package slacktest

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/neobot/neobot/adapters/internal/fakeapi"
)

// Identities of the fake workspace and its bot.
const (
	TeamID    = "T0TEAM"
	BotUserID = "UNEOBOT"
	BotID     = "BNEOBOT"
	AppID     = "A0NEO"
	// VerificationToken is the deprecated token Slack puts in payloads.
	VerificationToken = "verification-token"
)

// Call is one recorded Web API call.
type Call struct {
	// Method is the Web API method ("chat.postMessage"), "files" for a file
	// download, or "response_url" for a post to an interaction's response URL.
	Method string
	// Params holds the form parameters, or the top-level fields of a JSON
	// body rendered as strings (objects and arrays as JSON).
	Params url.Values
	// Token is the bearer or form token the call carried.
	Token string
	At    time.Time
}

// Reply scripts one answer of a method; see [Server.Script].
type Reply struct {
	// Status is the HTTP status; 429 sends a Retry-After header.
	Status int
	// RetryAfter is a 429's Retry-After, sent in whole seconds, rounded up.
	RetryAfter time.Duration
	// Error answers {"ok":false,"error":Error} with status 200 when set.
	Error string
}

// team returns the workspace's team ID.
func (s *Server) team() string {
	if s.Team != "" {
		return s.Team
	}
	return TeamID
}

// Server is a fake Slack workspace served on 127.0.0.1.
type Server struct {
	srv *httptest.Server

	// PingInterval is how often the websocket sends a ping (default 5 s;
	// slack-go drops a connection that gets none for 30 s). Set it before
	// the adapter connects.
	PingInterval time.Duration
	// AckTimeout is how long an events_api envelope sent over Socket Mode
	// may go unacked before it is redelivered, as Slack does, under a new
	// envelope with retry_attempt one higher, at most three times
	// (default 3 s; negative never redelivers). Set it before delivering.
	AckTimeout time.Duration
	// Team is the workspace's team ID in every event, interaction and
	// auth.test answer (default TeamID): two fakes with their own Team
	// are two Slack workspaces. Set it before the adapter connects.
	Team    string
	retries map[*time.Timer]bool // redelivery timers, stopped by Close
	// assistantOff fails every assistant.threads.* call (DisableAssistant).
	assistantOff bool
	// people are the users SetPerson and SetAdmin describe, by user ID;
	// anyone else is a plain member of the server's Team.
	people map[string]Person
	// signins is Sign in with Slack (signin.go).
	signins fakeapi.SignIns

	mu       sync.Mutex
	rec      *fakeapi.Recorder[Call, Reply] // calls and scripts, under mu
	epoch    int64                          // the server's start, in Unix seconds: timestamps are recent
	seq      int
	messages []Message
	files    map[string]File
	uploads  map[string]upload // files.getUploadURLExternal: file ID -> the upload it awaits
	kinds    map[string]string // channel ID -> "channel", "group", "mpim" or "im" (SetChannelType)
	acks     map[string]Ack
	// Unrecorded keeps acks for a while only: oldAcks is the generation
	// before acks, dropped when a new one starts, every ackAge (zero: keep
	// every ack). See keepAckLocked.
	oldAcks  map[string]Ack
	ackTurn  time.Time
	ackAge   time.Duration
	queue    []envelope     // waiting for a websocket connection
	index    map[string]int // channel + "\x00" + ts -> position in messages
	watchers []func(Message)
	ackHooks []func(Ack)
	views    []View          // opened with views.open (views.go)
	homes    map[string]Home // user -> Home tab published with views.publish (home.go)
	// experience is the app's DM experience (SetExperience); viewing is
	// what each user has open (AppContextChanged), prompts and titles
	// what assistant.threads.* set, by channel + "\x00" + thread.
	experience  Experience
	viewing     map[string][]Entity
	prompts     map[string]Prompts
	titles      map[string]string
	names       map[string]string   // channel ID -> name (SetChannelName)
	usergroups  map[string][]string // user group ID -> member IDs (SetUserGroup)
	live        []*socketConn       // open Socket Mode connections, oldest first
	closedConns map[int]bool        // connections closed, by number
	conns       int                 // connections accepted, ever
	via         int                 // deliver through this connection (Via), 0: spread
	spread      *rand.Rand          // picks a connection for each delivery
	httpMode    *httpTarget
	oauth       oauthState               // "Add to Slack": codes and bot tokens issued (install.go)
	stalls      map[string]chan struct{} // Stall: method -> closed when its call arrives
	gone        chan struct{}            // closed by Close: stalled calls end
	closed      bool
	wg          sync.WaitGroup
}

// New starts a Server closed by tb.Cleanup.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := NewServer()
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a Server; the caller must Close it.
func NewServer() *Server { return newServer(false) }

// NewTLSServer starts a Server on HTTPS (and wss:// for Socket Mode), as
// Slack is; a client must trust CertPEM. The caller must Close it.
func NewTLSServer() *Server { return newServer(true) }

func newServer(tls bool) *Server {
	s := &Server{
		PingInterval: 5 * time.Second,
		AckTimeout:   3 * time.Second,
		retries:      map[*time.Timer]bool{},
		epoch:        time.Now().Unix(),
		files:        map[string]File{},
		uploads:      map[string]upload{},
		kinds:        map[string]string{},
		acks:         map[string]Ack{},
		closedConns:  map[int]bool{},
		index:        map[string]int{},
		homes:        map[string]Home{},
		viewing:      map[string][]Entity{},
		prompts:      map[string]Prompts{},
		titles:       map[string]string{},
		names:        map[string]string{},
		usergroups:   map[string][]string{},
		spread:       rand.New(rand.NewPCG(1, 2)),
		gone:         make(chan struct{}),
	}
	s.signins.Cookie, s.signins.TokenPrefix = signInCookie, "xoxp-"
	s.rec = fakeapi.New(&s.mu, func(c Call) string { return c.Method }, func(d time.Duration) Reply {
		return Reply{Status: http.StatusTooManyRequests, RetryAfter: d}
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.serveAPI)
	mux.HandleFunc("/files/{id}/{name}", s.serveFile)
	mux.HandleFunc("POST /upload/{id}", s.serveUpload)
	mux.HandleFunc("/response/{id}", s.serveResponseURL)
	mux.HandleFunc("/socket", s.serveSocket)
	mux.HandleFunc("GET /openid/connect/authorize", s.serveOIDCAuthorize)
	mux.HandleFunc("GET /oauth/v2/authorize", s.serveAuthorize)
	s.srv = httptest.NewUnstartedServer(mux)
	if tls {
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	return s
}

// DisableAssistant makes every assistant.threads.* method fail with
// access_denied from now on, as in a workspace without the AI assistant
// feature.
func (s *Server) DisableAssistant() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.assistantOff = true
}

// SetAdmin makes users.info report user as an admin of the server's
// Team. Every other user is a plain member, unless SetPerson says
// otherwise.
func (s *Server) SetAdmin(user string) { s.SetPerson(user, Person{Admin: true}) }

// Person is a user as users.info and Sign in with Slack describe them.
type Person struct {
	// Team is their workspace (default the server's Team); Enterprise
	// its Enterprise Grid org, "" outside Grid.
	Team, Enterprise string
	// Admin and Owner are users.info's is_admin and is_owner.
	Admin, Owner bool
}

// SetPerson describes user from now on (replacing what was said before):
// Sign in with Slack signs them in to p.Team, and users.info answers
// about them only with a token that works there (SLACK_BOT_TOKEN's, for
// the server's Team; one oauth.v2.access issued for p.Team, or for
// p.Enterprise org-wide) and user_not_found with any other, as Slack
// does for a user it does not show that token.
func (s *Server) SetPerson(user string, p Person) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.people == nil {
		s.people = map[string]Person{}
	}
	p.Team = cmpOr(p.Team, s.team())
	s.people[user] = p
}

// personLocked is how the fake describes user.
func (s *Server) personLocked(user string) Person {
	if p, ok := s.people[user]; ok {
		return p
	}
	return Person{Team: s.team()}
}

// seesLocked reports whether a bot token shows person: a token
// oauth.v2.access issued, in its installation's workspace (or org, for an
// org-wide install); any other token, in the server's Team.
func (s *Server) seesLocked(token string, p Person) bool {
	in := s.oauth.tokens[token]
	switch {
	case in == nil:
		return p.Team == s.team()
	case in.OrgWide:
		return p.Enterprise != "" && p.Enterprise == in.Enterprise
	}
	return p.Team == in.Team
}

// CertPEM is the TLS server's certificate in PEM, for a client's trust
// store (SSL_CERT_FILE); nil for a plain HTTP server.
func (s *Server) CertPEM() []byte {
	if s.srv.Certificate() == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// Close disconnects every client and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.gone)
	for t := range s.retries {
		t.Stop()
	}
	live := s.live
	s.live = nil
	s.mu.Unlock()
	for _, c := range live {
		c.close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.wg.Wait()
}

// URL returns the server's base URL, http://127.0.0.1:PORT.
func (s *Server) URL() string { return s.srv.URL }

// APIURL returns the Web API base URL with its trailing slash, the value
// for SLACK_API_URL and slack.OptionAPIURL.
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// Script queues replies for method: its next calls answer with them, in
// order, before it answers normally again. A scripted call is recorded and
// has no other effect.
func (s *Server) Script(method string, replies ...Reply) { s.rec.Script(method, replies...) }

// RateLimit makes the next n calls of method answer 429 with Retry-After
// retryAfter.
func (s *Server) RateLimit(method string, n int, retryAfter time.Duration) {
	s.rec.RateLimit(method, n, retryAfter)
}

// Stall makes the next call of method hang, unrecorded and without
// effect, until its client goes away: a process killed in the middle of
// the call. The returned channel is closed when the call arrives.
func (s *Server) Stall(method string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalls == nil {
		s.stalls = map[string]chan struct{}{}
	}
	arrived := make(chan struct{})
	s.stalls[method] = arrived
	return arrived
}

// Calls returns the recorded calls of method, or every call when method is "".
func (s *Server) Calls(method string) []Call { return s.rec.Calls(method) }

// WaitCall waits for a call of method that satisfies pred (nil matches any)
// and returns it.
func (s *Server) WaitCall(ctx context.Context, method string, pred func(Call) bool) (Call, error) {
	c, err := s.rec.WaitCall(ctx, method, pred)
	if err != nil {
		return Call{}, fmt.Errorf("slacktest: %w", err)
	}
	return c, nil
}

// wait blocks until cond, called with s.mu held, is true or ctx ends.
func (s *Server) wait(ctx context.Context, cond func() bool) error { return s.rec.Wait(ctx, cond) }

// notifyLocked wakes every waiter; s.mu must be held.
func (s *Server) notifyLocked() { s.rec.NotifyLocked() }

// nextTSLocked returns a fresh, increasing Slack timestamp: the server's
// start time plus a counter in the microseconds, so messages look recent.
func (s *Server) nextTSLocked() string {
	s.seq++
	return fmt.Sprintf("%d.%06d", s.epoch+int64(s.seq/1000000), s.seq%1000000)
}

func (s *Server) nextIDLocked(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%06d", prefix, s.seq)
}

// serveAPI answers one Web API call.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := r.PathValue("method")
	params, err := readParams(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Stalled only once its body is read: the server notices the client
	// going away (and ends r's context) only then.
	s.mu.Lock()
	arrived := s.stalls[method]
	delete(s.stalls, method)
	s.mu.Unlock()
	if arrived != nil {
		close(arrived)
		select {
		case <-r.Context().Done():
		case <-s.gone:
		}
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = params.Get("token")
	}
	s.mu.Lock()
	s.rec.RecordLocked(Call{Method: method, Params: params, Token: token, At: time.Now()})
	var scripted *Reply
	if r, ok := s.rec.NextLocked(method); ok {
		scripted = &r
	}
	var resp map[string]any
	if scripted == nil {
		resp = s.answerLocked(method, params, token)
	}
	var changed *Message
	if watchers := s.watchers; len(watchers) > 0 && resp["ok"] == true {
		switch method {
		case "chat.postMessage", "chat.update", "chat.stopStream":
			if i := s.findLocked(params.Get("channel"), fmt.Sprint(resp["ts"])); i >= 0 {
				m := s.messages[i]
				changed = &m
			}
		}
	}
	watchers := s.watchers
	s.mu.Unlock()
	if changed != nil {
		for _, fn := range watchers {
			fn(*changed)
		}
	}

	w.Header().Set("Content-Type", "application/json")
	switch {
	case scripted != nil && scripted.Status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(scripted.RetryAfter.Seconds()))))
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
		return
	case scripted != nil && scripted.Status != 0 && scripted.Status != http.StatusOK:
		w.WriteHeader(scripted.Status)
		return
	case scripted != nil:
		resp = map[string]any{"ok": false, "error": scripted.Error}
	}
	_ = json.NewEncoder(w).Encode(resp)
}

// readParams returns a form body's values, or a JSON body's top-level fields.
func readParams(r *http.Request) (url.Values, error) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if len(bytes.TrimSpace(body)) == 0 {
			return url.Values{}, nil
		}
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("slacktest: bad JSON body: %w", err)
		}
		v := url.Values{}
		for k, raw := range m {
			var str string
			if json.Unmarshal(raw, &str) == nil {
				v.Set(k, str)
			} else {
				v.Set(k, string(raw))
			}
		}
		return v, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	return r.Form, nil
}

func fail(code string) map[string]any { return map[string]any{"ok": false, "error": code} }

// answerLocked carries out method and returns its JSON answer; s.mu is held.
func (s *Server) answerLocked(method string, p url.Values, token string) map[string]any {
	ok := func(kv ...any) map[string]any {
		m := map[string]any{"ok": true}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	if s.assistantOff && strings.HasPrefix(method, "assistant.threads.") {
		return fail("access_denied")
	}
	if strings.HasPrefix(method, "openid.connect.") {
		return s.answerOIDCLocked(method, p, token)
	}
	if method == "oauth.v2.access" {
		return s.oauthAccessLocked(p, token)
	}
	if resp := s.tokenLocked(method, token); resp != nil {
		return resp
	}
	if refusal := checkCall(method, p, token); refusal != "" {
		return fail(refusal)
	}
	switch method {
	case "files.getUploadURLExternal", "files.completeUploadExternal":
		return s.answerUploadLocked(method, p)
	case "auth.test":
		if !strings.HasPrefix(token, "xoxb-") {
			return fail("invalid_auth")
		}
		return ok("url", "https://fake.slack.test/", "team", "Fake", "user", "neo",
			"team_id", s.team(), "user_id", BotUserID, "bot_id", BotID)
	case "apps.connections.open":
		if !strings.HasPrefix(token, "xapp-") {
			return fail("not_allowed_token_type")
		}
		return ok("url", "ws"+strings.TrimPrefix(s.srv.URL, "http")+"/socket")
	case "views.open":
		return s.openViewLocked(p)
	case "chat.postMessage":
		m := Message{Channel: p.Get("channel"), ThreadTS: p.Get("thread_ts"), User: BotUserID, BotID: BotID,
			Text: p.Get("text"), Blocks: rawJSON(p.Get("blocks")), Markdown: p.Get("markdown_text")}
		if m.Channel == "" {
			return fail("channel_not_found")
		}
		m.TS = s.nextTSLocked()
		s.addLocked(m)
		return ok("channel", m.Channel, "ts", m.TS, "message", map[string]any{"text": m.Text, "ts": m.TS})
	case "chat.update":
		i := s.findLocked(p.Get("channel"), p.Get("ts"))
		if i < 0 {
			return fail("message_not_found")
		}
		m := &s.messages[i]
		// As Slack does: a message keeps its blocks unless the update
		// sends blocks (an empty list removes them).
		m.Text, m.Edits = p.Get("text"), m.Edits+1
		if p.Has("blocks") {
			m.Blocks = rawJSON(p.Get("blocks"))
		}
		if p.Has("markdown_text") {
			m.Markdown = p.Get("markdown_text")
		}
		return ok("channel", m.Channel, "ts", m.TS, "text", m.Text)
	case "chat.delete":
		i := s.findLocked(p.Get("channel"), p.Get("ts"))
		if i < 0 {
			return fail("message_not_found")
		}
		s.messages = slices.Delete(s.messages, i, i+1)
		s.reindexLocked()
		return ok("channel", p.Get("channel"), "ts", p.Get("ts"))
	case "chat.postEphemeral":
		m := Message{Channel: p.Get("channel"), ThreadTS: p.Get("thread_ts"), User: BotUserID, BotID: BotID,
			Text: p.Get("text"), Blocks: rawJSON(p.Get("blocks")), Ephemeral: true, Recipient: p.Get("user")}
		m.TS = s.nextTSLocked()
		s.addLocked(m)
		return ok("message_ts", m.TS)
	case "conversations.open":
		// As Slack does for one user: the bot's DM with them, "D" and
		// their ID here.
		users := p.Get("users")
		if users == "" || strings.Contains(users, ",") {
			return fail("user_not_found")
		}
		return ok("channel", map[string]any{"id": "D" + users})
	case "usergroups.users.list":
		members, found := s.usergroups[p.Get("usergroup")]
		if !found {
			return fail("no_such_subteam")
		}
		return ok("users", members)
	case "conversations.info":
		id := p.Get("channel")
		if id == "" {
			return fail("channel_not_found")
		}
		kind := s.kindLocked(id)
		// As Slack describes a conversation: a private channel made before
		// March 2021 has a G ID and is_group; a newer one is_channel, and
		// both are is_private, as a group DM (is_mpim) is.
		legacy := strings.HasPrefix(id, "G")
		return ok("channel", map[string]any{
			"id": id, "is_channel": kind == "channel" || kind == "group" && !legacy,
			"is_group": kind == "group" && legacy, "is_mpim": kind == "mpim", "is_im": kind == "im",
			"is_private": kind == "group" || kind == "mpim", "created": s.epoch, "name": s.names[id],
		})
	case "conversations.replies":
		all := s.repliesLocked(p.Get("channel"), p.Get("ts"), p.Get("oldest"), p.Get("latest"), p.Get("inclusive") == "true")
		if len(all) == 0 {
			return fail("thread_not_found")
		}
		// Pages of limit (default and most 1,000) from the cursor, oldest
		// first, as Slack pages replies.
		limit, _ := strconv.Atoi(p.Get("limit"))
		if limit <= 0 || limit > 1000 {
			limit = 1000
		}
		from := 0
		if c := p.Get("cursor"); c != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(c, "page:"))
			if err != nil || !strings.HasPrefix(c, "page:") || n < 0 || n > len(all) {
				return fail("invalid_cursor")
			}
			from = n
		}
		to := min(from+limit, len(all))
		resp := ok("messages", all[from:to], "has_more", to < len(all))
		if to < len(all) {
			resp["response_metadata"] = map[string]any{"next_cursor": "page:" + strconv.Itoa(to)}
		}
		return resp
	case "assistant.threads.setStatus", "assistant.threads.setSuggestedPrompts", "assistant.threads.setTitle":
		return s.answerAssistantLocked(method, p)
	case "views.publish":
		return s.publishViewLocked(p)
	case "users.info":
		u := p.Get("user")
		who := s.personLocked(u)
		if u == "" || !s.seesLocked(token, who) {
			return fail("user_not_found")
		}
		return ok("user", map[string]any{"id": u, "team_id": who.Team, "name": strings.ToLower(u), "is_admin": who.Admin, "is_owner": who.Owner})
	case "chat.startStream":
		// As Slack does: a stream in a channel (not a DM) names whom it is
		// for, and markdown_text is at most 12,000 characters.
		if !strings.HasPrefix(p.Get("channel"), "D") && (p.Get("recipient_team_id") == "" || p.Get("recipient_user_id") == "") {
			return fail("missing_recipient_team_id_or_user_id")
		}
		if utf8.RuneCountInString(p.Get("markdown_text")) > 12000 {
			return fail("msg_too_long")
		}
		chunks, bad := parseChunks(method, p)
		if bad != "" {
			return fail(bad)
		}
		m := Message{Channel: p.Get("channel"), ThreadTS: p.Get("thread_ts"), User: BotUserID, BotID: BotID,
			Markdown: p.Get("markdown_text") + chunkMarkdown(chunks), Streaming: true, Chunks: chunks}
		m.TS = s.nextTSLocked()
		s.addLocked(m)
		return ok("channel", m.Channel, "ts", m.TS)
	case "chat.appendStream", "chat.stopStream":
		if utf8.RuneCountInString(p.Get("markdown_text")) > 12000 {
			return fail("msg_too_long")
		}
		i := s.findLocked(p.Get("channel"), p.Get("ts"))
		if i < 0 {
			return fail("message_not_found")
		}
		m := &s.messages[i]
		if !m.Streaming {
			return fail("message_not_in_streaming_state")
		}
		chunks, bad := parseChunks(method, p)
		if bad != "" {
			return fail(bad)
		}
		if method == "chat.stopStream" && p.Has("blocks") {
			if bad := checkStopBlocks(p.Get("blocks")); bad != "" {
				return fail(bad)
			}
			m.Blocks = rawJSON(p.Get("blocks"))
		}
		m.Chunks = append(m.Chunks, chunks...)
		m.Markdown += p.Get("markdown_text") + chunkMarkdown(chunks)
		m.Streaming = method == "chat.appendStream"
		return ok("channel", m.Channel, "ts", m.TS)
	}
	return fail("unknown_method")
}

// SetChannelType makes channel a "channel" (public), "group" (private
// channel), "mpim" (group DM) or "im" (DM), as conversations.info and the
// message events the fake delivers there say. A message delivered with
// a channel type sets its channel's too.
func (s *Server) SetChannelType(channel, typ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kinds[channel] = typ
}

// SetUserGroup makes the user group id have members, as
// usergroups.users.list tells them.
func (s *Server) SetUserGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usergroups[id] = members
}

// SetChannelName names channel, as conversations.info tells it.
func (s *Server) SetChannelName(channel, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[channel] = name
}

// kindLocked returns channel's type: the one set, else what its ID says
// (D a DM, G a private channel made before 2021, anything else a public
// channel).
func (s *Server) kindLocked(channel string) string {
	if k := s.kinds[channel]; k != "" {
		return k
	}
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case strings.HasPrefix(channel, "G"):
		return "group"
	}
	return "channel"
}

func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// findLocked returns the index of the (not ephemeral) message at channel
// and ts, or -1: a map lookup, so a long run does not slow the fake down.
func (s *Server) findLocked(channel, ts string) int {
	if i, ok := s.index[channel+"\x00"+ts]; ok {
		return i
	}
	return -1
}

// addLocked stores a message and indexes it.
func (s *Server) addLocked(m Message) {
	s.messages = append(s.messages, m)
	if !m.Ephemeral {
		s.index[m.Channel+"\x00"+m.TS] = len(s.messages) - 1
	}
}

// reindexLocked rebuilds the index after a deletion moved messages.
func (s *Server) reindexLocked() {
	clear(s.index)
	for i, m := range s.messages {
		if !m.Ephemeral {
			s.index[m.Channel+"\x00"+m.TS] = i
		}
	}
}

// Watch calls fn with every message the bot posts, edits or finishes
// streaming, as it lands (in the API call's goroutine, outside the
// server's lock; fn must not block). For harnesses that follow many
// threads at once without scanning every message.
func (s *Server) Watch(fn func(Message)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = append(s.watchers, fn)
}

// repliesLocked returns the thread's messages as conversations.replies does:
// the parent always, the replies from oldest (a ts) on when it is set.
// repliesLocked returns a thread's messages, oldest first, between
// oldest and latest (inclusive when asked); the parent is always first.
func (s *Server) repliesLocked(channel, ts, oldest, latest string, inclusive bool) []map[string]any {
	var out []map[string]any
	for _, m := range s.messages {
		if m.Channel != channel || m.Ephemeral || (m.TS != ts && m.ThreadTS != ts) {
			continue
		}
		if m.TS != ts && oldest != "" && (tsLess(m.TS, oldest) || m.TS == oldest && !inclusive) {
			continue
		}
		if m.TS != ts && latest != "" && (tsLess(latest, m.TS) || m.TS == latest && !inclusive) {
			continue
		}
		text := m.Text
		if text == "" {
			text = m.Markdown // a streamed or markdown message's text is its markdown
		}
		r := map[string]any{"type": "message", "user": m.User, "text": text, "ts": m.TS}
		if len(m.Blocks) > 0 {
			r["blocks"] = m.Blocks
		}
		if m.ThreadTS != "" {
			r["thread_ts"] = m.ThreadTS
		}
		if m.BotID != "" {
			r["bot_id"] = m.BotID
		}
		out = append(out, r)
	}
	return out
}

// tsLess orders Slack timestamps ("seconds.micros").
func tsLess(a, b string) bool {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	if as != bs {
		return as < bs
	}
	return af < bf
}

// serveFile serves a file added with AddFile to a holder of a bot token.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	s.rec.RecordLocked(Call{Method: "files", Params: url.Values{"id": {r.PathValue("id")}}, Token: token, At: time.Now()})
	f, ok := s.files[r.PathValue("id")]
	s.mu.Unlock()
	switch {
	case !strings.HasPrefix(token, "xoxb-"):
		http.Error(w, "not authorized", http.StatusForbidden)
	case !ok:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", f.MIMEType)
		_, _ = w.Write(f.Content)
	}
}

// serveResponseURL records a post to an interaction's response_url.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.RecordLocked(Call{Method: "response_url", At: time.Now(), Params: url.Values{
		"id": {r.PathValue("id")}, "text": {body.Text}, "response_type": {body.ResponseType},
	}})
	_, _ = io.WriteString(w, `{"ok":true}`)
}

// checkCall refuses a call as Slack does before doing anything: the wrong
// kind of token for the method, a message with no content or malformed
// blocks, a missing required argument. "" lets it through.
func checkCall(method string, p url.Values, token string) string {
	switch {
	case token == "":
		return "not_authed"
	case method == "apps.connections.open":
		if !strings.HasPrefix(token, "xapp-") {
			return "not_allowed_token_type"
		}
		return ""
	case !strings.HasPrefix(token, "xoxb-"):
		return "invalid_auth"
	}
	switch method {
	case "chat.postMessage", "chat.postEphemeral", "chat.update":
		if p.Get("text") == "" && p.Get("blocks") == "" && p.Get("markdown_text") == "" && p.Get("attachments") == "" {
			return "no_text"
		}
		if b := p.Get("blocks"); b != "" && !json.Valid([]byte(b)) {
			return "invalid_blocks"
		}
		if bad := checkContextActions(p.Get("blocks")); bad != "" {
			return bad
		}
		if method == "chat.postEphemeral" && p.Get("user") == "" {
			return "user_not_found"
		}
	case "assistant.threads.setStatus", "assistant.threads.setTitle", "assistant.threads.setSuggestedPrompts":
		// thread_ts is optional for prompts only (they then go to the
		// channel, as the agent view needs).
		if p.Get("channel_id") == "" || p.Get("thread_ts") == "" && method != "assistant.threads.setSuggestedPrompts" {
			return "invalid_arguments"
		}
		if bad := checkAssistant(method, p); bad != "" {
			return bad
		}
	case "chat.startStream":
		if p.Get("thread_ts") == "" {
			return "invalid_arguments"
		}
	}
	return ""
}
