// Package discordtest is a fake Discord on loopback: the REST routes neobot
// calls and the gateway websocket that delivers events.
//
// A test starts one with [New] and points the adapter at [Server.URL]
// (REST goes to URL()+"/api/v9/…"; GET /gateway answers with this server's
// websocket, as Discord does), then plays users: [Server.Mention],
// [Server.Message], [Server.DM], [Server.Click]. Events are dispatched over
// the gateway once a client has identified, queued until then. Every REST
// call is recorded ([Server.Calls], [Server.WaitCall]); every message the
// bot posts or edits, and every message a user sends through a helper, is
// kept ([Server.Messages], [Server.WaitMessage]); interaction callbacks
// are kept with their timing ([Server.Responses]). [Server.Script] makes a
// route answer with 429s or errors.
//
// All state lives in the Server: two servers never share anything, and
// every method is safe for concurrent use.
package discordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/neobot/neobot/adapters/internal/fakeapi"
)

// Identities of the fake guild and its bot.
const (
	BotUserID = "900000000000000001"
	BotName   = "neo"
	// AppID is the bot's application ID (the same as its user ID, as for
	// most bots).
	AppID = BotUserID
	// GuildID is the fake guild.
	GuildID = "800000000000000001"
	// ChannelID is the guild's text channel #general.
	ChannelID = "810000000000000001"
)

// Channel types used by the fake (Discord's values).
const (
	ChannelText          = 0
	ChannelDM            = 1
	ChannelThread        = 11
	ChannelPrivateThread = 12
)

// PermissionViewChannel is Discord's VIEW_CHANNEL permission bit.
const PermissionViewChannel = 1 << 10

// Overwrite is a channel's permission overwrite for a role (Type 0) or a
// member (Type 1). The guild's @everyone role has the guild's ID.
type Overwrite struct {
	ID    string
	Type  int
	Allow int64
	Deny  int64
}

// InteractionDeadline is how long after a click Discord accepts its first
// response.
const InteractionDeadline = 3 * time.Second

// Call is one recorded REST call.
type Call struct {
	// Route is the matched route without the /api/v9 prefix, such as
	// "POST /channels/{channel}/messages".
	Route string
	// Path is the request's path, /api/v9 included.
	Path string
	// Body is the request's JSON body, if any.
	Body json.RawMessage
	// Token is the Authorization header ("Bot <token>").
	Token string
	// Status is the HTTP status the fake answered.
	Status int
	At     time.Time
}

// Reply scripts one answer of a route; see [Server.Script].
type Reply struct {
	// Status is the HTTP status; 429 answers Discord's rate-limit body.
	Status int
	// RetryAfter is a 429's retry_after (default 10 ms).
	RetryAfter time.Duration
	// Body is sent as is for other statuses (default a JSON error).
	Body string
}

// Channel is a channel of the fake: a guild text channel, a thread, or a DM.
type Channel struct {
	ID       string
	GuildID  string
	ParentID string
	Type     int
	Name     string
	// Overwrites are a guild channel's permission overwrites.
	Overwrites []Overwrite
}

// Server is a fake Discord served on 127.0.0.1.
type Server struct {
	srv *httptest.Server

	mu           sync.Mutex
	rec          *fakeapi.Recorder[Call, Reply] // calls and scripts, under mu
	seq          uint64
	token        string // required bot token, "" accepts any
	heartbeat    time.Duration
	messages     []Message
	channels     map[string]Channel
	files        map[string]File
	roles        map[string][]string
	interactions map[string]*interaction // by token
	responses    []Response
	// responseHooks see each first response (OnResponse).
	responseHooks []func(Response)
	commands      []Command // global application commands (commands.go)
	signins       fakeapi.SignIns
	guilds        map[string]Guild       // the guilds the bot is in (guilds.go)
	userGuilds    map[string][]UserGuild // each person's /users/@me/guilds
	gw            gateway
	closed        bool
	wg            sync.WaitGroup
}

