package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// everyTools are the tools @modelcontextprotocol/server-everything
// 2026.8.31 advertises over stdio to a client that declares elicitation
// (form and URL mode, as neobot does).
var everyTools = []string{"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
	"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource", "toggle-simulated-logging",
	"toggle-subscriber-updates", "trigger-long-running-operation", "simulate-research-query",
	"trigger-elicitation-request", "trigger-url-elicitation"}

// everyManifest writes a manifest declaring the npm "everything" reference
// server as alias every, and returns its path and the PNG its
// get-tiny-image tool returns.
func everyManifest(t *testing.T) (path string, tiny []byte) {
	t.Helper()
	root := repoRoot(t)
	bin := filepath.Join(root, "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		missing := t.Skipf
		if os.Getenv("CI") == "true" {
			missing = t.Fatalf
		}
		missing("%s is missing: run `make test`, which installs the pinned MCP servers with npm ci", bin)
	}
	src, err := os.ReadFile(filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "tools", "get-tiny-image.js"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), `MCP_TINY_IMAGE = "`)
	b64, _, _ := strings.Cut(rest, `"`)
	if tiny, err = base64.StdEncoding.DecodeString(b64); err != nil || len(tiny) == 0 {
		t.Fatalf("the everything server's tiny image: %v", err)
	}
	path = writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
		"alias": "every", "transport": "stdio", "command": bin, "args": []string{"stdio"},
		"version": "2026.8.31", "side_effects": "read", "tools": everyTools,
	}}})
	return path, tiny
}

// TestSlackToolPicture: a tool returning a PNG (the everything server's
// get-tiny-image) puts the picture in the Slack thread, through Slack's
// external upload; a model that sees images is shown it after the tool
// result, and the result tells the model it was posted.
func TestSlackToolPicture(t *testing.T) {
	manifest, tiny := everyManifest(t)
	w := newSlackWorld(t)
	w.env["NEO_MANIFEST"] = manifest
	w.env["NEO_MODEL_VISION"] = "yes"
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "every__get-tiny-image", `{}`)),
		llmtest.Text("Here is the MCP logo."),
	)
	w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "show me the logo"})
	w.answerIn(t, "C0GENERAL", mention.TS, "Here is the MCP logo.")

	var shared []slacktest.Message
	for _, m := range w.slack.Messages() {
		if m.FromBot() && len(m.Files) > 0 {
			shared = append(shared, m)
		}
	}
	if len(shared) != 1 || shared[0].Channel != "C0GENERAL" || shared[0].ThreadTS != mention.TS {
		t.Fatalf("messages sharing files = %+v, want one in the thread", shared)
	}
	if f := shared[0].Files[0]; !bytes.Equal(f.Content, tiny) || !strings.HasSuffix(f.Name, ".png") {
		t.Errorf("file in the thread = %s (%d bytes), want the tool's PNG", f.Name, len(f.Content))
	}
	checkShown(t, mainRequests(w.model), tiny)
}

// TestDiscordToolPicture: the same through Discord, as a message
// attachment in the thread; a model that does not see images gets the
// text description only.
func TestDiscordToolPicture(t *testing.T) {
	manifest, tiny := everyManifest(t)
	w := newDiscordWorld(t)
	w.env["NEO_MANIFEST"] = manifest
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "every__get-tiny-image", `{}`)),
		llmtest.Text("Here is the MCP logo."),
	)
	w.start(t, 1)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "show me the logo"})
	w.answerIn(t, mention.ID, "Here is the MCP logo.")

	var files []discordtest.File
	for _, m := range w.discord.Messages() {
		if m.Bot && m.ChannelID == mention.ID {
			files = append(files, m.Files...)
		}
	}
	if len(files) != 1 || !bytes.Equal(files[0].Content, tiny) || files[0].ContentType != "image/png" {
		t.Fatalf("attachments in the thread = %d, want the tool's PNG once", len(files))
	}
	calls := mainRequests(w.model)
	last := calls[len(calls)-1].Messages
	for _, m := range last {
		if len(m.Images) > 0 {
			t.Errorf("a text-only model was sent %d images in a %s message", len(m.Images), m.Role)
		}
	}
	tool := toolMessage(t, last)
	if !strings.Contains(tool, "[image: image/png") || !strings.Contains(tool, "Posted in the thread") {
		t.Errorf("tool result = %q, want the picture described and said to be posted", tool)
	}
}

