// Package slack puts Neo in Slack: channels (on a mention, answered in a
// thread), threads it is part of, DMs and the assistant pane.
//
// It is the only package that imports slack-go. Events arrive over Socket
// Mode (the default: an xapp- app token and an xoxb- bot token, no public
// URL) or the HTTP Events API (signed requests to [Adapter.HTTPHandler]);
// both feed the same handlers, which ack every envelope at once, drop
// retries by event_id, and hand a core.Inbound to the conversation hub off
// the socket's reader. Neo speaks back through [Adapter.Reporter] and asks
// for approvals through [Adapter.Approver], whose Block Kit buttons are
// answered by clicks handled here. Every Web API call honours 429
// Retry-After.
package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/adapters/internal/recent"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/adapters/internal/work"
	"github.com/neobot/neobot/core"
)

// Platform is the core.Thread platform of every Slack thread.
const Platform = "slack"

// Connection modes.
const (
	ModeSocket = "socket"
	ModeHTTP   = "http"
)

// DefaultAPIURL is Slack's Web API base URL.
const DefaultAPIURL = "https://slack.com/api/"

// Limits are what the operator lets through: the allowlists, the text and
// attachment caps, and each person's share.
type Limits = intake.Limits

// Options configures [New].
type Options struct {
	// BotToken is the xoxb- bot token (SLACK_BOT_TOKEN).
	BotToken string
	// AppToken is the xapp- app-level token with connections:write
	// (SLACK_APP_TOKEN), required in Socket Mode.
	AppToken string
	// SigningSecret verifies HTTP-mode requests (SLACK_SIGNING_SECRET),
	// required in HTTP mode.
	SigningSecret string
	// APIURL is the Web API base URL (SLACK_API_URL; default
	// https://slack.com/api/), for GovSlack, proxies and tests.
	APIURL string
	// Mode is ModeSocket (default) or ModeHTTP.
	Mode string
	// ListenAddr is where HTTP mode listens (default ":3000"); Slack POSTs
	// events to /slack/events and interactions to /slack/interactive.
	ListenAddr string

	// Hub receives inbound messages. Required.
	Hub intake.Submitter
	// Threads knows the threads Neo is part of; nil means only mentions
	// and DMs reach Neo.
	Threads intake.Threads
	// Gates keeps approval gates; nil means every approval is denied.
	Gates *core.Gates
	// Approvers are Slack user IDs who may answer any gate besides the
	// user who started the turn.
	Approvers []string
	// Limits are the allowlists (channel and user IDs), the text and
	// attachment caps and each person's share.
	Limits
	// AllowBots lets other bots' messages reach Neo (default: ignored).
	AllowBots bool
	// Home is what each person's Home tab is read from; its Skills also
	// give the assistant pane its suggested prompts (the skill of direct
	// messages; nil offers skill.DefaultPrompts).
	Home
	// Rater records the ratings of the feedback buttons under every
	// answer; nil shows no buttons.
	Rater core.Rater
	// StatusInterval is the least time between two edits of a thread's
	// status message (default 1 s, within chat.update's rate tier).
	StatusInterval time.Duration

	// ClientID and ClientSecret are the app's OAuth credentials
	// (SLACK_CLIENT_ID, SLACK_CLIENT_SECRET), and RedirectURL the public
	// address of the install callback (SLACK_REDIRECT_URL): with them,
	// anyone may add Neo to their workspace ([NewWorkspaces]).
	ClientID, ClientSecret, RedirectURL string
	// AuthorizeURL is Slack's authorize page (DefaultAuthorizeURL), for
	// tests.
	AuthorizeURL string
	// Installs keeps each workspace's installation, sealed with
	// SecretKey (NEO_SECRET_KEY, 32 bytes); [NewWorkspaces] needs both.
	Installs  Installs
	SecretKey []byte

	Logger     zerolog.Logger
	HTTPClient *http.Client
}

