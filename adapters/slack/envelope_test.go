package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
)

// TestMalformedEnvelopeStorm: envelopes slack-go cannot read, events
// missing their channel, author or ts, and events for another workspace
// are each acked, never answered, and do not stop Neo answering the valid
// mentions between them.
func TestMalformedEnvelopeStorm(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	callback := func(eventID, team string, event any) json.RawMessage {
		body := map[string]any{"token": slacktest.VerificationToken, "team_id": team, "api_app_id": slacktest.AppID,
			"type": "event_callback", "event_id": eventID, "event_time": 1700000000}
		if event != nil {
			body["event"] = event
		}
		raw, _ := json.Marshal(body)
		return raw
	}
	mention := func(fields map[string]any) map[string]any {
		ev := map[string]any{"type": "app_mention", "user": "UALICE", "text": "<@" + slacktest.BotUserID + "> hi",
			"ts": "1700000001.000100", "channel": "C0GENERAL", "event_ts": "1700000001.000100"}
		for k, v := range fields {
			if v == nil {
				delete(ev, k)
			} else {
				ev[k] = v
			}
		}
		return ev
	}
	bad := []struct {
		name, typ string
		payload   json.RawMessage
	}{
		{"callback without an event", "events_api", callback("EvBad1", slacktest.TeamID, nil)},
		{"unknown inner event type", "events_api", callback("EvBad2", slacktest.TeamID, map[string]any{"type": "no_such_event", "x": 1})},
		{"field of the wrong type", "events_api", callback("EvBad3", slacktest.TeamID, mention(map[string]any{"user": 42, "ts": true}))},
		{"not JSON at all", "events_api", json.RawMessage(`"just a string"`)},
		{"interactive payload of the wrong shape", "interactive", json.RawMessage(`{"type":"block_actions","actions":"nope","user":7}`)},
		{"mention missing its channel", "events_api", callback("EvBad4", slacktest.TeamID, mention(map[string]any{"channel": nil}))},
		{"mention missing its author", "events_api", callback("EvBad5", slacktest.TeamID, mention(map[string]any{"user": nil}))},
		{"mention missing its ts", "events_api", callback("EvBad6", slacktest.TeamID, mention(map[string]any{"ts": nil}))},
		{"mention for another workspace", "events_api", callback("EvBad7", "T0OTHER", mention(nil))},
	}
	var deliveries []slacktest.Delivery
	var valid []slacktest.Delivery
	for round := range 3 {
		for _, b := range bad {
			deliveries = append(deliveries, e.slack.Raw(b.typ, b.payload))
		}
		d := e.slack.Mention(slacktest.Msg{User: "UBOB", Text: fmt.Sprintf("valid %d", round)})
		deliveries = append(deliveries, d)
		valid = append(valid, d)
	}
	for _, d := range deliveries {
		e.ack(d)
	}
	for i, d := range valid {
		e.botReply("C0GENERAL", d.TS, fmt.Sprintf("echo: valid %d", i))
	}
	e.idle()
	e.hub.WaitTurns(t)
	for _, m := range e.slack.Messages() {
		if m.FromBot() && !strings.HasPrefix(m.Rendered(), "echo: valid") {
			t.Errorf("bot posted %q (in %s/%s), want nothing for a malformed envelope", m.Rendered(), m.Channel, m.ThreadTS)
		}
	}
	if n := len(e.hub.Journaled()); n != len(valid) {
		t.Errorf("hub took %d messages, want only the %d valid mentions", n, len(valid))
	}
}

// gatedHub holds every Submit until released, as a slow disk would.
type gatedHub struct {
	*intaketest.Hub
	entered chan struct{}
	release chan struct{}
}

func (g gatedHub) Submit(ctx context.Context, in core.Inbound) (bool, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.Hub.Submit(ctx, in)
}

// TestAckAfterJournal: Slack hears the ack only once the message is
// journaled, so a crash before the journal leaves Slack to send it again.
func TestAckAfterJournal(t *testing.T) {
	g := gatedHub{Hub: intaketest.NewHub(intaketest.NewThreads()), entered: make(chan struct{}), release: make(chan struct{})}
	e := start(t, func(o *Options) { o.Hub = g })
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hello"})
	<-g.entered
	if _, acked := e.slack.Acks()[d.EnvelopeID]; acked {
		t.Error("envelope acked while its message was still being journaled")
	}
	close(g.release)
	e.ack(d)
	if in := g.Wait(e.ctx, t, 1); in.Text != "hello" {
		t.Errorf("journaled %q, want hello", in.Text)
	}
}

// panickyHub panics on its first Submit, as a bug deep in a turn's intake
// would.
type panickyHub struct {
	*intaketest.Hub
	panicked *atomic.Bool
}

func (p panickyHub) Submit(ctx context.Context, in core.Inbound) (bool, error) {
	if p.panicked.CompareAndSwap(false, true) {
		panic("boom")
	}
	return p.Hub.Submit(ctx, in)
}

// TestHandlerPanicIsContained: a panic while taking one message is logged
// and contained; its envelope is still acked and Neo goes on answering.
func TestHandlerPanicIsContained(t *testing.T) {
	hub := panickyHub{Hub: intaketest.NewHub(intaketest.NewThreads()), panicked: new(atomic.Bool)}
	e := start(t, func(o *Options) { o.Hub = hub })
	first := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "first"})
	e.ack(first)
	second := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "second"})
	e.ack(second)
	if in := hub.Wait(e.ctx, t, 1); in.Text != "second" {
		t.Errorf("hub took %q, want the message after the panic", in.Text)
	}
}
