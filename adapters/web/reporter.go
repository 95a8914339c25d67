package web

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/core"
)

// Reporter returns how Neo speaks in conversation t: every call becomes an
// event on the conversation's stream.
func (a *Adapter) Reporter(t core.Thread) core.Reporter { return reporter{a: a, t: t} }

type reporter struct {
	a *Adapter
	t core.Thread
}

type textData struct {
	Text string `json:"text"`
}

// text publishes an event whose data is {"text": text}.
func (r reporter) text(typ, text string) error {
	r.a.show(r.t.ID, typ, textData{text})
	return nil
}

func (r reporter) Say(ctx context.Context, text string) error {
	r.a.echoTurn(ctx, r.t.ID)
	r.showAnswer(ctx, text)
	return nil
}

func (r reporter) Status(ctx context.Context, text string) error {
	r.a.echoTurn(ctx, r.t.ID)
	return r.text(EventStatus, text)
}

func (r reporter) Notice(ctx context.Context, text string) error {
	r.a.echoTurn(ctx, r.t.ID)
	return r.text(EventNotice, text)
}

// StreamAnswer streams the answer as answer.delta events, then the final
// text as one answer event.
func (r reporter) StreamAnswer(ctx context.Context) (core.AnswerStream, error) {
	r.a.echoTurn(ctx, r.t.ID)
	return &answer{r: r}, nil
}

// answer is one streamed answer; it keeps the words written so far, so a
// Stop can leave them on the page.
type answer struct {
	r       reporter
	written strings.Builder
}

func (s *answer) Write(_ context.Context, text string) error {
	s.written.WriteString(text)
	return s.r.text(EventAnswerDelta, text)
}

func (s *answer) Close(ctx context.Context, final string) error {
	s.r.showAnswer(ctx, final)
	return nil
}

// Abort takes the words back, unless the conversation's owner pressed
// Stop: then they stay, marked stopped (answer.stopped), and are stored
// (StoppedKeeper) so a reload shows them too.
func (s *answer) Abort(ctx context.Context) error {
	if _, stopped := s.r.a.stopping.LoadAndDelete(s.r.t.ID); stopped {
		words := s.written.String()
		if k, ok := s.r.a.opts.History.(StoppedKeeper); ok && strings.TrimSpace(words) != "" {
			if err := k.KeepStopped(ctx, s.r.t, words); err != nil {
				s.r.a.log.Warn().Err(err).Str("thread", s.r.t.Key()).Msg("web: store the words of a stopped answer; a reload will not show them")
			}
		}
		s.r.a.show(s.r.t.ID, EventAnswerStopped, textData{words})
		return nil
	}
	s.r.a.show(s.r.t.ID, EventAnswerRetract, struct{}{})
	return nil
}

// Approver returns the approver for turns in conversation t started by
// requester: the shared gates, shown as gate.invoked events and answered
// at POST /v1/gates/{token}/answer.
func (a *Adapter) Approver(t core.Thread, requester string) core.Approver {
	return a.opts.Gates.Approver(t, requester, a.opts.Approvers, gateUI{a})
}

type gateUI struct{ a *Adapter }

// gateData is an approval as the event stream shows it.
type gateData struct {
	Token     string    `json:"token"`
	Question  string    `json:"question"`
	Options   []string  `json:"options"`
	Approving []bool    `json:"approving"` // which options approve (core.Option.Approves)
	Requester string    `json:"requester"`
	Expires   time.Time `json:"expires"`
	// Conversation is the conversation the approval is asked in.
	Conversation string `json:"conversation"`
	// Tier, Need, Approvals and Progress are set under an approval
	// policy's tier: how many distinct people must approve, who has.
	Tier      string   `json:"tier,omitempty"`
	Need      int      `json:"need,omitempty"`
	Approvals []string `json:"approvals,omitempty"`
	Progress  string   `json:"progress,omitempty"`
}

// updatedData is a pending approval's progress under a quorum.
type updatedData struct {
	Token     string   `json:"token"`
	Progress  string   `json:"progress"`
	Approvals []string `json:"approvals"`
	Need      int      `json:"need"`
}