// checkShown checks that the model's second call shows it the picture in
// a user message after the tool result.
func checkShown(t *testing.T, calls []llmtest.Request, pic []byte) {
	t.Helper()
	if len(calls) != 2 {
		t.Fatalf("model calls = %d, want 2", len(calls))
	}
	msgs := calls[1].Messages
	tool := toolMessage(t, msgs)
	if !strings.Contains(tool, "Posted in the thread for the user to see") {
		t.Errorf("tool result = %q, want it to say the picture was posted", tool)
	}
	last := msgs[len(msgs)-1]
	if last.Role != "user" || len(last.Images) != 1 || !bytes.Equal(last.Images[0].Data, pic) {
		t.Fatalf("last message = %s with %d images, want a user message showing the tool's picture", last.Role, len(last.Images))
	}
}

// toolMessage returns the content of the first tool message.
func toolMessage(t *testing.T, msgs []llm.Message) string {
	t.Helper()
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			return m.Content
		}
	}
	t.Fatal("no tool message in the model call")
	return ""
}

// TestSlackReadResource: a resource link a tool returns is readable by
// Neo through read_resource on the tool's server: the link's result says
// how, the model is offered the function, and the resource's text comes
// back; a server the place may not use is refused.
func TestSlackReadResource(t *testing.T) {
	manifest, _ := everyManifest(t)
	w := newSlackWorld(t)
	w.env["NEO_MANIFEST"] = manifest
	const uri = "demo://resource/dynamic/text/1"
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "every__get-resource-links", `{"count":1}`)),
		llmtest.Calls(llmtest.Call("c2", "read_resource", `{"server":"every","uri":"`+uri+`"}`)),
		llmtest.Calls(llmtest.Call("c3", "read_resource", `{"server":"fs","uri":"file:///etc/passwd"}`)),
		llmtest.Text("Resource 1 says hello."),
	)
	w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what do the resources say?"})
	w.answerIn(t, "C0GENERAL", mention.TS, "Resource 1 says hello.")

	calls := mainRequests(w.model)
	if len(calls) != 4 {
		t.Fatalf("model calls = %d, want 4", len(calls))
	}
	offered := false
	for _, tool := range calls[0].Tools {
		offered = offered || tool.Function.Name == "read_resource"
	}
	if !offered {
		t.Error("read_resource is not offered though the place may use a server with resources")
	}
	results := map[string]string{}
	for _, m := range calls[3].Messages {
		if m.Role == llm.RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	if r := results["c1"]; !strings.Contains(r, "<demo://resource/dynamic/") || !strings.Contains(r, `read one with read_resource {"server": "every"`) {
		t.Errorf("resource links result = %q, want the link and how to read it", r)
	}
	if r := results["c2"]; !strings.Contains(r, "Resource 1: This is a plaintext resource") {
		t.Errorf("read_resource result = %q, want the resource's text", r)
	}
	if r := results["c3"]; !strings.Contains(r, `server "fs"'s resources cannot be read here`) {
		t.Errorf("read_resource on an unknown server = %q, want a refusal naming the servers allowed", r)
	}
	for _, m := range w.slack.Messages() {
		if len(m.Files) > 0 {
			t.Errorf("a text resource was posted as a file: %+v", m.Files)
		}
	}
}

// TestCheckListsPrompts: neobot check lists a server's prompts and says
// its resources are readable.
func TestCheckListsPrompts(t *testing.T) {
	manifest, _ := everyManifest(t)
	model := llmtest.New(t)
	out, stderr, err := run(t, map[string]string{
		"NEO_MODEL": "test-main", "NEO_LLM_BASE_URL": model.BaseURL(), "NEO_MANIFEST": manifest,
		"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"),
	}, "", "check")
	if err != nil {
		t.Fatalf("check = %v\n%s", err, stderr)
	}
	for _, want := range []string{"resources: readable with read_resource", "prompts (", "simple-prompt", "args-prompt(city*", "read_resource (every"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}
