package slack

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack/slackevents"

	"github.com/neobot/neobot/core"
)

// FuzzGateMessage: whatever a daemon puts in a question, its options or
// the answer, the approval message renders without panicking and within
// Slack's limits, with no blank button.
func FuzzGateMessage(f *testing.F) {
	f.Add("Send 5 PAX to 0xabc?", "Yes, send", "Don't send")
	f.Add(strings.Repeat(" ", 5000), " ", "")
	f.Add(strings.Repeat("\n", 3001), "\t", strings.Repeat("é", 200))
	f.Add(strings.Repeat("```", 2000), strings.Repeat("🙂", 100), "<!channel>")
	f.Add("\xff\xfe", "\x00", "ok")
	f.Fuzz(func(t *testing.T, question, opt1, opt2 string) {
		for _, state := range []core.GateState{core.GatePending, core.GateApproved, core.GateDenied, core.GateExpired} {
			g := core.Gate{Token: "tok", Question: question, Options: []core.Option{{Label: opt1, Approves: true}, {Label: opt2}}, State: state,
				Answer: opt2, DecidedBy: "U1", DecidedAt: time.Unix(1700000000, 0), Requester: "U2"}
			fallback, raw := gateBlocks(g)
			if n := len(fallback); n > 3100 {
				t.Errorf("fallback text is %d bytes", n)
			}
			js, err := json.Marshal(raw)
			if err != nil {
				t.Fatal(err)
			}
			var blocks []struct {
				Type     string                 `json:"type"`
				Text     *struct{ Text string } `json:"text"`
				Elements []struct {
					Type string          `json:"type"`
					Text json.RawMessage `json:"text"`
				} `json:"elements"`
			}
			if err := json.Unmarshal(js, &blocks); err != nil {
				t.Fatalf("blocks do not parse: %v", err)
			}
			for _, b := range blocks {
				if b.Text != nil && len(b.Text.Text) > 3000 {
					t.Errorf("%s block text is %d bytes, over Slack's 3,000", b.Type, len(b.Text.Text))
				}
				if b.Type == "actions" && len(b.Elements) > 25 {
					t.Errorf("%d buttons, over Slack's 25", len(b.Elements))
				}
				for _, e := range b.Elements {
					var text string
					if e.Type == "button" {
						var obj struct{ Text string }
						_ = json.Unmarshal(e.Text, &obj)
						text = obj.Text
						if n := utf8.RuneCountInString(text); strings.TrimSpace(text) == "" || n > 75 {
							t.Errorf("button label %q (%d characters): want 1 to 75", text, n)
						}
					} else {
						_ = json.Unmarshal(e.Text, &text)
					}
					if len(text) > 3000 {
						t.Errorf("%s element text is %d bytes, over Slack's 3,000", e.Type, len(text))
					}
				}
			}
		}
	})
}

