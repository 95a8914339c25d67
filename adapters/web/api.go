package web

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/quota"
)

// mention is a chat mention in core's sentences, <@user>, shown on the web
// as @user.
var mention = regexp.MustCompile(`<@([^>]+)>`)

// route is one endpoint of the API; the OpenAPI document lists the same.
type route struct {
	method, path string
	auth         bool
	handle       func(a *Adapter, w http.ResponseWriter, r *http.Request, user string)
}

var routes = []route{
	{"POST", "/v1/login", false, (*Adapter).login},
	{"GET", "/v1/me", true, (*Adapter).me},
	{"POST", "/v1/connect", true, (*Adapter).connect},
	{"POST", "/v1/conversations", true, (*Adapter).create},
	{"GET", "/v1/conversations", true, (*Adapter).list},
	{"GET", "/v1/conversations/{id}", true, (*Adapter).get},
	{"PATCH", "/v1/conversations/{id}", true, (*Adapter).rename},
	{"DELETE", "/v1/conversations/{id}", true, (*Adapter).remove},
	{"POST", "/v1/conversations/{id}/messages", true, (*Adapter).send},
	{"POST", "/v1/conversations/{id}/stop", true, (*Adapter).stop},
	{"POST", "/v1/conversations/{id}/feedback", true, (*Adapter).rate},
	{"GET", "/v1/conversations/{id}/events", true, (*Adapter).events},
	{"GET", "/v1/conversations/{id}/files/{file}", true, (*Adapter).file},
	{"GET", "/v1/approvals", true, (*Adapter).approvals},
	{"POST", "/v1/gates/{token}/answer", true, (*Adapter).answer},
	{"POST", "/v1/uploads", true, (*Adapter).upload},
	{"GET", "/v1/uploads/{id}", true, (*Adapter).download},
	{"POST", "/v1/gates/{token}/form", true, (*Adapter).form},
}

func (a *Adapter) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.method+" "+rt.path, func(w http.ResponseWriter, r *http.Request) {
			a.cors(w, r)
			limit := int64(maxBody)
			if rt.path == "/v1/uploads" {
				limit = max(a.maxFile(), a.maxImage())
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			user := ""
			if rt.auth {
				if user = a.auth.user(r); user == "" {
					w.Header().Set("WWW-Authenticate", `Bearer realm="neobot"`)
					apiError(w, http.StatusUnauthorized, "a valid bearer token is required: send Authorization: Bearer <token> (neobot web token NAME makes one)")
					return
				}
			}
			rt.handle(a, w, r, user)
		})
	}
	mux.HandleFunc("OPTIONS /v1/", func(w http.ResponseWriter, r *http.Request) {
		if !a.cors(w, r) {
			apiError(w, http.StatusForbidden, "cross-origin requests from this origin are not allowed (NEO_WEB_CORS_ORIGINS)")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPI)
	})
	a.adminRoutes(mux)
	page(mux)
	return mux
}

// cors sets the CORS headers for an allowed origin and reports whether
// the request's origin is one.
func (a *Adapter) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || !slices.Contains(a.opts.CORSOrigins, origin) {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, Last-Event-ID")
	h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")
	h.Add("Vary", "Origin")
	return true
}

// apiError writes {"error": message}.
func apiError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"error": message})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads one JSON object into v, refusing unknown fields and
// trailing data; an empty body leaves v as it is.
func decode(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return fmt.Errorf("the request body is over %d bytes", maxBody)
		}
		return fmt.Errorf("read the request body: %v", err)
	}
	return decodeBody(data, v)
}

