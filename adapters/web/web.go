package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/quota"
)

// Platform is the platform name of web threads.
const Platform = "web"

// Workspace is the workspace of every web thread: the web is one place.
const Workspace = "web"

// maxBody bounds every request body.
const maxBody = 64 << 10

// Said is one message of a conversation as its user saw it.
type Said struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	Text string `json:"text"`
	// Stopped marks an answer a user's Stop cut short: Text is the words
	// it had shown.
	Stopped bool `json:"stopped,omitempty"`
}

// StoppedKeeper is a History that stores the words of an answer a user's
// Stop cut short, so the transcript shows what the page showed.
type StoppedKeeper interface {
	KeepStopped(ctx context.Context, t core.Thread, text string) error
}

// Summary describes one of a user's conversations.
type Summary struct {
	ID     string    `json:"id"`
	Title  string    `json:"title"`
	Active time.Time `json:"active"`
}

// History reads stored conversations; cmd/neobot implements it over the
// store.
type History interface {
	// Conversations lists user's web conversations, most recent first:
	// the first limit, or all of them when limit is 0.
	Conversations(ctx context.Context, user string, limit int) ([]Summary, error)
	// Transcript returns what was said in t, oldest first.
	Transcript(ctx context.Context, t core.Thread) ([]Said, error)
	// Known reports whether t is stored.
	Known(ctx context.Context, t core.Thread) (bool, error)
	// Rename sets t's title; core.ErrNotFound when t is not stored.
	Rename(ctx context.Context, t core.Thread, title string) error
	// Delete removes t with everything said in it.
	Delete(ctx context.Context, t core.Thread) error
}

// Options configures [New].
type Options struct {
	// Addr is the listen address, such as "127.0.0.1:8080".
	Addr string
	// Users maps token hashes to user names (see ParseUsers).
	Users map[string]string
	// Hub journals messages; *conversation.Hub.
	Hub intake.Submitter
	// History reads conversations back.
	History History
	// Gates decides approvals; nil denies every one.
	Gates *core.Gates
	// Rater records the ratings of answers (POST
	// /v1/conversations/{id}/feedback); nil refuses them.
	Rater core.Rater
	// Approvers are web users who may answer any approval besides the
	// requester.
	Approvers []string
	// CORSOrigins may call the API from a browser page of another origin;
	// empty sends no CORS headers, so browsers refuse such calls.
	CORSOrigins []string
	// Pending lists the web's pending approvals from the store every
	// instance shares, for GET /v1/approvals: an instance started after
	// an approval was asked lists it too. Nil lists those this process
	// saw asked.
	Pending Pending
	// Relay tells the other instances serving the web from the same
	// database what this one shows; nil for an instance alone.
	Relay Relay
	// MaxText caps a message's text (intake.DefaultMaxText when zero).
	MaxText int
	// Quota is each user's share: messages a minute, bytes a day and live
	// event streams (nil: no per-user limits). One limiter may serve
	// every adapter.
	Quota *quota.Limiter
	// FeedBytes caps the bytes of events kept for reconnecting clients
	// across all conversations (DefaultFeedBytes when zero);
	// FeedConversationBytes caps one conversation's
	// (DefaultFeedConversationBytes when zero).
	FeedBytes, FeedConversationBytes int64
	// MaxFileBytes caps a text file Neo reads (DefaultMaxFileBytes when
	// zero, as on Slack and Discord); MaxImageBytes caps an image upload
	// (DefaultMaxImageBytes when zero).
	MaxFileBytes, MaxImageBytes int64
	// Connector takes the chat page's word on who opened a link to
	// connect their own account to an MCP server (POST /v1/connect); nil
	// refuses such links.
	Connector Connector
	// Files keeps uploads and tools' files where every instance reads
	// them and a restart keeps them (the store); nil keeps them in this
	// process's memory.
	Files Files
	// Governor reads and changes the places' settings for the admin page
	// (/admin); nil: the page says there is nothing to govern.
	Governor Governor
	// Admins may use the admin page for every place: web user names
	// ("alice") and Slack people ("slack:T0123/U0456"). Nobody else may,
	// but Slack workspace admins signed in with Slack, for their own
	// workspace's places (NEO_WEB_ADMINS).
	Admins []string
	// SlackSignIn lets Slack people sign in to the admin page; nil: only
	// web users may.
	SlackSignIn SlackSignIn
	// DiscordSignIn lets Discord server managers sign in to the admin
	// page, for their servers' places; nil: no Sign in with Discord.
	DiscordSignIn DiscordSignIn
	// PageURL is where browsers reach this listener, such as
	// "https://neo.example.com": Slack sends the admin page's sign-in
	// back there.
	PageURL string
	// AdminSessions keeps the admin page's Slack sign-ins where every
	// instance reads them (the store), so a sign-in on one instance is
	// taken on all, and a sign-out on one ends it on all; nil keeps them
	// in this process's memory.
	AdminSessions AdminSessions
	// Now tells the time (default time.Now).
	Now    func() time.Time
	Logger zerolog.Logger
}