// New starts a Server closed by tb.Cleanup.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := NewServer()
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a Server; the caller must Close it.
func NewServer() *Server {
	s := &Server{
		heartbeat:    41250 * time.Millisecond,
		channels:     map[string]Channel{},
		files:        map[string]File{},
		roles:        map[string][]string{},
		interactions: map[string]*interaction{},
	}
	s.rec = fakeapi.New(&s.mu, func(c Call) string { return c.Route }, func(d time.Duration) Reply {
		return Reply{Status: http.StatusTooManyRequests, RetryAfter: d}
	})
	s.channels[ChannelID] = Channel{ID: ChannelID, GuildID: GuildID, Type: ChannelText, Name: "general"}
	mux := http.NewServeMux()
	for route, h := range map[string]func(*http.Request, []byte) (int, any){
		"GET /gateway":                                        s.getGateway,
		"GET /gateway/bot":                                    s.getGateway,
		"GET /users/@me":                                      s.getMe,
		"POST /users/@me/channels":                            s.createDM,
		"GET /channels/{channel}":                             s.getChannel,
		"GET /channels/{channel}/messages":                    s.listMessages,
		"POST /channels/{channel}/messages":                   s.createMessage,
		"PATCH /channels/{channel}/messages/{message}":        s.editMessage,
		"DELETE /channels/{channel}/messages/{message}":       s.deleteMessage,
		"POST /channels/{channel}/messages/{message}/threads": s.createThread,
		"POST /channels/{channel}/typing":                     s.typing,
		"POST /interactions/{id}/{token}/callback":            s.callback,
		"POST /webhooks/{app}/{token}":                        s.followup,
		"PATCH /webhooks/{app}/{token}/messages/{message}":    s.editFollowup,
		"PUT /applications/{app}/commands":                    s.overwriteCommands,
	} {
		method, path, _ := strings.Cut(route, " ")
		mux.HandleFunc(method+" /api/v9"+path, s.api(route, h))
	}
	for route, h := range map[string]func(*http.Request, []byte) (int, any){
		"GET /guilds/{guild}":                s.getGuild,
		"GET /guilds/{guild}/members/{user}": s.getMember,
	} {
		method, path, _ := strings.Cut(route, " ")
		mux.HandleFunc(method+" /api/v10"+path, s.api(route, h))
	}
	mux.HandleFunc("GET /attachments/{id}/{name}", s.serveFile)
	s.signins.Cookie, s.signins.TokenPrefix = signInCookie, "user-token-"
	mux.HandleFunc("GET /oauth2/authorize", s.serveOAuthAuthorize)
	mux.HandleFunc("POST /api/oauth2/token", s.serveOAuthToken)
	mux.HandleFunc("GET /api/users/@me", s.serveOAuthMe)
	mux.HandleFunc("GET /api/users/@me/guilds", s.serveUserGuilds)
	mux.HandleFunc("/gateway/", s.serveGateway)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close disconnects every client and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conn := s.gw.conn
	s.gw.conn = nil
	s.mu.Unlock()
	if conn != nil {
		conn.close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.wg.Wait()
}

// URL returns the server's base URL, http://127.0.0.1:PORT: the value for
// DISCORD_API_URL.
func (s *Server) URL() string { return s.srv.URL }

// RequireToken makes REST calls and the gateway's identify accept only
// "Bot "+token; by default any token is accepted.
func (s *Server) RequireToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// SetHeartbeatInterval sets the interval the gateway's hello asks for
// (default 41.25 s). Set it before the client connects.
func (s *Server) SetHeartbeatInterval(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heartbeat = d
}

// SetRoles gives user the role IDs sent with their messages and clicks
// in the guild.
func (s *Server) SetRoles(user string, roles ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roles[user] = roles
}

// Script queues replies for route (as in [Call.Route]): its next calls
// answer with them, in order, before it answers normally again. A
// scripted call is recorded and has no other effect.
func (s *Server) Script(route string, replies ...Reply) { s.rec.Script(route, replies...) }

// RateLimit makes the next n calls of route answer 429 with retryAfter.
func (s *Server) RateLimit(route string, n int, retryAfter time.Duration) {
	s.rec.RateLimit(route, n, retryAfter)
}

// Calls returns the recorded calls of route, or every call when route is "".
func (s *Server) Calls(route string) []Call { return s.rec.Calls(route) }

// WaitCall waits for a call of route that satisfies pred (nil matches any)
// and returns it.
func (s *Server) WaitCall(ctx context.Context, route string, pred func(Call) bool) (Call, error) {
	c, err := s.rec.WaitCall(ctx, route, pred)
	if err != nil {
		return Call{}, fmt.Errorf("discordtest: %w", err)
	}
	return c, nil
}

// Channel returns the channel with id.
func (s *Server) Channel(id string) (Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	return c, ok
}

// AddThread creates a thread in parent that the bot did not start (a
// user's thread) and returns it.
func (s *Server) AddThread(parent, name string) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Channel{ID: s.nextIDLocked(), GuildID: GuildID, ParentID: parent, Type: ChannelThread, Name: name}
	s.channels[c.ID] = c
	s.notifyLocked()
	return c
}

