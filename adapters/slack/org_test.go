package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/skill"
)

// TestEnterpriseOrg: a message from a workspace of an Enterprise Grid
// organization reaches its turn with the organization (the envelope's
// enterprise_id), so the organization's settings can apply there; /neo
// in such a workspace says the organization's settings, and a message
// outside any organization carries none.
func TestEnterpriseOrg(t *testing.T) {
	specs, err := skill.Parse([]byte(`{"reader": {"spend": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Govern(map[string]skill.Placed{"slack:E0ORG": {Skill: "reader", Instructions: "Org-wide rules."}}); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *Options) { o.Skills = set })
	payload, _ := json.Marshal(map[string]any{
		"token": slacktest.VerificationToken, "team_id": slacktest.TeamID, "enterprise_id": "E0ORG", "api_app_id": slacktest.AppID,
		"type": "event_callback", "event_id": "Ev0ORG1", "event_time": 1700000000,
		"authorizations": []map[string]any{{"enterprise_id": "E0ORG", "team_id": slacktest.TeamID, "user_id": slacktest.BotUserID, "is_bot": true}},
		"event": map[string]any{"type": "app_mention", "user": "UALICE", "text": "<@" + slacktest.BotUserID + "> hi",
			"ts": "1700000000.000100", "channel": "C0GENERAL", "event_ts": "1700000000.000100"},
	})
	e.ack(e.slack.Raw("events_api", payload))
	if in := e.hub.Wait(e.ctx, t, 1); in.Org != "E0ORG" {
		t.Errorf("Inbound.Org = %q, want the envelope's E0ORG", in.Org)
	}
	e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hi again"})
	if in := e.hub.Wait(e.ctx, t, 2); in.Org != "" {
		t.Errorf("Inbound.Org outside an organization = %q, want none", in.Org)
	}

	ask := func(enterprise string) string {
		t.Helper()
		cmd, _ := json.Marshal(map[string]string{"command": "/neo", "team_id": slacktest.TeamID, "enterprise_id": enterprise,
			"channel_id": "C0GENERAL", "user_id": "UALICE", "is_enterprise_install": "false"})
		ack := e.ack(e.slack.Raw("slash_commands", cmd))
		var reply struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(ack.Payload, &reply); err != nil {
			t.Fatalf("ack payload = %s: %v", ack.Payload, err)
		}
		return reply.Text
	}
	if got := ask("E0ORG"); !strings.Contains(got, "reader") || !strings.Contains(got, "Org-wide rules.") {
		t.Errorf("/neo in a workspace of the organization:\n%s\nwant the organization's skill and instructions", got)
	}
	if got := ask(""); strings.Contains(got, "Org-wide rules.") {
		t.Errorf("/neo outside the organization:\n%s\nwant none of its settings", got)
	}
}
