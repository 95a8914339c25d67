// Package discord puts Neo in Discord: a mention in a guild text channel
// starts a conversation in a thread created from that message, messages in
// a thread Neo is part of continue it without a mention, and DMs work.
//
// It is the only package that imports discordgo. Events arrive over the
// gateway; the handlers filter and deduplicate them on the gateway's reader
// and hand a core.Inbound to the conversation hub off it, one message at a
// time per channel, so the reader never waits on a turn. Neo speaks back
// through [Adapter.Reporter] and asks for approvals through
// [Adapter.Approver], whose buttons are answered by interactions handled
// here within Discord's three seconds. discordgo's rate limiter honours
// 429s.
package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/adapters/internal/recent"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/adapters/internal/work"
	"github.com/neobot/neobot/core"
)

// Platform is the core.Thread platform of every Discord thread.
const Platform = "discord"

// DefaultAPIURL is Discord's base URL; REST calls go to its /api/v9/.
const DefaultAPIURL = "https://discord.com"

// DMWorkspace is the Thread.Workspace of direct messages, which belong to
// no guild.
const DMWorkspace = "@me"

// Intents are the gateway intents Neo asks for. MessageContent is
// privileged: it must be enabled for the bot in the Developer Portal.
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentsDirectMessages | discordgo.IntentsMessageContent

// Limits are what the operator lets through: the allowlists, the text and
// attachment caps, and each person's share.
type Limits = intake.Limits

// Options configures [New].
type Options struct {
	// Token is the bot token (DISCORD_BOT_TOKEN), without the "Bot " prefix.
	Token string
	// APIURL is the base for REST and gateway discovery (DISCORD_API_URL;
	// default https://discord.com), for proxies and tests.
	APIURL string

	// Hub receives inbound messages. Required.
	Hub intake.Submitter
	// Threads knows the threads Neo is part of; nil means only mentions,
	// DMs and the threads this process created reach Neo.
	Threads intake.Threads
	// Gates keeps approval gates; nil means every approval is denied.
	Gates *core.Gates
	// Rater records the ratings of the feedback buttons under every
	// answer; nil shows no buttons.
	Rater core.Rater
	// Home is what each person's /neo page is read from.
	Home
	// Approvers may answer any gate besides the user who started the
	// turn: user IDs, and role IDs written "role:<id>".
	Approvers []string
	// Limits are the allowlists (channel and user IDs; a thread counts as
	// its parent channel), the text and attachment caps and each person's
	// share.
	Limits
	// StatusInterval is the least time between two edits of a thread's
	// status message (default 1 s).
	StatusInterval time.Duration

	Logger     zerolog.Logger
	HTTPClient *http.Client
}

// Adapter connects Neo to one Discord bot. Its Reporter and Approver may
// be used before Run starts (a hub resuming turns after a restart).
type Adapter struct {
	opts Options
	s    *discordgo.Session
	log  zerolog.Logger

	self atomic.Pointer[discordgo.User]
	up   atomic.Bool // the gateway session is open
	// registered is set once /neo is registered (registerCommands).
	registered atomic.Bool
	seen       *recent.Keys
	intake     *intake.Intake
	channels   *recent.Values[channelInfo] // what kind each guild channel is
	lines      *statusline.Lines[struct{}] // per-thread status messages; owns their timers
	steps      stepBoards                  // per-thread progress messages of a turn's tool calls
	work       *work.Group                 // goroutines handling messages and clicks, the per-channel queues, Run's end
}