// AddChannel creates a guild text channel and returns it.
func (s *Server) AddChannel(name string) Channel { return s.AddGuildChannel(GuildID, name) }

// AddGuildChannel creates a text channel in guild, another server the
// bot is in besides GuildID, and returns it; messages in it
// ([Server.Mention]) carry that guild.
func (s *Server) AddGuildChannel(guild, name string) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Channel{ID: s.nextIDLocked(), GuildID: guild, Type: ChannelText, Name: name}
	s.channels[c.ID] = c
	s.notifyLocked()
	return c
}

// AddPrivateChannel creates a guild text channel @everyone cannot view
// (its overwrite for the @everyone role denies VIEW_CHANNEL; the bot is
// let in by a member overwrite) and returns it.
func (s *Server) AddPrivateChannel(name string) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Channel{ID: s.nextIDLocked(), GuildID: GuildID, Type: ChannelText, Name: name, Overwrites: []Overwrite{
		{ID: GuildID, Type: 0, Deny: PermissionViewChannel},
		{ID: BotUserID, Type: 1, Allow: PermissionViewChannel},
	}}
	s.channels[c.ID] = c
	s.notifyLocked()
	return c
}

// SetOverwrites replaces a channel's permission overwrites and, as
// Discord does, dispatches CHANNEL_UPDATE with the changed channel.
func (s *Server) SetOverwrites(channel string, overwrites ...Overwrite) {
	s.mu.Lock()
	c, ok := s.channels[channel]
	c.Overwrites = overwrites
	if ok {
		s.channels[channel] = c
	}
	s.mu.Unlock()
	if ok {
		s.Dispatch("CHANNEL_UPDATE", channelJSON(c))
	}
}

// AddPrivateThread creates a private thread in parent (only its members
// can read it) and returns it.
func (s *Server) AddPrivateThread(parent, name string) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Channel{ID: s.nextIDLocked(), GuildID: GuildID, ParentID: parent, Type: ChannelPrivateThread, Name: name}
	s.channels[c.ID] = c
	s.notifyLocked()
	return c
}

// wait blocks until cond, called with s.mu held, is true or ctx ends.
func (s *Server) wait(ctx context.Context, cond func() bool) error { return s.rec.Wait(ctx, cond) }

// notifyLocked wakes every waiter; s.mu must be held.
func (s *Server) notifyLocked() { s.rec.NotifyLocked() }

// nextIDLocked returns a fresh snowflake-shaped ID.
func (s *Server) nextIDLocked() string {
	s.seq++
	return fmt.Sprintf("%d", 1300000000000000000+s.seq)
}

// apiError is Discord's JSON error body.
func apiError(code int, message string) map[string]any {
	return map[string]any{"code": code, "message": message}
}

