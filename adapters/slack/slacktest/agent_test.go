package slacktest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// TestAgentViewEvents: an agent-view fake delivers app_home_opened and
// app_context_changed as Slack documents them, stamps the author's
// context on their DMs, and ignores prompts set on a thread, as Slack
// does for agent apps; an assistant-view fake refuses to deliver
// app_context_changed, an agent-view one assistant_thread_started.
func TestAgentViewEvents(t *testing.T) {
	s := New(t)
	s.SetExperience(AgentView)
	home := s.AppHomeOpened("U1", "D1", "messages")
	var cb struct {
		Event struct {
			Type, User, Channel, Tab string
			Context                  json.RawMessage
		}
	}
	if err := json.Unmarshal(home.Payload, &cb); err != nil {
		t.Fatal(err)
	}
	if cb.Event.Type != "app_home_opened" || cb.Event.Tab != "messages" || cb.Event.User != "U1" || cb.Event.Channel != "D1" || string(cb.Event.Context) != "{}" {
		t.Errorf("app_home_opened = %+v, want tab messages for U1 in D1 with an empty context", cb.Event)
	}
	ev, err := slackevents.ParseEvent(home.Payload, slackevents.OptionNoVerifyToken())
	if err != nil || ev.InnerEvent.Type != "app_home_opened" {
		t.Errorf("slack-go reads app_home_opened as %q (%v)", ev.InnerEvent.Type, err)
	}

	changed := s.AppContextChanged("U1", "D1", ChannelEntity("C9"), MessageEntity("C9", "1.2"))
	if !strings.Contains(string(changed.Payload), `"context":{"entities":[{"type":"slack#/types/channel_id","value":"C9"},{"type":"slack#/types/message_context","value":{"channel_id":"C9","message_ts":"1.2"}}]}`) {
		t.Errorf("app_context_changed = %s, want the entities in order", changed.Payload)
	}
	dm := s.DM(Msg{User: "U1", Channel: "D1", Text: "hi"})
	if !strings.Contains(string(dm.Payload), `"app_context":{"entities":[{"type":"slack#/types/channel_id","value":"C9"}`) {
		t.Errorf("DM = %s, want the author's app_context", dm.Payload)
	}

	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	p := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: "D1", ThreadTS: "1.1"}
	p.AddPrompt("A", "a")
	if err := api.SetAssistantThreadsSuggestedPromptsContext(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.SuggestedPrompts("D1", "1.1"); ok {
		t.Errorf("prompts set on a thread of an agent app are shown: %+v; Slack ignores them", got)
	}
	p.ThreadTS = ""
	if err := api.SetAssistantThreadsSuggestedPromptsContext(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.SuggestedPrompts("D1", ""); !ok || len(got.Prompts) != 1 || got.Prompts[0].Title != "A" {
		t.Errorf("prompts set on the channel = %+v, want A", got)
	}

	mustPanic(t, "assistant_thread_started on an agent-view app", func() { s.AssistantThreadStarted("U1", "D1", "1.1") })
	s.SetExperience(AssistantView)
	mustPanic(t, "app_context_changed on an assistant-view app", func() { s.AppContextChanged("U1", "D1") })
}

func mustPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s was delivered; Slack never sends it", what)
		}
	}()
	fn()
}

// TestPublishView: views.publish keeps a Home tab per user and refuses
// what Slack refuses: too many blocks, text past a block's limit, a
// button without text, a stale hash.
func TestPublishView(t *testing.T) {
	s := New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	section := func(text string) slack.Block {
		return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)
	}
	publish := func(hash string, blocks ...slack.Block) (*slack.ViewResponse, error) {
		req := slack.PublishViewContextRequest{UserID: "U1", View: slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}}}
		if hash != "" {
			req.Hash = &hash
		}
		return api.PublishViewContext(ctx, req)
	}
	resp, err := publish("", section("*hello*"), slack.NewActionBlock("a", slack.NewButtonBlockElement("go", "v",
		slack.NewTextBlockObject(slack.PlainTextType, "Go", false, false))))
	if err != nil {
		t.Fatal(err)
	}
	h, ok := s.HomeTab("U1")
	if !ok || h.Rendered() != "*hello*" || len(h.Buttons()) != 1 || h.Buttons()[0].Text != "Go" {
		t.Errorf("HomeTab = %+v, want the section and the button", h)
	}
	many := make([]slack.Block, 101)
	for i := range many {
		many[i] = section("x")
	}
	for name, blocks := range map[string][]slack.Block{
		"101 blocks":       many,
		"long section":     {section(strings.Repeat("x", 3001))},
		"long header":      {slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("h", 151), false, false))},
		"button w/o label": {slack.NewActionBlock("a", slack.NewButtonBlockElement("go", "v", slack.NewTextBlockObject(slack.PlainTextType, "", false, false)))},
	} {
		if _, err := publish("", blocks...); err == nil {
			t.Errorf("views.publish with %s succeeded; Slack refuses it", name)
		}
	}
	if _, err := publish("stale", section("x")); err == nil || !strings.Contains(err.Error(), "hash_conflict") {
		t.Errorf("views.publish with a stale hash = %v, want hash_conflict", err)
	}
	if _, err := publish(resp.Hash, section("again")); err != nil {
		t.Errorf("views.publish with the current hash = %v", err)
	}
}
