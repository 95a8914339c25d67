package delegate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
)

// Defaults for [Options].
const (
	DefaultPollInterval = 1500 * time.Millisecond
	DefaultMaxWait      = 30 * time.Minute
	DefaultTimeout      = 30 * time.Second
)

// Ledger records delegations in flight so a restart finds them again. The
// store package implements it.
type Ledger interface {
	SaveDelegation(ctx context.Context, d core.Delegation) error
	// DelegationFor returns the delegation in flight for the thread's tool
	// call, or core.ErrNotFound.
	DelegationFor(ctx context.Context, t core.Thread, callID string) (core.Delegation, error)
	FinishDelegation(ctx context.Context, t core.Thread, callID string) error
	// Delegations returns every delegation in flight.
	Delegations(ctx context.Context) ([]core.Delegation, error)
}

// Options configures [New].
type Options struct {
	// BaseURL is the daemon's address (NEO_DAEMON_URL), e.g.
	// http://127.0.0.1:8080. Required.
	BaseURL string
	// Token is sent as "Authorization: Bearer <Token>" (NEO_DAEMON_TOKEN).
	Token string
	// CallerDID and CallerWallet identify who the daemon acts for; sent as
	// X-Caller-DID / X-Caller-Wallet headers and in the submit body.
	CallerDID    string
	CallerWallet string
	// Skill, when set, asks the daemon for a specific skill (submit body).
	Skill string
	// Approver decides gates when ctx carries no core.Turn (or one without
	// an approver). Nil denies every gate.
	Approver core.Approver
	// PlaceApprovers, when set, names the people a turn's place adds to
	// the configured approvers of its gates (its stored settings,
	// skill.Skill.Approvers): core.GateRequest.PlaceApprovers.
	PlaceApprovers func(core.Inbound) []string
	// Authorize, when set, decides whether the turn's requester may ask
	// for a spend at all (core.SpendPolicy.Authorize). A refusal is
	// returned to the model as Run's error and nothing reaches the
	// daemon; so is a Run outside any turn, which has no requester.
	Authorize func(core.Inbound) error
	// Notify receives short user-facing progress sentences. When nil, the
	// turn's Reporter.Notice is used, if ctx carries a turn.
	Notify func(ctx context.Context, text string)
	// PollInterval is the wait between polls (default 1.5 s).
	PollInterval time.Duration
	// MaxWait bounds one Run (default 30 minutes).
	MaxWait time.Duration
	// Timeout bounds one HTTP request (default 30 s).
	Timeout time.Duration
	// Ledger records delegations for the restart path; nil disables it.
	Ledger Ledger
	// HTTPClient sends the requests (default a new http.Client).
	HTTPClient *http.Client
	// Logger receives diagnostics; the zero value is silent.
	Logger zerolog.Logger
	// Now is the clock used for MaxWait and Delegation.Started (default
	// time.Now).
	Now func() time.Time
}

// Client runs intents on the execution daemon. It is immutable after New
// and safe for concurrent use; each Run owns the goroutines it starts.
type Client struct {
	base                      string
	token, did, wallet, skill string
	approver                  core.Approver
	placeApprovers            func(core.Inbound) []string
	authorize                 func(core.Inbound) error
	notify                    func(ctx context.Context, text string)
	poll, maxWait, timeout    time.Duration
	ledger                    Ledger
	http                      *http.Client
	log                       zerolog.Logger
	now                       func() time.Time
}

