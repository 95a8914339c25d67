package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// runHTTP serves the Events API and interactivity on ListenAddr until ctx
// ends.
func (a *Adapter) runHTTP(ctx context.Context) error {
	return listen(ctx, a.opts.ListenAddr, a.HTTPHandler(), &a.up, a.log)
}

// listen serves h on addr until ctx ends, with up true while it listens.
func listen(ctx context.Context, addr string, h http.Handler, up *atomic.Bool, log zerolog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("slack: listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler: h,
		// Slack sends small bodies promptly and waits three seconds for an
		// answer: anything slower is not Slack, and must not hold a socket.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	up.Store(true)
	defer up.Store(false)
	log.Info().Str("addr", ln.Addr().String()).Msg("slack: listening for events")
	select {
	case err := <-errc:
		return fmt.Errorf("slack: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("slack: shut down the event listener: %w", err)
	}
	<-errc
	return nil
}

// maxRequestBytes bounds an HTTP-mode request body.
const maxRequestBytes = 1 << 20

// HTTPHandler returns the HTTP Events API endpoint: it verifies Slack's
// signature (401 on a bad one or a timestamp more than five minutes off),
// answers url_verification, acks events and interactions with 200 at once
// and handles them as Socket Mode does. Run serves it in HTTP mode; it is
// exported for mounting elsewhere and for tests. Both /slack/events and
// /slack/interactive are served, and either path accepts either kind.
func (a *Adapter) HTTPHandler() http.Handler {
	return http.HandlerFunc(a.serveHTTP)
}

func (a *Adapter) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := readSigned(w, r, a.opts.SigningSecret, &a.refusals, a.log)
	if !ok {
		return
	}
	if c, ok := parseCommand(body); ok && isForm(r) {
		a.serveCommand(w, r, c)
		return
	}
	if isForm(r) {
		a.serveInteraction(w, r, body)
		return
	}
	var probe struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if probe.Type == slackevents.URLVerification {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, probe.Challenge)
		return
	}
	a.serveEvent(w, r, body)
}

// isForm reports whether r carries an interaction (a form) rather than an
// event (JSON).
func isForm(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
}

// readSigned reads a POSTed body and checks Slack signed it with secret;
// otherwise it answers the request itself (logging refusals at most as
// often as refusals allows) and returns false.
func readSigned(w http.ResponseWriter, r *http.Request, secret string, refusals *logEvery, log zerolog.Logger) ([]byte, bool) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return nil, false
	}
	if err := verify(r.Header, body, secret); err != nil {
		if n, ok := refusals.Allow(time.Now()); ok {
			log.Warn().Err(err).Str("remote", r.RemoteAddr).Int("suppressed", n).Msg("slack: refused an unsigned or stale request")
		}
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// serveEvent handles a signed event callback.
func (a *Adapter) serveEvent(w http.ResponseWriter, r *http.Request, body []byte) {
	ev, err := parseCallback(body)
	if err != nil {
		// Acked anyway: Slack would only retry an event we cannot read.
		a.log.Warn().Err(err).Msg("slack: unreadable event")
		w.WriteHeader(http.StatusOK)
		return
	}
	// Answered once the message is journaled, so a crash before the
	// journal leaves Slack to deliver it again; Slack waits three seconds.
	journaled := make(chan struct{})
	var once sync.Once
	a.onEvent(ev, r.Header.Get("X-Slack-Retry-Num") != "", func() { once.Do(func() { close(journaled) }) })
	if !a.waitRecorded(r, journaled, "an event") {
		return
	}
	w.WriteHeader(http.StatusOK)
}

// httpAckWait bounds how long an HTTP-mode event waits for its journal
// before it is answered anyway, within Slack's three seconds.
const httpAckWait = 2500 * time.Millisecond

func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := parseForm(body)
	if err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form), &cb); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if isFormSubmission(cb) {
		// The response is the answer: it closes the modal or shows what
		// to fix.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if p := a.formAck(cb); p != nil {
			_, _ = w.Write(p)
		}
		return
	}
	// Answered once the click is recorded, as an event is once journaled:
	// a crash before leaves the click unanswered, and Slack shows the
	// person it failed instead of a success that did nothing.
	recorded := make(chan struct{})
	var once sync.Once
	a.onInteraction(cb, func() { once.Do(func() { close(recorded) }) })
	if !a.waitRecorded(r, recorded, "an interaction") {
		return
	}
	w.WriteHeader(http.StatusOK)
}

// waitRecorded waits until done is closed, for at most httpAckWait (Slack
// gives three seconds), and says whether the request is still worth
// answering.
func (a *Adapter) waitRecorded(r *http.Request, done <-chan struct{}, what string) bool {
	t := time.NewTimer(httpAckWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		a.log.Warn().Msgf("slack: answered %s before it was recorded; the store is slow", what)
	case <-r.Context().Done():
		return false
	}
	return true
}

// verify checks the request's signature and timestamp.
func verify(h http.Header, body []byte, secret string) error {
	sv, err := slack.NewSecretsVerifier(h, secret)
	if err != nil {
		return fmt.Errorf("slack: verify request: %w", err)
	}
	if _, err := sv.Write(body); err != nil {
		return fmt.Errorf("slack: verify request: %w", err)
	}
	if err := sv.Ensure(); err != nil {
		return fmt.Errorf("slack: verify request: %w", err)
	}
	return nil
}

// parseForm returns the payload field of an interaction's form body.
func parseForm(body []byte) (string, error) {
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return "", err
	}
	p := v.Get("payload")
	if p == "" {
		return "", errors.New("no payload")
	}
	return p, nil
}

// parseTS converts a Slack timestamp ("1700000000.000100") to a time.
func parseTS(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000)
}

// logEvery lets a repeated log line through at most once per interval,
// counting what it held back: a flood of forged requests must not become
// a flood of log lines.
type logEvery struct {
	interval time.Duration

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// Allow reports whether to log now, and how many lines were held back
// since the last one logged.
func (l *logEvery) Allow(now time.Time) (suppressed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < l.interval {
		l.suppressed++
		return 0, false
	}
	l.last, suppressed, l.suppressed = now, l.suppressed, 0
	return suppressed, true
}

// CheckToken asks Slack (auth.test at apiURL) whether the bot token works,
// for `neobot check --live`, and returns the team and bot user it is for.
// A refused token's error is Slack's own code (invalid_auth,
// token_revoked…).
func CheckToken(ctx context.Context, token, apiURL string) (team, user string, err error) {
	auth, err := slack.New(token, slack.OptionAPIURL(apiURL)).AuthTestContext(ctx)
	if err != nil {
		return "", "", err
	}
	return auth.TeamID, auth.UserID, nil
}