// FuzzSplit: an answer splits into pieces Slack takes, none blank, and
// nothing but blanks is lost.
func FuzzSplit(f *testing.F) {
	f.Add("hello", 3800)
	f.Add(strings.Repeat(" ", 5000), 100)
	f.Add(strings.Repeat("```go\n"+strings.Repeat("x", 50)+"\n", 40), 200)
	f.Add(strings.Repeat("🙂", 3000), 50)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		limit = 16 + abs(limit)%4000
		chunks := split(text, limit)
		for _, c := range chunks {
			if strings.TrimSpace(c) == "" {
				t.Fatalf("blank chunk in %q", chunks)
			}
		}
		if strings.TrimSpace(text) != "" && len(chunks) == 0 {
			t.Fatalf("split(%q) lost the text", text)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzParseCallback: parseCallback, which reads Events API payloads in
// place of slack-go's parser, never panics, and reads every payload
// slack-go reads into one of the events Neo handles: every field Neo
// takes from it is what slack-go's types read, whether its one pass read
// the payload or its typed reading had to.
func FuzzParseCallback(f *testing.F) {
	outer := func(event string) []byte {
		return []byte(`{"token":"t","team_id":"T0TEAM","api_app_id":"A1","type":"event_callback","event_id":"Ev1","event_time":1700000000,"event":` + event + `}`)
	}
	f.Add(outer(`{"type":"app_mention","user":"U1","text":"<@UNEO> hi","ts":"1.2","channel":"C1","event_ts":"1.2","thread_ts":"1.1","files":[{"id":"F1","name":"a.txt"}]}`))
	f.Add(outer(`{"type":"message","channel_type":"channel","user":"U1","text":"reply","ts":"1.3","thread_ts":"1.1","channel":"C1","subtype":"file_share","message":{"files":[{"id":"F2"}]}}`))
	f.Add(outer(`{"type":"message","subtype":"message_changed","channel":"C1","message":{"text":"edited","edited":{"user":"U1","ts":"1.4"}},"previous_message":{"text":"x"}}`))
	f.Add(outer(`{"type":"assistant_thread_started","assistant_thread":{"user_id":"U1","channel_id":"D1","thread_ts":"1.5","context":{"channel_id":"C1"}}}`))
	f.Add(outer(`{"type":"reaction_added","user":"U1"}`))
	f.Add(outer(`{"type":"message","channel_type":"im","user":"U1","text":"hi","ts":"1.6","channel":"D1","app_context":{"entities":[{"type":"slack#/types/channel_id","value":"C1","team_id":"T0TEAM"},{"type":"slack#/types/message_context","value":{"channel_id":"C1","message_ts":"1.1"}}]}}`))
	f.Add(outer(`{"type":"message","channel_type":"im","user":"U1","text":"hi","ts":"1.6","channel":"D1","app_context":{}}`))
	f.Add(outer(`{"type":"app_home_opened","user":"U1","channel":"D1","tab":"messages","event_ts":"1.7","context":{"entities":[{"type":"slack#/types/canvas_id","value":"F1"}]}}`))
	f.Add(outer(`{"type":"app_home_opened","user":"U1","channel":"D1","tab":"home","event_ts":"1.7","view":{"id":"V1","type":"home"}}`))
	f.Add(outer(`{"type":"app_context_changed","user":"U1","channel":"D1","context":{"entities":[{"type":"slack#/types/channel_id","value":"C1"}]},"event_ts":"1.8"}`))
	f.Add(outer(`{"type":"app_mention","user":"U1","text":"<@UNEO> hi","ts":"1.2","channel":"C1","edited":{"user":"U1","ts":"1.3"},"blocks":[{"type":"rich_text","block_id":"b","elements":[{"type":"rich_text_section","elements":[{"type":"user","user_id":"UNEO"},{"type":"text","text":" hi"}]}]}]}`))
	f.Add(outer(`{"type":"message","User":"U1","user":"U2","text":"a","ts":"1.2","channel":"C1","files":[{"id":"F3","url_private":"u"}],"message":null}`))
	f.Add(outer(`{"type":"message","bot_id":"B1","text":"from a bot","ts":"1.2","channel":"D1","channel_type":"im","blocks":[]}`))
	f.Add(outer(`{"type":"app_mention","user":42}`))
	f.Add(outer(`{"type":"app_mention","user":"U1","text":"hi","ts":"1.2","channel":"C1","subtype":7,"message":"not an object"}`))
	f.Add([]byte(`{"type":"url_verification","challenge":"c"}`))
	f.Add([]byte(`"just a string"`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := parseCallback(raw)
		want, werr := slackevents.ParseEvent(raw, slackevents.OptionNoVerifyToken())
		if werr != nil || want.Type != slackevents.CallbackEvent {
			return
		}
		switch want.InnerEvent.Data.(type) {
		case *slackevents.AppMentionEvent, *slackevents.MessageEvent, *slackevents.AssistantThreadStartedEvent,
			*slackevents.AppHomeOpenedEvent:
		default:
			return
		}
		w := fromSlackGo(want)
		if w.msg != nil && w.Inner == string(slackevents.Message) || w.home != nil {
			// slack-go reads neither a message's app_context nor the
			// context of app_home_opened: read as the documented types.
			var extra struct {
				Event struct {
					AppContext *appContext `json:"app_context"`
					Context    *appContext `json:"context"`
				} `json:"event"`
			}
			if json.Unmarshal(raw, &extra) != nil {
				return
			}
			if w.msg != nil {
				w.msg.appContext = extra.Event.AppContext
			} else {
				w.home.context = extra.Event.Context
			}
		}
		typed, terr := parseCallbackTyped(raw)
		for _, p := range []struct {
			name string
			got  event
			err  error
		}{{"parseCallback", got, err}, {"parseCallbackTyped", typed, terr}} {
			if p.err != nil {
				t.Fatalf("%s(%s) = %v; slack-go reads it", p.name, raw, p.err)
			}
			if !reflect.DeepEqual(p.got, w) {
				t.Fatalf("%s(%s) =\n%#v\nslack-go reads\n%#v", p.name, raw, p.got, w)
			}
		}
	})
}

// fromSlackGo is what Neo reads of an event slack-go parsed: the fields
// onEvent took from slack-go's types before parseCallback had its own.
func fromSlackGo(ev slackevents.EventsAPIEvent) event {
	cb := ev.Data.(*slackevents.EventsAPICallbackEvent)
	out := event{Type: ev.Type, TeamID: ev.TeamID, Enterprise: ev.EnterpriseID, EventID: cb.EventID, Inner: ev.InnerEvent.Type}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		out.msg = &incoming{user: e.User, botID: e.BotID, text: e.Text, ts: e.TimeStamp, threadTS: e.ThreadTimeStamp,
			channel: e.Channel, files: e.Files, mention: true}
		out.edited = e.Edited != nil
	case *slackevents.MessageEvent:
		out.msg = &incoming{user: e.User, botID: e.BotID, subtype: e.SubType, text: e.Text, ts: e.TimeStamp,
			threadTS: e.ThreadTimeStamp, channel: e.Channel, channelType: e.ChannelType}
		if e.Message != nil {
			out.msg.files = e.Message.Files
		}
	case *slackevents.AssistantThreadStartedEvent:
		out.assistant = &e.AssistantThread
	case *slackevents.AppHomeOpenedEvent:
		out.home = &homeOpened{user: e.User, channel: e.Channel, tab: e.Tab}
	}
	return out
}

// FuzzConvertLine: the shortcut for lines without markup gives what the
// full conversion gives, whatever the line.
func FuzzConvertLine(f *testing.F) {
	for _, s := range []string{"ok", "Thinking…", "plain words, and numbers 42.", "a # b", "- item", "* item",
		"+ item", "> quoted", "**bold**", "__bold__", "_it_", "~~x~~", "`code`", "<@U1>", "a & b", "[t](u)", "![i](u)",
		"\x00" + "0\x00", "\x01", "***", "x  y\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if got, want := convertLine(line), convertMarkup(line); got != want {
			t.Fatalf("convertLine(%q) = %q, the full conversion gives %q", line, got, want)
		}
	})
}

