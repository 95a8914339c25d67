package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// TestSlackAdminsCheck: users.info is asked with the token of the person's
// own workspace: its admins and owners are admins, its members are not,
// and a workspace without an installation, or whose token Slack no longer
// takes, is refused with a sentence, asking no other workspace's token.
func TestSlackAdminsCheck(t *testing.T) {
	s := slacktest.New(t)
	s.SetPerson("UADA", slacktest.Person{Team: "TA", Admin: true})
	s.SetPerson("UOWEN", slacktest.Person{Team: "TB", Owner: true})
	s.SetPerson("UMAX", slacktest.Person{Team: "TA"})
	s.SetPerson("UOUT", slacktest.Person{Team: "TC", Admin: true})
	s.SetPerson("UREV", slacktest.Person{Team: "TR", Admin: true})
	tokens := map[string]string{"TA": "xoxb-team-a", "TB": "xoxb-team-b", "TR": "xoxb-team-r"}
	var asked []string
	admins := NewSlackAdmins(s.APIURL(), slacktest.ClientID, slacktest.ClientSecret, func(_ context.Context, team string) (string, error) {
		asked = append(asked, team)
		if team == "TC" {
			return "", fmt.Errorf("slack: %w", ErrNotInstalled)
		}
		return tokens[team], nil
	}, http.DefaultClient)
	for team, token := range tokens {
		s.AddInstall(slacktest.Install{Installer: slacktest.Installer{Team: team}, Token: token})
	}
	s.Uninstall("TR") // Slack refuses its token from now on
	for _, c := range []struct {
		team, user string
		admin      bool
		why        string
	}{
		{"TA", "UADA", true, ""},
		{"TB", "UOWEN", true, ""},
		{"TA", "UMAX", false, ""},
		{"TA", "UOWEN", false, ""}, // claims TA, but is of TB: user_not_found with TA's token
		{"TR", "UREV", false, "no longer takes"},
		{"TC", "UOUT", false, "not installed in Slack workspace TC"},
	} {
		p, err := admins.Check(t.Context(), c.team, c.user)
		if err != nil || p.WorkspaceAdmin != c.admin || (c.why == "") != (p.Why == "") || !strings.Contains(p.Why, c.why) {
			t.Errorf("Check(%s, %s) = %+v, %v; want admin %v, why %q", c.team, c.user, p, err, c.admin, c.why)
		}
	}
	for _, call := range s.Calls("users.info") {
		if team := strings.ToUpper(strings.TrimPrefix(call.Token, "xoxb-team-")); call.Token != tokens["T"+team] {
			t.Errorf("users.info carried %q, not a workspace's own token", call.Token)
		}
	}
	if strings.Join(asked, ",") != "TA,TB,TA,TA,TR,TC" {
		t.Errorf("tokens asked for %v", asked)
	}
	if _, err := NewSlackAdmins(s.APIURL(), "", "", func(context.Context, string) (string, error) {
		return "", errors.New("store down")
	}, http.DefaultClient).Check(t.Context(), "TA", "UADA"); err == nil {
		t.Error("Check with the store down = nil error; want it said")
	}
}