// Adapter connects Neo to one Slack app. Its Reporter and Approver may be
// used before Run starts (a hub resuming turns after a restart).
type Adapter struct {
	opts Options
	api  *slack.Client
	log  zerolog.Logger

	self atomic.Pointer[identity]
	up   atomic.Bool // connected: socket open, or HTTP mode listening
	// routed is an adapter serving one installation of a distributed app
	// ([Workspaces]): its events come through the Workspaces' listener,
	// and an org-wide installation's serve every workspace of the org.
	routed bool
	// serving is held (read) by each request a routed adapter handles, and
	// taken for good once its Run ends, so no request queues work after
	// Run has waited for it; retired is set then.
	serving sync.RWMutex
	retired bool
	// silence is how long a Socket Mode connection may stay silent before
	// it is replaced (socketSilence; tests shorten it).
	silence time.Duration
	// retryWait is the wait before reconnecting after n failed attempts
	// in a row (socketBackoff; tests watch it).
	retryWait func(n int) time.Duration
	seen      *recent.Keys
	// kinds is what each channel is, as message events and
	// conversations.info say: "channel", "group", "mpim" or "im".
	kinds *recent.Values[string]
	// names are channel names conversations.info told ("" when it would
	// not), for saying what a person has open.
	names *recent.Values[string]
	// viewing is what each person has open, by workspace and user
	// (viewingKey), as the agent view last said.
	viewing *recent.Values[appContext]
	// homeNotes hold, per workspace and user, the sentence their next
	// Home tab opens with (homeKey).
	homeNotes *recent.Values[string]
	intake    *intake.Intake
	// refusals rate-limits the log line for unsigned HTTP requests.
	refusals logEvery
	// kindFailures rate-limits the log line for a channel whose kind
	// conversations.info would not tell (a missing scope, most often).
	kindFailures logEvery
	lines        *statusline.Lines[learned] // per-thread status messages; owns their timers
	steps        stepBoards                 // per-thread task cards of a turn's tool calls

	work *work.Group // goroutines handling events and clicks, the per-thread queues, Run's end
	// inflight holds the events queued for the journal and not acked
	// yet, each with a channel closed once it is (see onEvent).
	inflightMu sync.Mutex
	inflight   map[string]chan struct{}
	answers    sync.Pool // *bytes.Buffer: chat calls read Slack's answers into them
}

// identity is the bot as auth.test describes it.
type identity struct {
	UserID, BotID, TeamID string
	// Enterprise is the Enterprise Grid organization of the token's
	// workspace (or of an org-wide installation), "" outside one.
	Enterprise string
	// URL is the workspace's web address ("https://acme.slack.com/"),
	// for links to threads.
	URL string
}

// BotToken returns SLACK_BOT_TOKEN for Web API calls made about
// workspace team elsewhere (the admin page's users.info): the one
// workspace's token, [ErrNotInstalled] for another workspace once Run
// has learned its own (auth.test).
func (a *Adapter) BotToken(_ context.Context, team string) (string, error) {
	if self := a.self.Load(); team == "" || self != nil && self.TeamID != team {
		return "", ErrNotInstalled
	}
	return a.opts.BotToken, nil
}

