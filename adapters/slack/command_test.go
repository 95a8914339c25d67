package slack

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/skill"
)

// governedSkills is a workspace whose channel C0PAY has stored settings.
func governedSkills(t *testing.T) *skill.Set {
	t.Helper()
	specs, err := skill.Parse([]byte(`{"reader": {"spend": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Govern(map[string]skill.Placed{"slack:" + slacktest.TeamID + "/C0PAY": {Instructions: "<!here> Pay in EUR.", Approvers: []string{"UDAVE"}}}); err != nil {
		t.Fatal(err)
	}
	return set
}

// TestNeoCommand: /neo in a channel answers the person privately with
// how Neo is set up in that channel, in Socket Mode in the envelope's ack:
// the stored instructions escaped, the approvers drawn as mentions;
// another channel says its own.
func TestNeoCommand(t *testing.T) {
	e := start(t, func(o *Options) { o.Skills, o.Approvers, o.Model = governedSkills(t), []string{"UCAROL"}, "big-model" })
	ask := func(channel string) string {
		t.Helper()
		payload, _ := json.Marshal(map[string]string{"command": "/neo", "text": "", "team_id": slacktest.TeamID, "channel_id": channel,
			"user_id": "UALICE", "is_enterprise_install": "false"})
		ack := e.ack(e.slack.Raw("slash_commands", payload))
		var reply struct{ ResponseType, Text string }
		if err := json.Unmarshal(ack.Payload, &struct {
			ResponseType *string `json:"response_type"`
			Text         *string `json:"text"`
		}{&reply.ResponseType, &reply.Text}); err != nil || reply.ResponseType != "ephemeral" {
			t.Fatalf("ack payload = %s (%v), want an ephemeral reply", ack.Payload, err)
		}
		return reply.Text
	}
	got := ask("C0PAY")
	for _, want := range []string{"*How Neo is set up here*", "In this channel Neo follows the default skill.", `"&lt;!here&gt; Pay in EUR."`,
		"with the model big-model.", "They are approved by <@UCAROL>, and here also by <@UDAVE>"} {
		if !strings.Contains(got, want) {
			t.Errorf("/neo in C0PAY lacks %q:\n%s", want, got)
		}
	}
	if got := ask("C0GENERAL"); strings.Contains(got, "Pay in EUR") || strings.Contains(got, "UDAVE") || !strings.Contains(got, "No instructions are added here.") {
		t.Errorf("/neo in C0GENERAL shows another channel's settings:\n%s", got)
	}
}

// TestNeoCommandHTTP: in HTTP mode /neo comes as a signed form and is
// answered in the response.
func TestNeoCommandHTTP(t *testing.T) {
	e, events := startHTTP(t)
	e.a.opts.Skills = governedSkills(t)
	form := url.Values{"command": {"/neo"}, "team_id": {slacktest.TeamID}, "channel_id": {"C0PAY"}, "user_id": {"UALICE"}}
	req, err := slacktest.NewEventRequest(events, testSecret, time.Now(), []byte(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req.WithContext(e.ctx))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"response_type":"ephemeral"`) || !strings.Contains(string(body), "Pay in EUR.") {
		t.Errorf("POST /neo = %d %s, want the channel's settings, privately", resp.StatusCode, body)
	}
}
