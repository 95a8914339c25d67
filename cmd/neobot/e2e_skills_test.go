package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// fsTools are the npm filesystem server's tools at the pinned version.
var fsTools = []string{"create_directory", "directory_tree", "edit_file", "get_file_info",
	"list_allowed_directories", "list_directory", "list_directory_with_sizes", "move_file",
	"read_file", "read_media_file", "read_multiple_files", "read_text_file", "search_files", "write_file"}

// fsServerSpec declares the npm filesystem server as alias, scoped to dir,
// with its side effects: it reads, and five of its tools write.
func fsServerSpec(t *testing.T, alias, dir string) map[string]any {
	t.Helper()
	bin := filepath.Join(repoRoot(t), "node_modules", ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(bin); err != nil {
		missing := t.Skipf
		if os.Getenv("CI") == "true" {
			missing = t.Fatalf
		}
		missing("%s is missing: run `make test`, which installs the pinned MCP servers with npm ci", bin)
	}
	return map[string]any{
		"alias": alias, "transport": "stdio", "command": bin, "args": []string{dir},
		"version": "2026.8.31", "tools": fsTools, "side_effects": "read",
		"tool_side_effects": map[string]string{"write_file": "write", "edit_file": "write", "create_directory": "write", "move_file": "write"},
	}
}

// writeJSON writes v as JSON in a temporary file and returns its path.
func writeJSON(t *testing.T, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func toolNames(r llmtest.Request) []string {
	var out []string
	for _, tool := range r.Tools {
		out = append(out, tool.Function.Name)
	}
	return out
}

// toolResult returns what the model was told for the tool call id.
func toolResult(r llmtest.Request, id string) string {
	for _, m := range r.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Content
		}
	}
	return ""
}

// place is the settings-file place of a channel of the fake workspace.
func place(channel string) string { return "slack:" + slacktest.TeamID + "/" + channel }

// TestSlackSkillsGateTools: with the built binary against the Slack fake,
// a channel bound to a read-only skill never sees fs__write_file, and a
// call by that name is refused with no file written and no daemon
// request for core_execute; a channel bound to a writing skill writes; a
// DM gets the default skill.
func TestSlackSkillsGateTools(t *testing.T) {
	w := newSlackWorld(t)
	dir := t.TempDir()
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{fsServerSpec(t, "fs", dir)}})
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"tools": []string{"matrix://tool/mcp/fs/*@2026.8.31"},
			"side_effects": map[string]string{"none": "allow", "read": "allow", "write": "deny"}, "places": []string{place("CREAD")}},
		"writer": map[string]any{"side_effects": map[string]string{"read": "allow", "write": "allow"}, "places": []string{place("CWRITE")}},
	}})
	blocked, written := filepath.Join(dir, "blocked.txt"), filepath.Join(dir, "written.txt")
	scriptModel(t, w.model,
		llmtest.Calls(
			llmtest.Call("c1", "fs__write_file", `{"path":"`+blocked+`","content":"nope"}`),
			llmtest.Call("c2", "core_execute", `{"intent":"send 5 PAX to 0xabc"}`)),
		llmtest.Text("I can't write or spend here."),
		llmtest.Calls(llmtest.Call("c3", "fs__write_file", `{"path":"`+written+`","content":"hello"}`)),
		llmtest.Text("Written."),
		llmtest.Text("Hi in private."),
	)
	p := w.start(t, 1)

	read := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CREAD", Text: "write blocked.txt and send 5 PAX"})
	w.answerIn(t, "CREAD", read.TS, "I can't write or spend here.")
	calls := mainRequests(w.model)
	if names := toolNames(calls[0]); slices.Contains(names, "fs__write_file") || slices.Contains(names, "core_execute") || !slices.Contains(names, "fs__read_text_file") {
		t.Errorf("tools sent to the model in the read-only channel = %v, want reads without fs__write_file or core_execute", names)
	}
	if got := toolResult(calls[1], "c1"); !strings.Contains(got, `skill "reader" denies write calls`) {
		t.Errorf("the model was told %q for the write, want the refusal naming the rule", got)
	}
	if got := toolResult(calls[1], "c2"); !strings.Contains(got, `skill "reader" may not spend`) {
		t.Errorf("the model was told %q for core_execute, want the refusal naming the rule", got)
	}
	if _, err := os.Stat(blocked); !os.IsNotExist(err) {
		t.Errorf("the refused write left a file (stat: %v)", err)
	}
	if n := len(w.daemon.Intents()); n != 0 {
		t.Errorf("the daemon got %d intents from a skill without spend", n)
	}

	wr := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CWRITE", Text: "write written.txt"})
	w.answerIn(t, "CWRITE", wr.TS, "Written.")
	if data, err := os.ReadFile(written); err != nil || string(data) != "hello" {
		t.Errorf("written.txt = %q, %v; want the writing skill's call to run", data, err)
	}
	if names := toolNames(mainRequests(w.model)[2]); !slices.Contains(names, "fs__write_file") {
		t.Errorf("tools in the writing channel = %v, want fs__write_file", names)
	}

	dm := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "hello"})
	w.answerIn(t, "D0DM", dm.TS, "Hi in private.")
	if names := toolNames(mainRequests(w.model)[4]); !slices.Contains(names, "fs__write_file") || !slices.Contains(names, "core_execute") {
		t.Errorf("tools in a DM = %v, want the default skill's: every tool and core_execute", names)
	}
	p.stop(t)
	if n := strings.Count(p.output.String(), "call refused by the capability gate"); n != 2 {
		t.Errorf("refusals logged %d times, want 2 (one per tool)", n)
	}
}