// New validates opts and returns an Adapter; nothing is contacted before Run.
func New(opts Options) (*Adapter, error) {
	if opts.Mode == "" {
		opts.Mode = ModeSocket
	}
	switch {
	case !strings.HasPrefix(opts.BotToken, "xoxb-"):
		return nil, errors.New("slack: SLACK_BOT_TOKEN must be set to the app's bot token (xoxb-…, under OAuth & Permissions)")
	case opts.Mode == ModeSocket && !strings.HasPrefix(opts.AppToken, "xapp-"):
		return nil, errors.New("slack: Socket Mode needs SLACK_APP_TOKEN, an app-level token (xapp-…) with connections:write, under Basic Information")
	case opts.Mode == ModeHTTP && opts.SigningSecret == "":
		return nil, errors.New("slack: HTTP mode needs SLACK_SIGNING_SECRET (Basic Information > App Credentials)")
	case opts.Mode != ModeSocket && opts.Mode != ModeHTTP:
		return nil, fmt.Errorf("slack: mode %q: want %q or %q", opts.Mode, ModeSocket, ModeHTTP)
	case opts.Hub == nil:
		return nil, errors.New("slack: Options.Hub is required")
	}
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(opts.APIURL, "/") {
		opts.APIURL += "/"
	}
	if opts.ListenAddr == "" {
		opts.ListenAddr = ":3000"
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = intake.DefaultMaxFileBytes
	}
	if opts.StatusInterval <= 0 {
		opts.StatusInterval = time.Second
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	sopts := []slack.Option{slack.OptionAPIURL(opts.APIURL), slack.OptionHTTPClient(opts.HTTPClient)}
	if opts.AppToken != "" {
		sopts = append(sopts, slack.OptionAppLevelToken(opts.AppToken))
	}
	a := &Adapter{
		opts:      opts,
		api:       slack.New(opts.BotToken, sopts...),
		log:       opts.Logger,
		silence:   socketSilence,
		retryWait: socketBackoff,
		seen:      recent.New(8192),
		kinds:     recent.NewValues[string](4096),
		names:     recent.NewValues[string](4096),
		viewing:   recent.NewValues[appContext](4096),
		homeNotes: recent.NewValues[string](1024),
		work:      work.New(),
		inflight:  map[string]chan struct{}{},
	}
	a.refusals.interval = 10 * time.Second
	a.kindFailures.interval = time.Minute
	a.intake = &intake.Intake{Hub: opts.Hub, Threads: opts.Threads, Stops: opts.Gates, Limits: opts.Limits, Log: opts.Logger}
	a.lines = newStatusLines(a)
	a.steps = stepBoards{Interval: opts.StatusInterval, Timeout: submitTimeout, Failed: func(thread string, err error) {
		a.log.Warn().Err(err).Str("thread", thread).Msg("slack: show steps")
	}}
	return a, nil
}

// Run connects to Slack and handles events until ctx ends, then waits for
// the messages it accepted to reach the hub. It returns nil on ctx's end,
// or the error that stopped it (a revoked token, a port in use).
func (a *Adapter) Run(ctx context.Context) error {
	// Turns outlive Run (the hub's shutdown grace): from its end a
	// throttled status schedules no flush nobody would wait for.
	defer a.work.Run(ctx, a.lines.Close)()
	defer a.up.Store(false)

	var auth *slack.AuthTestResponse
	err := a.retry(ctx, "auth.test", func(ctx context.Context) (err error) {
		auth, err = a.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("slack: check the bot token: %w", err)
	}
	a.self.Store(&identity{UserID: auth.UserID, BotID: auth.BotID, TeamID: cmp.Or(auth.TeamID, a.me().TeamID), Enterprise: auth.EnterpriseID, URL: auth.URL})
	a.log.Info().Str("team", auth.TeamID).Str("bot_user", auth.UserID).Str("mode", a.opts.Mode).Msg("slack: connected")

	if a.routed {
		a.up.Store(true)
		<-ctx.Done()
		a.serving.Lock()
		a.retired = true
		a.serving.Unlock()
		return nil
	}
	if a.opts.Mode == ModeHTTP {
		return a.runHTTP(ctx)
	}
	return a.runSocket(ctx)
}

// Connected reports whether Slack can reach Neo now: the Socket Mode
// connection is open, or HTTP mode is listening. It is false before Run,
// while reconnecting, and after Run returns.
func (a *Adapter) Connected() bool { return a.up.Load() }

// me returns the bot's identity, zero before Run has called auth.test.
func (a *Adapter) me() identity {
	if p := a.self.Load(); p != nil {
		return *p
	}
	return identity{}
}

// retry calls fn until it succeeds, fails with anything but a rate limit,
// or has been rate limited maxRateRetries times; it waits the Retry-After
// Slack asked for between attempts.
func (a *Adapter) retry(ctx context.Context, method string, fn func(ctx context.Context) error) error {
	const maxRateRetries = 5
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		rl, ok := errors.AsType[*slack.RateLimitedError](err)
		if !ok || attempt >= maxRateRetries {
			return fmt.Errorf("slack: %s: %w", method, err)
		}
		wait := min(rl.RetryAfter, 5*time.Minute)
		a.log.Debug().Str("method", method).Dur("retry_after_ms", wait).Msg("slack: rate limited")
		if !sleepCtx(ctx, wait) {
			return fmt.Errorf("slack: %s: %w", method, ctx.Err())
		}
	}
}