// FuzzDecodeEnvelope: decodeEnvelope, which reads an events_api frame and
// its callback in one pass, reads every frame as the frame's own reading
// followed by parseCallback does.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"type":"hello","num_connections":1}`))
	f.Add([]byte(`{"type":"disconnect","reason":"refresh_requested"}`))
	f.Add([]byte(`{"envelope_id":"e1","type":"events_api","retry_attempt":1,"payload":{"team_id":"T0TEAM","type":"event_callback","event_id":"Ev1","event":{"type":"app_mention","user":"U1","text":"<@UNEO> hi","ts":"1.2","channel":"C1"}}}`))
	f.Add([]byte(`{"envelope_id":"e2","type":"events_api","payload":{"type":"event_callback","event":{"type":"app_mention","user":"U1","ts":"1.2","channel":"C1","subtype":3}}}`))
	f.Add([]byte(`{"envelope_id":"e3","type":"events_api","payload":{"type":"event_callback","event":{"type":"app_mention","user":5}}}`))
	f.Add([]byte(`{"envelope_id":"e4","type":"events_api","payload":{"type":"event_callback","event":null}}`))
	f.Add([]byte(`{"envelope_id":"e5","type":"events_api","payload":"not an object"}`))
	f.Add([]byte(`{"envelope_id":"e6","type":"interactive","payload":{"type":"block_actions","user":{"id":"U1"},"actions":[{"action_id":"a"}]}}`))
	f.Add([]byte(`{"envelope_id":"e7","type":"slash_commands","payload":{"command":"/neo"}}`))
	f.Add([]byte(`{"envelope_id":"e8","type":"events_api","retry_attempt":"x"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeEnvelope(raw)
		var want envelope
		werr := json.Unmarshal(raw, &want)
		if (err != nil) != (werr != nil) {
			t.Fatalf("decodeEnvelope(%s) error = %v, want %v", raw, err, werr)
		}
		if werr != nil {
			return
		}
		if want.Type == "events_api" {
			want.callback, want.callbackErr = parseCallback(want.Payload)
		}
		if got.Type != want.Type || got.EnvelopeID != want.EnvelopeID || got.RetryAttempt != want.RetryAttempt || got.Reason != want.Reason {
			t.Fatalf("decodeEnvelope(%s) = %+v, want %+v", raw, got, want)
		}
		if (got.callbackErr != nil) != (want.callbackErr != nil) || !reflect.DeepEqual(got.callback, want.callback) {
			t.Fatalf("decodeEnvelope(%s) callback = %#v (%v), want %#v (%v)", raw, got.callback, got.callbackErr, want.callback, want.callbackErr)
		}
		if want.Type == "interactive" && string(got.Payload) != string(want.Payload) {
			t.Fatalf("decodeEnvelope(%s) payload = %s, want %s", raw, got.Payload, want.Payload)
		}
	})
}

// FuzzAckFrame: an acknowledgement reads back as the envelope ID it acks,
// whatever the ID.
func FuzzAckFrame(f *testing.F) {
	for _, id := range []string{"", "1d2c3b4a-5e6f-4a1b-9c8d-7e6f5a4b3c2d", `a"b`, `back\slash`, "<tag>&", "é", "\x00\n", "\xff"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		raw, err := ackFrame(id)
		if err != nil {
			t.Fatalf("ackFrame(%q): %v", id, err)
		}
		want, _ := json.Marshal(struct {
			EnvelopeID string `json:"envelope_id"`
		}{id})
		if string(raw) != string(want) {
			t.Fatalf("ackFrame(%q) = %s, want %s", id, raw, want)
		}
	})
}