// api wraps a route's handler: it records the call, checks the token,
// applies scripted replies, and writes the handler's JSON answer.
func (s *Server) api(route string, h func(*http.Request, []byte) (int, any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		auth := r.Header.Get("Authorization")
		s.mu.Lock()
		call := Call{Route: route, Path: r.URL.Path, Token: auth, At: time.Now()}
		if len(body) > 0 {
			call.Body = json.RawMessage(body)
		}
		var scripted *Reply
		if r, ok := s.rec.NextLocked(route); ok {
			scripted = &r
		}
		needAuth := !strings.HasPrefix(route, "POST /interactions") && !strings.Contains(route, "/webhooks/")
		badToken := needAuth && (!strings.HasPrefix(auth, "Bot ") || (s.token != "" && auth != "Bot "+s.token))
		s.mu.Unlock()

		var status int
		var resp any
		switch {
		case scripted != nil && scripted.Status == http.StatusTooManyRequests:
			ra := scripted.RetryAfter
			if ra <= 0 {
				ra = 10 * time.Millisecond
			}
			status = http.StatusTooManyRequests
			w.Header().Set("Retry-After", fmt.Sprint(int(ra.Seconds()+0.999)))
			w.Header().Set("X-RateLimit-Scope", "user")
			resp = map[string]any{"message": "You are being rate limited.", "retry_after": ra.Seconds(), "global": false}
		case scripted != nil:
			status = scripted.Status
			if scripted.Body != "" {
				resp = json.RawMessage(scripted.Body)
			} else {
				resp = apiError(0, http.StatusText(status))
			}
		case badToken:
			status, resp = http.StatusUnauthorized, apiError(0, "401: Unauthorized")
		default:
			status, resp = h(r, body)
		}
		s.mu.Lock()
		call.Status = status
		s.rec.RecordLocked(call)
		s.mu.Unlock()

		if status == http.StatusNoContent || resp == nil {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(resp)
	}
}

func (s *Server) getGateway(r *http.Request, _ []byte) (int, any) {
	url := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gateway"
	if strings.HasSuffix(r.URL.Path, "/bot") {
		return http.StatusOK, map[string]any{"url": url, "shards": 1,
			"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}}
	}
	return http.StatusOK, map[string]any{"url": url}
}

func (s *Server) getMe(*http.Request, []byte) (int, any) {
	return http.StatusOK, userJSON(BotUserID, true)
}

func userJSON(id string, bot bool) map[string]any {
	name := "user" + id
	if id == BotUserID {
		name = BotName
	}
	return map[string]any{"id": id, "username": name, "global_name": name, "bot": bot, "discriminator": "0"}
}

func channelJSON(c Channel) map[string]any {
	m := map[string]any{"id": c.ID, "type": c.Type, "name": c.Name}
	if c.GuildID != "" {
		m["guild_id"] = c.GuildID
	}
	if c.ParentID != "" {
		m["parent_id"] = c.ParentID
	}
	if c.Type == ChannelText {
		// As on Discord, a guild channel always lists its overwrites;
		// the bitfields are strings.
		ow := make([]map[string]any, 0, len(c.Overwrites))
		for _, o := range c.Overwrites {
			ow = append(ow, map[string]any{"id": o.ID, "type": o.Type,
				"allow": strconv.FormatInt(o.Allow, 10), "deny": strconv.FormatInt(o.Deny, 10)})
		}
		m["permission_overwrites"] = ow
	}
	return m
}

// createDM opens (or finds) the DM channel between the bot and
// recipient_id, as Discord does.
func (s *Server) createDM(_ *http.Request, body []byte) (int, any) {
	var b struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.Unmarshal(body, &b); err != nil || b.RecipientID == "" {
		return http.StatusBadRequest, apiError(50035, "Invalid Form Body: recipient_id: This field is required")
	}
	id := s.DMChannel(b.RecipientID)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := channelJSON(s.channels[id])
	out["recipients"] = []any{userJSON(b.RecipientID, false)}
	return http.StatusOK, out
}

func (s *Server) getChannel(r *http.Request, _ []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[r.PathValue("channel")]
	if !ok {
		return http.StatusNotFound, apiError(10003, "Unknown Channel")
	}
	return http.StatusOK, channelJSON(c)
}

func (s *Server) listMessages(r *http.Request, _ []byte) (int, any) {
	ch, before := r.PathValue("channel"), r.URL.Query().Get("before")
	limit := 50 // Discord's default
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return http.StatusBadRequest, apiError(50035, "Invalid Form Body: limit: int value should be between 1 and 100.")
		}
		limit = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for i := len(s.messages) - 1; i >= 0; i-- { // newest first, as Discord lists
		m := s.messages[i]
		if m.ChannelID != ch || m.Ephemeral || (before != "" && !idLess(m.ID, before)) {
			continue
		}
		out = append(out, s.messageJSONLocked(m))
		if len(out) == limit {
			break
		}
	}
	return http.StatusOK, out
}

// idLess orders snowflakes: shorter is smaller, then lexically.
func idLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// messageBody is what the bot sends to create or edit a message.
type messageBody struct {
	Content    *string          `json:"content"`
	Components *json.RawMessage `json:"components"`
	Flags      int              `json:"flags"`
	Reference  *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
	AllowedMentions json.RawMessage `json:"allowed_mentions"`
}

func (s *Server) createMessage(r *http.Request, body []byte) (int, any) {
	body, files, status, refusal := readAttachments(r, body)
	if status != 0 {
		return status, refusal
	}
	var b messageBody
	if err := json.Unmarshal(body, &b); err != nil {
		return http.StatusBadRequest, apiError(50109, "The request body contains invalid JSON.")
	}
	ch := r.PathValue("channel")
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[ch]
	if !ok {
		return http.StatusNotFound, apiError(10003, "Unknown Channel")
	}
	m := Message{ChannelID: ch, GuildID: c.GuildID, Author: BotUserID, Bot: true, Flags: b.Flags,
		AllowedMentions: b.AllowedMentions}
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Components != nil && string(*b.Components) != "null" {
		m.Components = *b.Components
	}
	if b.Reference != nil {
		m.ReferenceID = b.Reference.MessageID
	}
	for _, f := range files {
		f.ID = s.nextIDLocked()
		s.files[f.ID] = f // served at its URL, as Discord's CDN does
		m.Files = append(m.Files, f)
	}
	if m.Content == "" && len(m.Buttons()) == 0 && len(m.Files) == 0 {
		return http.StatusBadRequest, apiError(50006, "Cannot send an empty message")
	}
	if n := contentLength(m.Content); n > 2000 {
		return http.StatusBadRequest, apiError(50035, fmt.Sprintf("Invalid Form Body: content: Must be 2000 or fewer in length (got %d).", n))
	}
	m.ID = s.nextIDLocked()
	m.At = time.Now()
	s.messages = append(s.messages, m)
	s.notifyLocked()
	return http.StatusOK, s.messageJSONLocked(m)
}

// contentLength counts content as Discord does for its 2,000-character
// limit: in Unicode code points, so an emoji or an accented letter is one.
func contentLength(s string) int { return utf8.RuneCountInString(s) }

// checkContent refuses content as Discord does: over 2,000 code points
// (50035); with empty set, content that is empty with nothing else to
// show (50006).
func checkContent(content string, empty bool) (int, any) {
	if n := contentLength(content); n > 2000 {
		return http.StatusBadRequest, apiError(50035, fmt.Sprintf("Invalid Form Body: content: Must be 2000 or fewer in length (got %d).", n))
	}
	if empty && strings.TrimSpace(content) == "" {
		return http.StatusBadRequest, apiError(50006, "Cannot send an empty message")
	}
	return 0, nil
}

// deleteMessage removes one of the bot's messages, as Discord does; the
// bot may not delete anyone else's (it lacks Manage Messages).
func (s *Server) deleteMessage(r *http.Request, _ []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.findLocked(r.PathValue("channel"), r.PathValue("message"))
	if i < 0 {
		return http.StatusNotFound, apiError(10008, "Unknown Message")
	}
	if s.messages[i].Author != BotUserID {
		return http.StatusForbidden, apiError(50013, "Missing Permissions")
	}
	s.messages = append(s.messages[:i], s.messages[i+1:]...)
	s.notifyLocked()
	return http.StatusNoContent, nil
}

func (s *Server) editMessage(r *http.Request, body []byte) (int, any) {
	var b messageBody
	if err := json.Unmarshal(body, &b); err != nil {
		return http.StatusBadRequest, apiError(50109, "The request body contains invalid JSON.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.findLocked(r.PathValue("channel"), r.PathValue("message"))
	if i < 0 {
		return http.StatusNotFound, apiError(10008, "Unknown Message")
	}
	m := &s.messages[i]
	if m.Author != BotUserID {
		return http.StatusForbidden, apiError(50005, "Cannot edit a message authored by another user")
	}
	if b.Content != nil {
		if n := contentLength(*b.Content); n > 2000 {
			return http.StatusBadRequest, apiError(50035, fmt.Sprintf("Invalid Form Body: content: Must be 2000 or fewer in length (got %d).", n))
		}
		m.Content = *b.Content
	}
	if b.Components != nil {
		m.Components = *b.Components
	}
	m.Edits++
	s.notifyLocked()
	return http.StatusOK, s.messageJSONLocked(*m)
}

func (s *Server) createThread(r *http.Request, body []byte) (int, any) {
	var b struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &b)
	ch, msg := r.PathValue("channel"), r.PathValue("message")
	s.mu.Lock()
	defer s.mu.Unlock()
	parent, ok := s.channels[ch]
	switch {
	case !ok:
		return http.StatusNotFound, apiError(10003, "Unknown Channel")
	case parent.Type != ChannelText:
		return http.StatusBadRequest, apiError(50024, "Cannot execute action on this channel type")
	case b.Name == "" || contentLength(b.Name) > 100:
		return http.StatusBadRequest, apiError(50035, "Invalid Form Body: name")
	}
	i := s.findLocked(ch, msg)
	if i < 0 {
		return http.StatusNotFound, apiError(10008, "Unknown Message")
	}
	if s.messages[i].ThreadID != "" {
		return http.StatusBadRequest, apiError(160004, "A thread has already been created for this message")
	}
	// As on Discord, a thread started from a message has the message's ID.
	t := Channel{ID: msg, GuildID: parent.GuildID, ParentID: ch, Type: ChannelThread, Name: b.Name}
	s.channels[t.ID] = t
	s.messages[i].ThreadID = t.ID
	s.notifyLocked()
	return http.StatusCreated, channelJSON(t)
}

func (s *Server) typing(*http.Request, []byte) (int, any) { return http.StatusNoContent, nil }

func (s *Server) findLocked(channel, id string) int {
	for i, m := range s.messages {
		if m.ChannelID == channel && m.ID == id && !m.Ephemeral {
			return i
		}
	}
	return -1
}

// File is an attachment, served at its URL to anyone (as Discord's CDN).
type File struct {
	ID          string
	Name        string
	ContentType string
	Content     []byte
	// Size is reported in events; len(Content) when zero.
	Size int
}

// AddFile uploads an attachment and returns it, ready for a [Msg].
func (s *Server) AddFile(name, contentType string, content []byte) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := File{ID: s.nextIDLocked(), Name: name, ContentType: contentType, Content: content, Size: len(content)}
	s.files[f.ID] = f
	return f
}

// FileURL returns the attachment's URL on this server.
func (s *Server) FileURL(f File) string { return s.srv.URL + "/attachments/" + f.ID + "/" + f.Name }

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.rec.RecordLocked(Call{Route: "GET /attachments/{id}/{name}", Path: r.URL.Path, Status: http.StatusOK, At: time.Now()})
	f, ok := s.files[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.ContentType)
	_, _ = w.Write(f.Content)
}