// decodeBody is decode's parser, on its own for fuzzing.
func decodeBody(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the body is not the JSON this endpoint takes (%v); see /v1/openapi.json", err)
	}
	if dec.More() {
		return errors.New("the body has data after its JSON object; send one object")
	}
	return nil
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (a *Adapter) login(w http.ResponseWriter, r *http.Request, _ string) {
	var body struct {
		Code string `json:"code"`
	}
	if err := decode(r, &body); err != nil || body.Code == "" {
		apiError(w, http.StatusBadRequest, `send {"code": "<the code from the login link>"}`)
		return
	}
	token, user, err := a.auth.exchange(body.Code)
	if err != nil {
		apiError(w, http.StatusUnauthorized, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": token, "user": user})
}

// connect is the chat page, signed in as user, opening a connect link's
// sign-in (the state the link's page sent it with): the answer is where
// the browser goes next. Whether user is the person the link was made for
// is decided there, not here.
func (a *Adapter) connect(w http.ResponseWriter, r *http.Request, user string) {
	var body struct {
		State string `json:"state"`
	}
	if err := decode(r, &body); err != nil || body.State == "" {
		apiError(w, http.StatusBadRequest, `send {"state": "<the connect state from the page's address>"}`)
		return
	}
	if a.opts.Connector == nil {
		apiError(w, http.StatusNotFound, "connect links are not served here")
		return
	}
	next, err := a.opts.Connector.SignedIn(r.Context(), body.State, user)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": next})
}

func (a *Adapter) me(w http.ResponseWriter, _ *http.Request, user string) {
	writeJSON(w, http.StatusOK, map[string]string{"user": user})
}

// createdSet remembers conversations created in this run that have no
// message stored yet, so they list and open before their first message.
type createdSet struct {
	mu  sync.Mutex
	m   map[string]createdConv // id -> owner
	seq uint64
}

type createdConv struct {
	user  string
	title string // given by rename before the first message was stored
	at    time.Time
	seq   uint64 // order of creation
}

// maxCreatedPerUser is how many created conversations one user keeps in
// the set: past it their own oldest goes, so no user's creations push
// another's out (the set as a whole holds maxConversations).
const maxCreatedPerUser = 64

func (c *createdSet) add(id, user string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	mine, oldest := 0, ""
	for k, v := range c.m {
		if v.user == user {
			if mine++; oldest == "" || v.seq < c.m[oldest].seq {
				oldest = k
			}
		}
	}
	switch {
	case mine >= maxCreatedPerUser:
		delete(c.m, oldest) // it only stops listing until its first message
	case len(c.m) >= maxConversations:
		for k := range c.m { // drop any one: it only stops listing until its first message
			delete(c.m, k)
			break
		}
	}
	c.seq++
	c.m[id] = createdConv{user: user, at: at, seq: c.seq}
}

func (c *createdSet) owner(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id].user
}

func (a *Adapter) create(w http.ResponseWriter, r *http.Request, user string) {
	var body struct {
		Message string `json:"message"`
	}
	if err := decode(r, &body); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := newID()
	// The first message goes first: one refused (over the user's share)
	// leaves no empty conversation behind.
	if strings.TrimSpace(body.Message) != "" {
		if no := a.submit(r, thread(user, id), body.Message, r.Header.Get("Idempotency-Key"), nil); no != nil {
			no.write(w)
			return
		}
	}
	now := a.opts.Now()
	a.created.add(id, user, now)
	a.tell(note{Conv: id, User: user, Created: now})
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

// MaxListed bounds the stored conversations a list shows, and the
// matches a search shows (a search reads them all).
const MaxListed = 100

func (a *Adapter) list(w http.ResponseWriter, r *http.Request, user string) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	limit := MaxListed
	if q != "" {
		limit = 0 // a search reads every conversation, not the latest only
	}
	stored, err := a.opts.History.Conversations(r.Context(), user, limit)
	if err != nil {
		a.log.Error().Err(err).Msg("web: list conversations")
		apiError(w, http.StatusServiceUnavailable, "the conversations could not be read just now; try again")
		return
	}
	seen := map[string]bool{}
	for _, s := range stored {
		seen[s.ID] = true
	}
	a.created.mu.Lock()
	var fresh []Summary
	for id, c := range a.created.m {
		if c.user == user && !seen[id] {
			fresh = append(fresh, Summary{ID: id, Title: cmp.Or(c.title, "New conversation"), Active: c.at})
		}
	}
	a.created.mu.Unlock()
	slices.SortFunc(fresh, func(x, y Summary) int { return y.Active.Compare(x.Active) })
	out := append(fresh, stored...)
	if q != "" {
		out = a.matches(r, user, out, q)
	}
	out = out[:min(len(out), MaxListed+len(fresh))]
	if out == nil {
		out = []Summary{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": out})
}

// owned resolves conversation {id} for user: the caller's own (created in
// this run, or stored), or a 404 that says nothing about whether another
// user's exists. It reads no transcript.
func (a *Adapter) owned(w http.ResponseWriter, r *http.Request, user string) (core.Thread, bool) {
	id := r.PathValue("id")
	if len(id) != 24 || strings.Trim(id, "0123456789abcdef") != "" {
		apiError(w, http.StatusNotFound, "no such conversation")
		return core.Thread{}, false
	}
	// The owner's name is part of the thread's key, so another user's
	// conversation of the same ID is simply not there.
	t := thread(user, id)
	if a.created.owner(id) == user {
		return t, true
	}
	known, err := a.opts.History.Known(r.Context(), t)
	if err != nil {
		a.log.Error().Err(err).Str("thread", t.Key()).Msg("web: look up conversation")
		apiError(w, http.StatusServiceUnavailable, "the conversation could not be read just now; try again")
		return core.Thread{}, false
	}
	if !known {
		apiError(w, http.StatusNotFound, "no such conversation")
		return core.Thread{}, false
	}
	return t, true
}

// get returns the transcript and the ID of the last event it already
// covers, where the event stream should resume.
func (a *Adapter) get(w http.ResponseWriter, r *http.Request, user string) {
	last := a.feed.lastID(r.PathValue("id")) // before the read: an event in between is sent again, never lost
	t, ok := a.owned(w, r, user)
	if !ok {
		return
	}
	said, err := a.opts.History.Transcript(r.Context(), t)
	if err != nil {
		a.log.Error().Err(err).Str("thread", t.Key()).Msg("web: read conversation")
		apiError(w, http.StatusServiceUnavailable, "the conversation could not be read just now; try again")
		return
	}
	if said == nil {
		said = []Said{}
	}
	// The approvals waiting in the conversation, for a page that loads it
	// after they were asked (a reload, or a reset on another instance):
	// the stream resumes after them.
	approvals, err := a.waiting(r.Context(), func(g core.Gate) bool { return g.Thread.Key() == t.Key() })
	if err != nil {
		a.log.Warn().Err(err).Str("thread", t.Key()).Msg("web: read the approvals waiting in a conversation")
		approvals = []gateData{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": t.ID, "messages": said, "approvals": approvals, "last_event_id": last})
}

func (a *Adapter) send(w http.ResponseWriter, r *http.Request, user string) {
	t, ok := a.owned(w, r, user)
	if !ok {
		return
	}
	var body struct {
		Text           string   `json:"text"`
		IdempotencyKey string   `json:"idempotency_key"`
		Files          []string `json:"files"`
	}
	if err := decode(r, &body); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if strings.TrimSpace(body.Text) == "" {
		apiError(w, http.StatusBadRequest, `send {"text": "<your message>"}`)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		key = body.IdempotencyKey
	}
	if len(body.Files) > maxFilesPerMessage {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("a message carries at most %d files; send the rest in another", maxFilesPerMessage))
		return
	}
	var files []FileRef
	if len(body.Files) > 0 {
		var no *refusal
		if files, no = a.sent(r.Context(), user, t, body.Files); no != nil {
			no.write(w)
			return
		}
	}
	if no := a.submit(r, t, body.Text, key, files); no != nil {
		no.write(w)
		return
	}
	if title := a.created.takeTitle(t.ID, user); title != "" {
		if err := a.opts.History.Rename(r.Context(), t, title); err != nil {
			a.log.Warn().Err(err).Str("thread", t.Key()).Msg("web: keep the title given before the first message")
		}
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted"})
}

func (a *Adapter) stop(w http.ResponseWriter, r *http.Request, user string) {
	t, ok := a.owned(w, r, user)
	if !ok {
		return
	}
	a.stopping.Store(t.ID, true)
	a.tellStop(r.Context(), t.ID)
	if no := a.submit(r, t, "stop", "", nil); no != nil {
		a.stopping.Delete(t.ID)
		no.write(w)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "stopping"})
}

// messageData is a user's message as the event stream shows it.
type messageData struct {
	Text  string    `json:"text"`
	User  string    `json:"user"`
	Files []FileRef `json:"files,omitempty"`
}

// echo shows the author's message eventID on conversation id's stream,
// once: from the request that took it, or from the first thing its turn
// shows, whichever comes first. The turn may start before Accept returns,
// and its status and steps belong below the message that started it.
func (a *Adapter) echo(id, eventID string) {
	if m, ok := a.unechoed.LoadAndDelete(eventID); ok {
		a.show(id, EventMessage, m)
	}
}

// echoTurn is echo for the message whose turn ctx carries, if it was
// taken here and is not shown yet.
func (a *Adapter) echoTurn(ctx context.Context, id string) {
	if t, ok := core.TurnFrom(ctx); ok {
		a.echo(id, t.Inbound.EventID)
	}
}

// refusal is why a request was not done: its status, a sentence for the
// user, and for a limit (429) which one and when to try again.
type refusal struct {
	status     int
	message    string
	limit      string
	retryAfter int // seconds
}

// write answers r with {"error", "limit", "retry_after"} and, for a
// limit, a Retry-After header.
func (r *refusal) write(w http.ResponseWriter) {
	if r.retryAfter == 0 {
		apiError(w, r.status, r.message)
		return
	}
	w.Header().Set("Retry-After", strconv.Itoa(r.retryAfter))
	writeJSON(w, r.status, map[string]any{"error": r.message, "limit": r.limit, "retry_after": r.retryAfter})
}

// limited is the 429 for d.
func limited(d quota.Denial) *refusal {
	return &refusal{status: http.StatusTooManyRequests, message: d.Sentence(), limit: d.Limit, retryAfter: d.Seconds()}
}

// queueRetry is what a message set aside by a full queue is told to
// wait: about a turn.
const queueRetry = 10

// submit hands a message to the intake; nil means it was taken. The
// idempotency key, when given, is the event ID, so the same key sent
// twice starts one turn.
func (a *Adapter) submit(r *http.Request, t core.Thread, text, key string, files []FileRef) *refusal {
	if len(key) > 128 {
		return &refusal{status: http.StatusBadRequest, message: "the idempotency key is over 128 characters"}
	}
	event := newID()
	if key != "" {
		event = "key:" + key
	}
	in := core.Inbound{Thread: t, User: t.Channel, UserName: t.Channel, Text: text,
		EventID: t.ID + ":" + event, MessageID: event, At: a.opts.Now(), Attachments: attachments(files)}
	if !core.IsStop(text) {
		a.unechoed.Store(in.EventID, messageData{Text: text, User: t.Channel, Files: files})
		defer a.unechoed.Delete(in.EventID) // not taken: never shown
	}
	m, outcome := a.intake.Accept(r.Context(), intake.Message{Inbound: in, Mention: true, Known: true}, intakePlatform{a})
	switch outcome {
	case intake.Accepted:
		if !core.IsStop(text) {
			a.stopping.Delete(t.ID) // a Stop asked earlier does not cover this turn
			a.echo(t.ID, in.EventID)
		}
		return nil
	case intake.Limited:
		return limited(m.Denial)
	case intake.Busy:
		return &refusal{status: http.StatusTooManyRequests, limit: "messages waiting in one conversation", retryAfter: queueRetry,
			message: "This conversation already has as many messages waiting as it may hold; this one was set aside. Send it again once Neo has answered."}
	case intake.Refused:
		if core.IsStop(text) {
			// A conversation is its owner's, who asked for every turn in
			// it; should that ever change, a stranger's stop is refused.
			return &refusal{status: http.StatusForbidden, message: intake.RefuseStop}
		}
		return &refusal{status: http.StatusUnprocessableEntity, message: "the message was not taken: see the notice on the conversation's event stream"}
	}
	return &refusal{status: http.StatusServiceUnavailable, message: intake.Apology}
}

// resumeWait bounds how long a stream resuming from an event another
// instance showed waits for the database to deliver that event here.
const resumeWait = 5 * time.Second

func (a *Adapter) events(w http.ResponseWriter, r *http.Request, user string) {
	t, ok := a.owned(w, r, user)
	if !ok {
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		apiError(w, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	if q := a.opts.Quota; q != nil {
		release, d := q.Open(r.Context(), intake.UserKey(Platform, Workspace, user))
		if d.Denied() {
			limited(d).write(w)
			return
		}
		defer release()
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush() // the client knows the stream is open before any event
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	ctx := r.Context()
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	first := true
	var coming <-chan time.Time // while the event last names is on its way here
	if a.feed.coming(t.ID, last) {
		wait := time.NewTimer(resumeWait)
		defer wait.Stop()
		coming = wait.C
	}
	for {
		// Written event by event, straight to the connection: a backlog
		// of large events is never copied into one buffer.
		events, reset, wake := a.feed.since(t.ID, last)
		if reset && first && coming != nil {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-coming:
				coming = nil // not coming after all: the page reloads
			}
			continue
		}
		if reset && first {
			if err := writeSSE(w, Event{ID: last, Type: EventReset, Data: json.RawMessage(`{}`)}); err != nil {
				return
			}
		}
		wrote := reset && first
		first = false
		for _, e := range events {
			if err := writeSSE(w, e); err != nil {
				return
			}
			last, wrote = e.ID, true
		}
		if wrote {
			flusher.Flush()
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-heartbeat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// approvals lists the pending web approvals the caller may answer: an
// approver who is not the requester cannot read the conversation, and
// finds them here.
func (a *Adapter) approvals(w http.ResponseWriter, r *http.Request, user string) {
	out, err := a.waiting(r.Context(), func(g core.Gate) bool { return g.MayAnswer(user, nil) })
	if err != nil {
		a.log.Error().Err(err).Msg("web: list the pending approvals")
		apiError(w, http.StatusServiceUnavailable, "the approvals could not be read from the database; try again in a moment")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

// waiting returns the pending web approvals keep keeps, soonest to
// expire first: from the shared store (Options.Pending), or those this
// process saw asked. A question's form is not among them: it is its
// asker's, answered in the conversation.
func (a *Adapter) waiting(ctx context.Context, keep func(core.Gate) bool) ([]gateData, error) {
	now := a.opts.Now()
	var gates []core.Gate
	if a.opts.Pending != nil {
		var err error
		if gates, err = a.opts.Pending.GatesOn(ctx, Platform); err != nil {
			return nil, err
		}
	} else {
		gates = a.pending.open(now)
	}
	out := []gateData{}
	for _, g := range gates {
		if g.Form == nil && g.Open(now) && keep(g) {
			out = append(out, shownGate(g))
		}
	}
	slices.SortFunc(out, func(a, b gateData) int { return a.Expires.Compare(b.Expires) })
	return out, nil
}

func (a *Adapter) answer(w http.ResponseWriter, r *http.Request, user string) {
	var body struct {
		Option *int `json:"option"`
	}
	if err := decode(r, &body); err != nil || body.Option == nil {
		apiError(w, http.StatusBadRequest, `send {"option": <the index of the chosen option>}`)
		return
	}
	gates := a.opts.Gates
	token := r.PathValue("token")
	if gates == nil {
		apiError(w, http.StatusNotFound, "no such approval")
		return
	}
	g, err := gates.Load(r.Context(), token)
	// Only web approvals are answered here: a Slack or Discord user ID is
	// not a web identity.
	if err != nil || g.Thread.Platform != Platform {
		apiError(w, http.StatusNotFound, "no such approval")
		return
	}
	if *body.Option < 0 || *body.Option >= len(g.Options) {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("option %d is not one of this approval's %d options (0 to %d)", *body.Option, len(g.Options), len(g.Options)-1))
		return
	}
	c, err := gates.AnswerFrom(r.Context(), token, *body.Option, user, nil, "web")
	if err != nil {
		a.log.Error().Err(err).Msg("web: answer gate")
		apiError(w, http.StatusServiceUnavailable, c.Refusal)
		return
	}
	if c.OpenForm {
		apiError(w, http.StatusBadRequest, "this option opens the question's form: send its fields to POST /v1/gates/"+token+"/form")
		return
	}
	if c.Redraw && c.Gate.Token != "" && c.Refusal == "" {
		a.showGate(c.Gate)
	}
	switch {
	case c.Refusal == "" && c.Gate.State == core.GatePending:
		// A vote towards a quorum: recorded, not yet decided.
		writeJSON(w, http.StatusOK, map[string]any{"token": c.Gate.Token, "state": string(c.Gate.State), "progress": mention.ReplaceAllString(c.Gate.Progress(), "@$1")})
	case c.Refusal == "":
		writeJSON(w, http.StatusOK, decidedData{Token: c.Gate.Token, State: string(c.Gate.State), Answer: c.Gate.Answer, By: c.Gate.DecidedBy})
	case c.Gate.Token == "" && !c.Redraw:
		apiError(w, http.StatusForbidden, mention.ReplaceAllString(c.Refusal, "@$1"))
	default:
		apiError(w, http.StatusConflict, c.Refusal)
	}
}