// TestSlackSkillAsksBeforeWriting: in a channel whose skill asks before
// writing, the write waits for a click and runs once after "Allow once"
// (also when neobot stops or dies while it waits), and never after
// "Deny".
func TestSlackSkillAsksBeforeWriting(t *testing.T) {
	for _, rs := range append([]struct {
		name string
		halt func(t *testing.T, p *process)
	}{{"no restart", nil}}, restarts...) {
		t.Run(rs.name, func(t *testing.T) {
			w := newSlackWorld(t)
			dir := t.TempDir()
			w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
				"did": "did:web:neobot.test:agents:e2e", "servers": []any{fsServerSpec(t, "fs", dir)}})
			w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
				"careful": map[string]any{"side_effects": map[string]string{"read": "allow", "write": "ask"}, "places": []string{place("CASK")}},
			}})
			allowed, denied := filepath.Join(dir, "allowed.txt"), filepath.Join(dir, "denied.txt")
			scriptModel(t, w.model,
				llmtest.Calls(llmtest.Call("c1", "fs__write_file", `{"path":"`+allowed+`","content":"yes"}`)),
				llmtest.Text("Saved allowed.txt."),
				llmtest.Calls(llmtest.Call("c2", "fs__write_file", `{"path":"`+denied+`","content":"no"}`)),
				llmtest.Text("Not saved."),
			)
			p := w.start(t, 1)
			first := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CASK", Text: "save allowed.txt"})
			gate := w.approvalFor(t, p, "allowed.txt")
			if labels := buttonLabels(gate); !slices.Equal(labels, []string{"Allow once", "Deny"}) {
				t.Errorf("approval buttons = %v, want Allow once and Deny", labels)
			}
			if _, err := os.Stat(allowed); !os.IsNotExist(err) {
				t.Fatalf("the write ran before anyone clicked (stat: %v)", err)
			}
			connections := 1
			if rs.halt != nil {
				rs.halt(t, p)
				connections++
				p = w.start(t, connections)
			}
			w.slack.Click("UCAROL", gate, 0)
			w.answerIn(t, "CASK", first.TS, "Saved allowed.txt.")
			if data, err := os.ReadFile(allowed); err != nil || string(data) != "yes" {
				t.Errorf("allowed.txt = %q, %v; want it written after Allow once", data, err)
			}

			second := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CASK", Text: "save denied.txt"})
			w.slack.Click("UCAROL", w.approvalFor(t, p, "denied.txt"), 1)
			w.answerIn(t, "CASK", second.TS, "Not saved.")
			if _, err := os.Stat(denied); !os.IsNotExist(err) {
				t.Errorf("denied.txt exists: a denied write ran (stat: %v)", err)
			}
			calls := mainRequests(w.model)
			if got := toolResult(calls[len(calls)-1], "c2"); !strings.Contains(got, "<@UCAROL> denied it") {
				t.Errorf("the model was told %q after Deny, want who denied it", got)
			}
			p.stop(t)
			if got := botAnswers(w, "Saved allowed.txt."); got != 1 {
				t.Errorf("the answer after Allow once was posted %d times, want once", got)
			}
		})
	}
}

