package slacktest

import (
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// TestDMsAndUserGroups: conversations.open gives the bot's DM with one
// user, and usergroups.users.list a user group's members, as slack-go
// reads them; an unknown group is Slack's no_such_subteam.
func TestDMsAndUserGroups(t *testing.T) {
	s := New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	ch, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"UANN"}})
	if err != nil || ch.ID != "DUANN" {
		t.Fatalf("OpenConversation(UANN) = %+v, %v; want DUANN", ch, err)
	}
	if _, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"UANN", "UBEN"}}); err == nil {
		t.Error("OpenConversation(two users) = nil, want an error: the fake opens one-to-one DMs only")
	}
	s.SetUserGroup("S0TREASURY", "UBEN", "UCAT")
	members, err := api.GetUserGroupMembersContext(ctx, "S0TREASURY")
	if err != nil || !slices.Equal(members, []string{"UBEN", "UCAT"}) {
		t.Errorf("GetUserGroupMembers = %v, %v; want UBEN, UCAT", members, err)
	}
	if _, err := api.GetUserGroupMembersContext(ctx, "S0NONE"); err == nil || !strings.Contains(err.Error(), "no_such_subteam") {
		t.Errorf("GetUserGroupMembers(unknown) = %v, want no_such_subteam", err)
	}
}