// shownGate is g as the event stream and the approvals list show it.
func shownGate(g core.Gate) gateData {
	d := gateData{Token: g.Token, Question: g.Question, Options: core.Labels(g.Options), Requester: g.Requester, Expires: g.Expires,
		Conversation: g.Thread.ID, Tier: g.Tier, Need: g.Need, Approvals: g.Approvals(), Progress: mention.ReplaceAllString(g.Progress(), "@$1")}
	for _, o := range g.Options {
		d.Approving = append(d.Approving, o.Approves)
	}
	return d
}

type decidedData struct {
	Token  string `json:"token"`
	State  string `json:"state"`
	Answer string `json:"answer,omitempty"`
	By     string `json:"by,omitempty"`
}

// PostGate shows g on the conversation's stream and lists it for the
// approvers (GET /v1/approvals). It records no message reference: the
// web's events live in memory, so a turn resumed after a restart finds
// none and posts the gate again, and the people reloading the page see it.
func (u gateUI) PostGate(_ context.Context, g core.Gate) (string, error) {
	if g.Form != nil {
		u.a.postQuestion(g)
		return "", nil
	}
	d := shownGate(g)
	u.a.pending.add(g)
	u.a.show(g.Thread.ID, EventGateInvoked, d)
	return "", nil
}

func (u gateUI) ShowGate(_ context.Context, g core.Gate) { u.a.showGate(g) }

// NotifyGate shows text in the conversation as a notice, and lists the
// gate anew for its approvers, who may have changed (an escalation): the
// approvals list (GET /v1/approvals) is the web's copy for each of them.
func (u gateUI) NotifyGate(_ context.Context, g core.Gate, text string, _ []string) []string {
	if g.State == core.GatePending {
		u.a.pending.update(g)
	}
	if text != "" {
		u.a.show(g.Thread.ID, EventNotice, map[string]string{"text": mention.ReplaceAllString(text, "@$1")})
	}
	return nil
}

// showGate shows g's outcome, or a pending gate's progress under a
// quorum, on its conversation's stream and in the approvals list.
func (a *Adapter) showGate(g core.Gate) {
	if g.State == core.GatePending {
		a.pending.update(g)
		d := shownGate(g)
		a.show(g.Thread.ID, EventGateUpdated, updatedData{Token: g.Token, Progress: d.Progress, Approvals: d.Approvals, Need: g.Needs()})
		return
	}
	a.pending.remove(g.Token)
	a.show(g.Thread.ID, EventGateDecided, decidedData{Token: g.Token, State: string(g.State), Answer: g.Answer, By: g.DecidedBy})
}

// pendingGates are the approvals posted on the web and not yet decided,
// for the approvers who cannot read the conversations they are in.
type pendingGates struct {
	mu sync.Mutex
	m  map[string]core.Gate // token -> gate
}

func (p *pendingGates) add(g core.Gate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= maxConversations {
		for k := range p.m { // an expired one, most likely: they are not reaped otherwise
			delete(p.m, k)
			break
		}
	}
	p.m[g.Token] = g
}

// update replaces a listed gate with g, as stored now.
func (p *pendingGates) update(g core.Gate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.m[g.Token]; ok {
		p.m[g.Token] = g
	}
}

func (p *pendingGates) remove(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, token)
}

// open returns the listed gates still open at now, forgetting the others.
func (p *pendingGates) open(now time.Time) []core.Gate {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []core.Gate
	for token, g := range p.m {
		if !g.Open(now) {
			delete(p.m, token)
			continue
		}
		out = append(out, g)
	}
	return out
}

// intakePlatform is the adapter as the intake sees one HTTP request.
type intakePlatform struct{ a *Adapter }

func (p intakePlatform) Refuse(_ context.Context, m intake.Message, text string) {
	if m.Denial.Denied() {
		return // the 429 says it; the stream is not a place for a flood's echo
	}
	p.a.show(m.Inbound.Thread.ID, EventNotice, textData{text})
}

func (p intakePlatform) Place(_ context.Context, m intake.Message) core.Thread {
	return m.Inbound.Thread
}

func (p intakePlatform) Reply(_ context.Context, t core.Thread, text string) error {
	p.a.show(t.ID, EventNotice, textData{text})
	return nil
}

// Forget has nothing to forget: the hub's journal is the web's only
// duplicate filter (an idempotency key becomes the event ID).
func (p intakePlatform) Forget(string) {}