// approvalFor waits for an approval message about a call that mentions
// file.
func (w *slackWorld) approvalFor(t *testing.T, p *process, file string) slacktest.Message {
	t.Helper()
	m, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.FromBot() && len(m.Buttons()) > 0 && strings.Contains(m.Rendered(), "fs/write_file (write)") && strings.Contains(m.Rendered(), file)
	})
	if err != nil {
		t.Fatalf("no approval message for the write of %s: %v\n%s", file, err, p.output.String())
	}
	return m
}

func buttonLabels(m slacktest.Message) []string {
	var out []string
	for _, b := range m.Buttons() {
		out = append(out, b.Text)
	}
	return out
}

// TestSlackSkillsIsolateWorkspaces: two filesystem servers with their own
// roots, each bound through a skill to its own channel: a file written in
// one channel is invisible in the other, by path through its own server
// and by name through the other's.
func TestSlackSkillsIsolateWorkspaces(t *testing.T) {
	w := newSlackWorld(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{fsServerSpec(t, "fsa", dirA), fsServerSpec(t, "fsb", dirB)}})
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"team-a": map[string]any{"tools": []string{"matrix://tool/mcp/fsa/*@2026.8.31"},
			"side_effects": map[string]string{"read": "allow", "write": "allow"}, "places": []string{place("CTEAMA")}},
		"team-b": map[string]any{"tools": []string{"matrix://tool/mcp/fsb/*@2026.8.31"},
			"side_effects": map[string]string{"read": "allow", "write": "allow"}, "places": []string{place("CTEAMB")}},
	}})
	secret := filepath.Join(dirA, "plan.txt")
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("a1", "fsa__write_file", `{"path":"`+secret+`","content":"team A's plan"}`)),
		llmtest.Text("Saved."),
		llmtest.Calls(
			llmtest.Call("b1", "fsb__read_text_file", `{"path":"`+secret+`"}`),
			llmtest.Call("b2", "fsa__read_text_file", `{"path":"`+secret+`"}`),
			llmtest.Call("b3", "fsb__list_directory", `{"path":"`+dirB+`"}`)),
		llmtest.Text("I can't see it."),
	)
	p := w.start(t, 1)
	a := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CTEAMA", Text: "save our plan"})
	w.answerIn(t, "CTEAMA", a.TS, "Saved.")
	b := w.slack.Mention(slacktest.Msg{User: "UBOB", Channel: "CTEAMB", Text: "read team A's plan"})
	w.answerIn(t, "CTEAMB", b.TS, "I can't see it.")
	p.stop(t)

	calls := mainRequests(w.model)
	if names := toolNames(calls[2]); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "fsa__") }) {
		t.Errorf("team B's channel was shown team A's tools: %v", names)
	}
	last := calls[len(calls)-1]
	for id, want := range map[string]string{
		"b1": "access denied", // fsb's root does not hold the file
		"b2": `skill "team-b" does not list matrix://tool/mcp/fsa/read_text_file@2026.8.31`,
	} {
		if got := toolResult(last, id); !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
			t.Errorf("tool result %s = %q, want it to contain %q", id, got, want)
		}
	}
	for _, id := range []string{"b1", "b2", "b3"} {
		if got := toolResult(last, id); strings.Contains(got, "team A's plan") {
			t.Errorf("team B read team A's file through %s: %q", id, got)
		}
	}
	if got := toolResult(last, "b3"); strings.Contains(got, "plan.txt") || got == "" {
		t.Errorf("team B's directory listing = %q, want it without team A's file", got)
	}
}

