package slack

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// What the adapter needs from the Slack app, and why. The manifest must ask
// for exactly these (the scopes are botScopes): a missing scope breaks a
// feature, an extra one asks workspace admins for access Neo never uses.
var (
	// The agent view's events: app_home_opened (tab "messages" replaces
	// assistant_thread_started; tab "home" publishes the Home tab) and
	// app_context_changed; mentions and messages as before.
	neededEvents = []string{
		"app_context_changed", "app_home_opened", "app_mention",
		"app_uninstalled", // an installed app forgets its token (and tokens_revoked below)
		"message.channels", "message.groups", "message.im", "message.mpim",
		"tokens_revoked",
	}
)

// yamlList returns the items of the block list under key (a line "key:"),
// comments stripped.
func yamlList(t *testing.T, doc, key string) []string {
	t.Helper()
	var out []string
	in := false
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == key+":" {
			in = true
			continue
		}
		if !in {
			continue
		}
		item, ok := strings.CutPrefix(trimmed, "- ")
		if !ok {
			break
		}
		item, _, _ = strings.Cut(item, "#")
		out = append(out, strings.TrimSpace(item))
	}
	if len(out) == 0 {
		t.Fatalf("manifest has no list under %q", key)
	}
	slices.Sort(out)
	return out
}

func TestManifest(t *testing.T) {
	raw, err := os.ReadFile("../../manifests/slack-app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	if got := yamlList(t, doc, "bot"); !slices.Equal(got, botScopes) {
		t.Errorf("manifest bot scopes = %v, want exactly %v", got, botScopes)
	}
	if got := yamlList(t, doc, "bot_events"); !slices.Equal(got, neededEvents) {
		t.Errorf("manifest bot events = %v, want exactly %v", got, neededEvents)
	}
	for _, want := range []string{"socket_mode_enabled: true", "interactivity:\n    is_enabled: true", "messages_tab_enabled: true",
		"messages_tab_read_only_enabled: false", "home_tab_enabled: true", "\n  agent_view:\n    agent_description: "} {
		if !strings.Contains(doc, want) {
			t.Errorf("manifest lacks %q", want)
		}
	}
	// Slack gives new apps the agent view only; assistant_view (and its
	// assistant_description) would be refused.
	for _, never := range []string{"assistant_view", "assistant_description", "assistant_thread_started"} {
		if strings.Contains(doc, never) {
			t.Errorf("manifest has %q, which Slack refuses for a new app", never)
		}
	}
	_, desc, _ := strings.Cut(doc, "agent_description: ")
	desc, _, _ = strings.Cut(desc, "\n")
	if n := len([]rune(strings.TrimSpace(desc))); n == 0 || n > 300 {
		t.Errorf("agent_description has %d characters, want 1 to 300 (Slack's limit)", n)
	}
}