// Pending reads the pending approvals of a platform from the shared store.
type Pending interface {
	// GatesOn returns the pending gates asked on platform.
	GatesOn(ctx context.Context, platform string) ([]core.Gate, error)
}

// Connector is where a connect link's sign-in goes on once the chat page
// knows who opened it: SignedIn returns the URL the browser goes to next,
// or an error written for the person.
type Connector interface {
	SignedIn(ctx context.Context, state, user string) (string, error)
}

// Adapter serves the web API and chat page. Its Reporter and Approver are
// for the hub.
type Adapter struct {
	opts   Options
	auth   *auth
	feed   *feed
	intake intake.Intake
	mux    *http.ServeMux
	log    zerolog.Logger

	listening atomic.Bool
	created   createdSet
	pending   pendingGates
	files     Files         // uploads and tools' files: Options.Files, or mem
	mem       *memFiles     // files in memory when Options.Files is nil
	stopping  sync.Map      // conversation ID -> true: its owner pressed Stop in the running turn
	unechoed  sync.Map      // event ID -> messageData: a message taken here, not shown yet (echo)
	sessions  AdminSessions // the admin page's Slack sign-ins: Options.AdminSessions, or memory
	notes     chan []byte   // for the other instances (tell), sent by Run
	dropped   atomic.Int64  // notes the relay could not take (tell)
}

// New checks opts and builds the adapter.
func New(opts Options) (*Adapter, error) {
	if opts.Hub == nil || opts.History == nil {
		return nil, errors.New("web: Options.Hub and Options.History are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	for _, id := range opts.Admins {
		if !userRe.MatchString(id) && !slackPersonRe.MatchString(id) {
			return nil, fmt.Errorf("web: admin %q is neither a web user name nor a Slack person written slack:T0123/U0456 (NEO_WEB_ADMINS)", clip(id))
		}
	}
	a := &Adapter{
		opts: opts, auth: newAuth(opts.Users, opts.Now), feed: newFeed(opts.Now(), opts.FeedBytes, opts.FeedConversationBytes),
		intake: intake.Intake{Hub: opts.Hub, Stops: opts.Gates, Limits: intake.Limits{MaxText: opts.MaxText, Quota: opts.Quota}, Log: opts.Logger},
		log:    opts.Logger, created: createdSet{m: map[string]createdConv{}}, pending: pendingGates{m: map[string]core.Gate{}},
	}
	a.sessions = opts.AdminSessions
	if a.sessions == nil {
		a.sessions = &memSessions{m: map[string]memSession{}, now: opts.Now}
	}
	if opts.Relay != nil {
		a.notes = make(chan []byte, relaying)
		a.feed.cluster = true
	}
	a.files = opts.Files
	if a.files == nil {
		a.mem = &memFiles{}
		a.files = a.mem
	}
	a.mux = a.routes()
	return a, nil
}

// Handler is the API and the page, for tests and for mounting elsewhere.
func (a *Adapter) Handler() http.Handler { return a.mux }

// LoginLink returns a one-time link at base that signs user in on the
// chat page.
func (a *Adapter) LoginLink(base, user string) (string, error) {
	if !userRe.MatchString(user) {
		return "", fmt.Errorf("web: %q is not a user name", user)
	}
	code, err := a.auth.loginCode(user)
	if err != nil {
		return "", err
	}
	return base + "/#login=" + code, nil
}

// Connected reports whether the API is listening.
func (a *Adapter) Connected() bool { return a.listening.Load() }

// Run serves on opts.Addr until ctx ends, then shuts the server down,
// ending event streams.
func (a *Adapter) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", a.opts.Addr)
	if err != nil {
		return fmt.Errorf("web: listen on %s: %w", a.opts.Addr, err)
	}
	return a.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends.
func (a *Adapter) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler: a.mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, BaseContext: func(net.Listener) context.Context { return ctx },
	}
	a.listening.Store(true)
	defer a.listening.Store(false)
	if a.opts.Relay != nil {
		relayed := make(chan struct{})
		defer func() { <-relayed }()
		go func() {
			defer close(relayed)
			a.relay(ctx)
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("web: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-errc
	return nil
}

// thread is user's conversation id.
func thread(user, id string) core.Thread {
	return core.Thread{Platform: Platform, Workspace: Workspace, Channel: user, ID: id}
}