// New returns a Client for the daemon at opts.BaseURL.
func New(opts Options) (*Client, error) {
	if strings.TrimSpace(opts.BaseURL) == "" {
		return nil, errors.New("delegate: no execution daemon URL: set NEO_DAEMON_URL (without it core_execute answers that no daemon is configured)")
	}
	u, err := url.Parse(strings.TrimSpace(opts.BaseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("delegate: NEO_DAEMON_URL %q is not an http(s) URL", opts.BaseURL)
	}
	c := &Client{
		base:           strings.TrimRight(u.String(), "/"),
		token:          opts.Token,
		did:            opts.CallerDID,
		wallet:         opts.CallerWallet,
		skill:          opts.Skill,
		approver:       opts.Approver,
		placeApprovers: opts.PlaceApprovers,
		authorize:      opts.Authorize,
		notify:         opts.Notify,
		poll:           opts.PollInterval,
		maxWait:        opts.MaxWait,
		timeout:        opts.Timeout,
		ledger:         opts.Ledger,
		http:           opts.HTTPClient,
		log:            opts.Logger,
		now:            opts.Now,
	}
	if c.poll <= 0 {
		c.poll = DefaultPollInterval
	}
	if c.maxWait <= 0 {
		c.maxWait = DefaultMaxWait
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// InFlight returns the delegations recorded and not yet finished, for a
// startup log; nil without a Ledger.
func (c *Client) InFlight(ctx context.Context) ([]core.Delegation, error) {
	if c.ledger == nil {
		return nil, nil
	}
	ds, err := c.ledger.Delegations(ctx)
	if err != nil {
		return nil, fmt.Errorf("delegate: list delegations: %w", err)
	}
	return ds, nil
}

// job is what one Run knows about its caller.
type job struct {
	thread    core.Thread
	requester string
	callID    string
	eventID   string // the turn's message: a call ID is the model's and may repeat
	keyed     bool   // durable: a turn and a tool call ID are in ctx
	approver  core.Approver
	// placeApprovers are the people the turn's place adds to the
	// configured approvers.
	placeApprovers []string
	notify         func(ctx context.Context, text string)
}

func (c *Client) jobFor(ctx context.Context) job {
	j := job{approver: c.approver, notify: c.notify}
	if t, ok := core.TurnFrom(ctx); ok {
		j.thread, j.requester = t.Inbound.Thread, t.Inbound.User
		if c.placeApprovers != nil {
			j.placeApprovers = c.placeApprovers(t.Inbound)
		}
		if t.Approver != nil {
			j.approver = t.Approver
		}
		if j.notify == nil && t.Reporter != nil {
			rep := t.Reporter
			j.notify = func(ctx context.Context, text string) { _ = rep.Notice(ctx, text) }
		}
		j.callID, j.eventID = core.ToolCallFrom(ctx), t.Inbound.EventID
		j.keyed = j.callID != "" && c.ledger != nil
	}
	if j.notify == nil {
		j.notify = func(context.Context, string) {}
	}
	return j
}

// Run submits prose to the daemon, or resumes the intent recorded for the
// same turn and tool call, and follows it to an outcome: the daemon's
// answer ("Done" when it gave none) on completion, else an error whose text
// tells the model what happened: *FailedError, ErrCancelled, *ClarifyError,
// ErrTimeout, ErrInterrupted (ctx ended; the delegation stays recorded),
// ErrUnavailable or ErrRefused.
//
// Each pending gate is put to the approver once per node (core.Ask: nil,
// error or cancellation denies) and its answer sent with an idempotency
// key. When a gate leaves the daemon's pending list before it is decided,
// the approver's ctx is cancelled.
func (c *Client) Run(ctx context.Context, prose string) (string, error) {
	prose = strings.TrimSpace(prose)
	if prose == "" {
		return "", fmt.Errorf("%w: core_execute needs a description of what to do", ErrRefused)
	}
	if err := c.authorized(ctx); err != nil {
		return "", err
	}
	j := c.jobFor(ctx)
	intentID, err := c.start(ctx, j, prose)
	if err != nil {
		return "", err
	}
	answer, err := c.follow(ctx, j, intentID)
	stopped := errors.Is(context.Cause(ctx), core.ErrStopped)
	if j.keyed && (!errors.Is(err, ErrInterrupted) || stopped) {
		// The tool call has its outcome, or the user stopped the turn:
		// nothing will resume it. Finishing must not be skipped because
		// the turn's ctx just ended.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
		if ferr := c.ledger.FinishDelegation(fctx, j.thread, j.callID); ferr != nil {
			c.log.Error().Err(ferr).Str("intent", intentID).Msg("delegate: finish delegation")
		}
		cancel()
	}
	return answer, err
}

// authorized applies Options.Authorize to the turn's requester.
func (c *Client) authorized(ctx context.Context) error {
	if c.authorize == nil {
		return nil
	}
	t, ok := core.TurnFrom(ctx)
	if !ok {
		return &core.SpendRefusal{Reason: "asked outside any conversation, with no one to hold responsible", Setting: "a chat platform's *_SPEND_* settings"}
	}
	if err := c.authorize(t.Inbound); err != nil {
		c.log.Info().Str("thread", t.Inbound.Thread.Key()).Str("user", t.Inbound.User).Msg("delegate: spend refused: requester not allowed")
		return err
	}
	return nil
}

// start returns the intent to follow: the one recorded for this tool call,
// or a new submission recorded before polling begins.
func (c *Client) start(ctx context.Context, j job, prose string) (string, error) {
	if j.keyed {
		d, err := c.ledger.DelegationFor(ctx, j.thread, j.callID)
		switch {
		case err == nil && d.IntentID != "" && d.EventID != "" && d.EventID != j.eventID:
			// The model reused a call ID of an earlier turn: this is a
			// new request, submitted and asked about afresh.
		case err == nil && d.IntentID != "":
			c.log.Info().Str("intent", d.IntentID).Str("thread", j.thread.Key()).Msg("delegate: resuming")
			j.notify(ctx, fmt.Sprintf("Resuming the delegated task (intent %s).", d.IntentID))
			return d.IntentID, nil
		case err != nil && !errors.Is(err, core.ErrNotFound):
			return "", &daemonError{
				msg:      "the delegated task was not submitted: its earlier submission could not be checked, so submitting now might run it twice",
				sentinel: ErrUnavailable, cause: fmt.Errorf("delegate: look up delegation: %w", err),
			}
		}
	}
	var idemKey string
	switch {
	case j.callID != "" && j.eventID != "":
		idemKey = "neobot:" + j.thread.Key() + ":" + j.eventID + ":" + j.callID
	case j.callID != "":
		idemKey = "neobot:" + j.thread.Key() + ":" + j.callID
	}
	id, err := c.submit(ctx, idemKey, prose)
	if err != nil {
		return "", c.submitError(ctx, err)
	}
	c.log.Info().Str("intent", id).Str("thread", j.thread.Key()).Msg("delegate: submitted")
	if j.keyed {
		err := c.ledger.SaveDelegation(ctx, core.Delegation{
			Thread: j.thread, CallID: j.callID, EventID: j.eventID, IntentID: id, Prose: prose,
			Requester: j.requester, Started: c.now(),
		})
		if err != nil {
			// The intent runs at the daemon either way: follow it rather than
			// abandon a spend waiting on a gate. Only a restart loses it.
			c.log.Error().Err(err).Str("intent", id).Msg("delegate: save delegation; a restart will not resume it")
		}
	}
	j.notify(ctx, fmt.Sprintf("Sent for execution (request %s). I will post here when it needs an approval or finishes.", id))
	return id, nil
}

func (c *Client) submitError(ctx context.Context, err error) error {
	var he *HTTPError
	switch {
	case errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		return &daemonError{msg: fmt.Sprintf("the execution daemon refused the credentials (HTTP %d), so nothing was submitted; the operator should check NEO_DAEMON_TOKEN", he.Status), sentinel: ErrRefused, cause: err}
	case errors.As(err, &he) && he.Status < 500 && he.Status != http.StatusTooManyRequests:
		return &daemonError{msg: fmt.Sprintf("the execution daemon rejected the task (HTTP %d): %s", he.Status, he.Message), sentinel: ErrRefused, cause: err}
	case errors.As(err, &he):
		return &daemonError{msg: fmt.Sprintf("the execution daemon failed to accept the task (HTTP %d); it may not have been submitted, so check before trying again", he.Status), sentinel: ErrUnavailable, cause: err}
	case notSent(err):
		return &daemonError{msg: "the execution daemon could not be reached, so nothing was submitted; try again later", sentinel: ErrUnavailable, cause: err}
	case ctx.Err() != nil:
		return &daemonError{msg: "the execution daemon did not confirm the submission before the request ended; the task may or may not have been submitted", sentinel: ErrInterrupted, cause: err}
	}
	return &daemonError{msg: "the execution daemon did not confirm the submission; the task may or may not have been submitted, so check before trying again", sentinel: ErrUnavailable, cause: err}
}