// New validates opts and returns an Adapter; nothing is contacted before Run.
func New(opts Options) (*Adapter, error) {
	opts.Token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(opts.Token), "Bot "))
	switch {
	case opts.Token == "":
		return nil, errors.New("discord: DISCORD_BOT_TOKEN must be set to the bot's token (Developer Portal > your app > Bot > Reset Token)")
	case opts.Hub == nil:
		return nil, errors.New("discord: Options.Hub is required")
	}
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	base, err := url.Parse(strings.TrimSuffix(opts.APIURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("discord: API URL %q is not an http(s) URL", opts.APIURL)
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = intake.DefaultMaxFileBytes
	}
	if opts.StatusInterval <= 0 {
		opts.StatusInterval = time.Second
	}
	client := &http.Client{Timeout: 30 * time.Second}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient // never change the caller's client
		client = &c
	}
	if opts.APIURL != DefaultAPIURL {
		client.Transport = rewriteHost{to: base, next: client.Transport}
	}
	opts.HTTPClient = client

	s, err := discordgo.New("Bot " + opts.Token)
	if err != nil {
		return nil, fmt.Errorf("discord: new session: %w", err)
	}
	s.Client = client
	s.Dialer = &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 30 * time.Second}
	s.Identify.Intents = Intents
	s.SyncEvents = true    // handlers run on the reader, which only queues: order kept per channel
	s.StateEnabled = false // the adapter keeps only what it needs
	s.LogLevel = -1        // discordgo logs through the standard logger; its errors reach us as returns
	s.ShouldReconnectOnError = true

	a := &Adapter{
		opts:     opts,
		s:        s,
		log:      opts.Logger,
		seen:     recent.New(8192),
		channels: recent.NewValues[channelInfo](4096),
		work:     work.New(),
	}
	a.intake = &intake.Intake{Hub: opts.Hub, Threads: opts.Threads, Stops: opts.Gates, Limits: opts.Limits, Log: opts.Logger}
	a.lines = newStatusLines(a)
	a.steps = stepBoards{Interval: opts.StatusInterval, Timeout: submitTimeout, Failed: func(thread string, err error) {
		a.log.Warn().Err(err).Str("thread", thread).Msg("discord: show steps")
	}}
	return a, nil
}

// rewriteHost sends requests for discord.com to another base URL (a proxy,
// a test's fake), leaving other hosts (the attachment CDN) alone.
type rewriteHost struct {
	to   *url.URL
	next http.RoundTripper
}

func (rt rewriteHost) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == "discord.com" {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = rt.to.Scheme, rt.to.Host
		r.URL.Path = strings.TrimSuffix(rt.to.Path, "/") + r.URL.Path
		r.Host = ""
	}
	next := rt.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// Run connects to Discord and handles events until ctx ends, then waits
// for the messages it accepted to reach the hub. It returns nil on ctx's
// end, or the error that stopped it (a revoked token, a missing intent).
func (a *Adapter) Run(ctx context.Context) error {
	// Turns outlive Run (the hub's shutdown grace): from its end a
	// throttled status schedules no flush nobody would wait for.
	defer a.work.Run(ctx, a.lines.Close)()

	me, err := a.s.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("discord: check the bot token (DISCORD_BOT_TOKEN): %w", err)
	}
	a.self.Store(me)
	defer a.s.AddHandler(a.onMessageCreate)()
	defer a.s.AddHandler(a.onInteractionCreate)()
	defer a.s.AddHandler(a.onChannelUpdate)()
	defer a.s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		if r.Application != nil {
			a.registerCommands(r.Application.ID)
		}
	})()
	defer a.s.AddHandler(func(*discordgo.Session, *discordgo.Connect) { a.up.Store(true) })()
	defer a.s.AddHandler(func(*discordgo.Session, *discordgo.Disconnect) { a.up.Store(false) })()
	defer a.up.Store(false)

	if err := a.s.Open(); err != nil {
		if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
			switch ce.Code {
			case 4004:
				return fmt.Errorf("discord: the gateway refused the bot token; check DISCORD_BOT_TOKEN: %w", err)
			case 4014:
				return fmt.Errorf("discord: enable the Message Content intent (Developer Portal > Bot > Privileged Gateway Intents): %w", err)
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("discord: connect to the gateway: %w", err)
	}
	a.up.Store(true)
	a.log.Info().Str("bot_user", me.ID).Str("name", me.Username).Msg("discord: connected")
	<-ctx.Done()
	if err := a.s.Close(); err != nil {
		a.log.Debug().Err(err).Msg("discord: close gateway")
	}
	return nil
}

// Connected reports whether the gateway session is open now: false before
// Run, while discordgo reconnects, and after Run returns.
func (a *Adapter) Connected() bool { return a.up.Load() }

// me returns the bot's user ID, "" before Run has asked.
func (a *Adapter) me() string {
	if u := a.self.Load(); u != nil {
		return u.ID
	}
	return ""
}

// call is the options every REST call carries.
func call(ctx context.Context) discordgo.RequestOption { return discordgo.WithContext(ctx) }
