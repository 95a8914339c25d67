package slack

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// What the adapter needs from the Slack app, and why. The manifest must ask
// for exactly these: a missing scope breaks a feature, an extra one asks
// workspace admins for access Neo never uses.
var (
	neededScopes = []string{
		"app_mentions:read", // app_mention events
		"assistant:write",   // assistant.threads.setStatus/setSuggestedPrompts/setTitle, assistant_thread_started
		"channels:history",  // message.channels; conversations.replies in public channels
		"channels:read",     // conversations.info: is a mentioned channel private?
		"chat:write",        // chat.postMessage/update/delete/postEphemeral, chat.*Stream
		"files:read",        // url_private_download of attachments
		"files:write",       // files.getUploadURLExternal/completeUploadExternal: files tools return
		"groups:history",    // message.groups; conversations.replies in private channels
		"groups:read",       // conversations.info in private channels
		"im:history",        // message.im (DMs, the assistant pane)
		"mpim:history",      // message.mpim
		"mpim:read",         // conversations.info in group DMs
		"users:read",        // users.info: is_admin of someone stopping a turn that waits on an approval
	}
	neededEvents = []string{
		"app_mention", "assistant_thread_started",
		"message.channels", "message.groups", "message.im", "message.mpim",
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
	if got := yamlList(t, doc, "bot"); !slices.Equal(got, neededScopes) {
		t.Errorf("manifest bot scopes = %v, want exactly %v", got, neededScopes)
	}
	if got := yamlList(t, doc, "bot_events"); !slices.Equal(got, neededEvents) {
		t.Errorf("manifest bot events = %v, want exactly %v", got, neededEvents)
	}
	for _, want := range []string{"socket_mode_enabled: true", "interactivity:\n    is_enabled: true", "messages_tab_enabled: true", "messages_tab_read_only_enabled: false", "assistant_view:"} {
		if !strings.Contains(doc, want) {
			t.Errorf("manifest lacks %q", want)
		}
	}
}