// TestSkillsStartupErrors: a settings file whose skills do not fit the
// manifest stops start-up, and `neobot check` says the same, naming the
// skill, both versions or the missing setting.
func TestSkillsStartupErrors(t *testing.T) {
	tests := []struct {
		name   string
		skills map[string]any
		edit   func(env map[string]string)
		want   []string
	}{
		{"pinned version differs", map[string]any{"reader": map[string]any{"tools": []string{"matrix://tool/mcp/fs/read_*@2026.9.1"}}},
			nil, []string{`skill "reader"`, "pins fs@2026.9.1", "the manifest pins fs@2026.8.31"}},
		{"unknown server", map[string]any{"reader": map[string]any{"tools": []string{"matrix://tool/mcp/git/log@1.0.0"}}},
			nil, []string{`server "git"`, "does not declare"}},
		{"misspelt field", map[string]any{"reader": map[string]any{"side_effect": map[string]string{"write": "deny"}}},
			nil, []string{`skill "reader"`, `unknown field "side_effect"`}},
		{"limits without a currency", map[string]any{"pay": map[string]any{"spend_limits": map[string]any{
			"fs/read_file": map[string]any{"amount": "amount", "currency": "currency", "per_call": "10", "per_day": 50}}}},
			nil, []string{`skill "pay"`, "spend_limits.fs/read_file: per_call and per_day without a currency are refused",
				`"spend_limits": {"USDC": {"per_call":"10", "per_day":"50"}, "fs/read_file": {"amount": "amount", "currency": "currency"}}`}},
		{"asks with nobody to answer", map[string]any{"careful": map[string]any{"side_effects": map[string]string{"write": "ask"}}},
			func(env map[string]string) {
				delete(env, "SLACK_APPROVERS")
				delete(env, "NEO_SELF_APPROVE")
				delete(env, "NEO_DAEMON_URL") // spend authority would be refused first
			},
			[]string{"SLACK_APPROVERS", "skill careful asks a person", "NEO_SELF_APPROVE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSlackWorld(t)
			w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
				"did": "did:web:neobot.test:agents:e2e", "servers": []any{fsServerSpec(t, "fs", t.TempDir())}})
			w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": tt.skills})
			if tt.edit != nil {
				tt.edit(w.env)
			}
			for _, args := range [][]string{nil, {"check"}} {
				_, stderr, err := run(t, w.env, "", args...)
				if err == nil {
					t.Fatalf("neobot %v accepted the skills:\n%s", args, stderr)
				}
				for _, want := range tt.want {
					if !strings.Contains(stderr, want) {
						t.Errorf("neobot %v error does not say %q:\n%s", args, want, stderr)
					}
				}
			}
		})
	}
}

// TestCheckShowsSkills: `neobot check` prints each tool's class and each
// skill's surface with the places bound to it.
func TestCheckShowsSkills(t *testing.T) {
	w := newSlackWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{fsServerSpec(t, "fs", t.TempDir())}})
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"tools": []string{"matrix://tool/mcp/fs/read_*@2026.8.31"},
			"side_effects": map[string]string{"read": "allow"}, "places": []string{place("CREAD")}},
	}})
	stdout, stderr, err := run(t, w.env, "", "check")
	if err != nil {
		t.Fatalf("check failed: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"fs__write_file (write)", "fs__read_text_file (read)",
		"reader: slack:" + slacktest.TeamID + "/CREAD",
		"tools (4): fs__read_file (read), fs__read_media_file (read), fs__read_multiple_files (read), fs__read_text_file (read)",
		"spend: no", "default: every place without a binding",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, stdout)
		}
	}
}
