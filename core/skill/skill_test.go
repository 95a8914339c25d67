package skill

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// manifest declares a filesystem server and a chain server.
func manifest(t testing.TB) *mcp.Manifest {
	t.Helper()
	m, err := mcp.Parse([]byte(`{"did": "did:key:z", "servers": [
		{"alias": "fs", "transport": "stdio", "command": "srv", "version": "2026.8.31",
		 "tools": ["read_file", "read_text_file", "list_directory", "write_file"],
		 "side_effects": "read", "tool_side_effects": {"write_file": "write"}},
		{"alias": "chain", "transport": "stdio", "command": "srv", "version": "1.2.0", "tools": ["balance", "transfer"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func compile(t testing.TB, specs string) *Set {
	t.Helper()
	parsed, err := Parse([]byte(specs))
	if err != nil {
		t.Fatal(err)
	}
	set, err := Compile(parsed, manifest(t))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func uri(alias, tool, version string) mcp.ToolURI {
	return mcp.ToolURI{Alias: alias, Tool: tool, Version: version}
}

func TestListsGlobs(t *testing.T) {
	set := compile(t, `{"r": {"tools": ["matrix://tool/mcp/fs/read_*@2026.8.31", "matrix://tool/mcp/fs/list_director?@2026.8.31"]},
		"none": {"tools": []}, "all": {}}`)
	tests := []struct {
		skill string
		u     mcp.ToolURI
		want  bool
	}{
		{"r", uri("fs", "read_file", "2026.8.31"), true},
		{"r", uri("fs", "read_text_file", "2026.8.31"), true},
		{"r", uri("fs", "list_directory", "2026.8.31"), true},
		{"r", uri("fs", "write_file", "2026.8.31"), false},
		{"r", uri("fs", "read_file", "2026.9.1"), false}, // another version is another tool
		{"r", uri("chain", "read_file", "2026.8.31"), false},
		{"none", uri("fs", "read_file", "2026.8.31"), false},
		{"all", uri("chain", "transfer", "1.2.0"), true},
	}
	for _, tt := range tests {
		if got := set.byName[tt.skill].Lists(tt.u); got != tt.want {
			t.Errorf("skill %s Lists(%s) = %v, want %v", tt.skill, tt.u, got, tt.want)
		}
	}
}

func TestCheckClasses(t *testing.T) {
	set := compile(t, `{"ro": {"side_effects": {"none": "allow", "read": "allow", "write": "deny"}},
		"careful": {"side_effects": {"read": "allow", "write": "ask", "external": "ask"}, "spend": true},
		"open": {}}`)
	read, write := uri("fs", "read_file", "2026.8.31"), uri("fs", "write_file", "2026.8.31")
	tests := []struct {
		skill      string
		u          mcp.ToolURI
		e          mcp.Effect
		want       Rule
		wantReason string
	}{
		{"ro", read, mcp.EffectRead, Allow, ""},
		{"ro", write, mcp.EffectWrite, Deny, `skill "ro" denies write calls (side_effects.write)`},
		{"ro", write, mcp.EffectExternal, Deny, "side_effects.external"}, // unnamed class: denied
		{"ro", write, mcp.EffectSpend, Deny, "spend"},
		{"careful", write, mcp.EffectWrite, Ask, `skill "careful" asks before write calls`},
		{"careful", read, mcp.EffectNone, Deny, "side_effects.none"},
		{"careful", read, mcp.EffectSpend, Allow, ""},
		{"open", write, mcp.EffectExternal, Allow, ""},
		{"open", write, mcp.EffectSpend, Deny, ""}, // a configured skill spends only when it says so
	}
	for _, tt := range tests {
		v := set.byName[tt.skill].Check(tt.u, tt.e)
		if v.Rule != tt.want || !strings.Contains(v.Reason, tt.wantReason) {
			t.Errorf("skill %s Check(%s, %s) = %+v, want %s with reason containing %q", tt.skill, tt.u, tt.e, v, tt.want, tt.wantReason)
		}
	}
	if v := compile(t, `{"r": {"tools": []}}`).byName["r"].Check(read, mcp.EffectRead); v.Rule != Deny || !strings.Contains(v.Reason, "does not list matrix://tool/mcp/fs/read_file@2026.8.31") {
		t.Errorf("unlisted tool: %+v, want a denial naming its URI", v)
	}
}

// TestCheckUndeclared: a tool whose class nobody declared is asked
// wherever an external call would run outright, the built-in default
// skill included, and otherwise gets the external rule.
func TestCheckUndeclared(t *testing.T) {
	set := compile(t, `{"ro": {"side_effects": {"read": "allow"}},
		"ext": {"side_effects": {"external": "allow"}},
		"careful": {"side_effects": {"external": "ask"}},
		"narrow": {"tools": ["matrix://tool/mcp/fs/read_*@2026.8.31"]},
		"open": {}}`)
	read, write := uri("fs", "read_file", "2026.8.31"), uri("fs", "write_file", "2026.8.31")
	var none *Set
	tests := []struct {
		sk         *Skill
		u          mcp.ToolURI
		want       Rule
		wantReason string
	}{
		{none.For(core.Inbound{}), write, Ask, `declares no side effects for matrix://tool/mcp/fs/write_file@2026.8.31, so skill "default" asks`},
		{set.byName["open"], write, Ask, `skill "open" asks before each call`},
		{set.byName["ext"], write, Ask, `skill "ext" asks before each call`},
		{set.byName["careful"], write, Ask, `skill "careful" asks before external calls`},
		{set.byName["ro"], write, Deny, "side_effects.external"},
		{set.byName["narrow"], write, Deny, "does not list"},
		{set.byName["narrow"], read, Ask, "asks before each call"},
	}
	for _, tt := range tests {
		v := tt.sk.CheckUndeclared(tt.u)
		if v.Rule != tt.want || !strings.Contains(v.Reason, tt.wantReason) {
			t.Errorf("skill %s CheckUndeclared(%s) = %+v, want %s with reason containing %q", tt.sk.Name, tt.u, v, tt.want, tt.wantReason)
		}
	}
}

func TestForPlaces(t *testing.T) {
	set := compile(t, `{
		"finance": {"places": ["slack:T1/CFIN"]},
		"team": {"places": ["slack:T1"]},
		"dms": {"places": ["slack:dm"]},
		"guild": {"places": ["discord"]}}`)
	at := func(platform, ws, ch string, dm bool) core.Inbound {
		return core.Inbound{Thread: core.Thread{Platform: platform, Workspace: ws, Channel: ch, ID: "1"}, DM: dm}
	}
	tests := []struct {
		in   core.Inbound
		want string
	}{
		{at("slack", "T1", "CFIN", false), "finance"},
		{at("slack", "T1", "CGEN", false), "team"},
		{at("slack", "T2", "CFIN", false), DefaultName}, // another workspace's channel of the same ID
		{at("slack", "T1", "D1", true), "dms"},
		{at("discord", "G1", "C1", false), "guild"},
		{at("discord", "@me", "D1", true), "guild"}, // no discord:dm binding: the platform's
		{at("terminal", "local", "tty", false), DefaultName},
	}
	for _, tt := range tests {
		if got := set.For(tt.in).Name; got != tt.want {
			t.Errorf("For(%s dm=%v) = %s, want %s", tt.in.Thread, tt.in.DM, got, tt.want)
		}
	}
	var none *Set
	if sk := none.For(at("slack", "T1", "C1", false)); sk.Name != DefaultName || !sk.Spend || sk.Rule(mcp.EffectExternal) != Allow || !sk.Lists(uri("x", "y", "1.0.0")) {
		t.Errorf("the built-in default must allow everything, as before skills: %+v", sk)
	}
}

func TestDefaultOverride(t *testing.T) {
	set := compile(t, `{"default": {"instructions": "Answer in French.", "side_effects": {"read": "allow"}}}`)
	sk := set.For(core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T", Channel: "C", ID: "1"}})
	if sk.Instructions != "Answer in French." || sk.Rule(mcp.EffectWrite) != Deny || sk.Spend {
		t.Errorf("a configured default replaces the built-in one: %+v", sk)
	}
	if len(set.Skills()) != 1 {
		t.Errorf("Skills() = %d skills, want the one default", len(set.Skills()))
	}
	if !compile(t, `{"a": {"side_effects": {"write": "ask"}}}`).Asks() || compile(t, `{"a": {}}`).Asks() {
		t.Error("Asks must report whether any skill asks")
	}
}

// TestCompileErrors: every start-up error names the skill, what is wrong
// and the fix.
// TestCompileLimitsExactly: a skill at each limit, 4 prompts and 8000
// bytes of instructions, compiles.
func TestCompileLimitsExactly(t *testing.T) {
	specs := map[string]Spec{"a": {Instructions: strings.Repeat("x", 8000), Prompts: []Prompt{
		{Title: "1", Message: "1"}, {Title: "2", Message: "2"}, {Title: "3", Message: "3"}, {Title: "4", Message: "4"}}}}
	if _, err := Compile(specs, manifest(t)); err != nil {
		t.Errorf("Compile at the limits = %v, want it accepted", err)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, specs string
		want        []string
	}{
		{"bad name", `{"Finance Team": {}}`, []string{`skill "Finance Team"`, "lowercase"}},
		{"not a URI", `{"a": {"tools": ["fs/read_file@2026.8.31"]}}`, []string{`tools[0]`, "is not a tool URI", "matrix://tool/mcp/<server>"}},
		{"unpinned", `{"a": {"tools": ["matrix://tool/mcp/fs/read_*"]}}`, []string{"is not pinned", "append @<version>"}},
		{"version mismatch", `{"a": {"tools": ["matrix://tool/mcp/fs/read_*@2026.9.1"]}}`, []string{"pins fs@2026.9.1", "the manifest pins fs@2026.8.31"}},
		{"unknown server", `{"a": {"tools": ["matrix://tool/mcp/git/log@1.0.0"]}}`, []string{`server "git"`, "does not declare"}},
		{"matches nothing", `{"a": {"tools": ["matrix://tool/mcp/fs/delete_*@2026.8.31"]}}`, []string{"matches none", "read_file, read_text_file"}},
		{"bad glob", `{"a": {"tools": ["matrix://tool/mcp/fs/read_[@2026.8.31"]}}`, []string{"malformed"}},
		{"unknown class", `{"a": {"side_effects": {"delete": "deny"}}}`, []string{"side_effects", `"delete" is not a side-effect class`}},
		{"spend as a class", `{"a": {"side_effects": {"spend": "allow"}}}`, []string{`"spend": true or false`}},
		{"unknown rule", `{"a": {"side_effects": {"write": "maybe"}}}`, []string{"side_effects.write", "allow, ask or deny"}},
		{"bad place", `{"a": {"places": ["#finance"]}}`, []string{`place "#finance"`, "slack:<team>/<channel>"}},
		{"place bound twice", `{"a": {"places": ["slack:T1/C1"]}, "b": {"places": ["slack:T1/C1"]}}`, []string{`skill "b"`, `already bound to skill "a"`}},
		{"too many prompts", `{"a": {"prompts": [{"title":"1","message":"1"},{"title":"2","message":"2"},{"title":"3","message":"3"},{"title":"4","message":"4"},{"title":"5","message":"5"}]}}`, []string{"5 prompts", "4 or fewer"}},
		{"blank prompt", `{"a": {"prompts": [{"title": "Hi"}]}}`, []string{"prompts[0]", "title and a message"}},
		{"no tool in the URI", `{"a": {"tools": ["matrix://tool/mcp/fs"]}}`, []string{"is not a tool URI"}},
		{"no server in the URI", `{"a": {"tools": ["matrix://tool/mcp//read_file@2026.8.31"]}}`, []string{"is not a tool URI"}},
		{"empty version", `{"a": {"tools": ["matrix://tool/mcp/fs/read_file@"]}}`, []string{"is not pinned"}},
		{"instructions over 8000 bytes", `{"a": {"instructions": "` + strings.Repeat("x", 8001) + `"}}`, []string{"8001 bytes", "under 8000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, err := Parse([]byte(tt.specs))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Compile(specs, manifest(t))
			if err == nil {
				t.Fatalf("Compile accepted %s", tt.specs)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := Parse([]byte(`{"a": {"tool": []}}`)); err == nil || !strings.Contains(err.Error(), `unknown field "tool"`) {
		t.Errorf("a misspelt field must be refused, got %v", err)
	}
	if _, err := Compile(map[string]Spec{"a": {Tools: []string{"matrix://tool/mcp/fs/read_file@1.0.0"}}}, nil); err == nil || !strings.Contains(err.Error(), "no manifest") {
		t.Errorf("tools without a manifest: %v", err)
	}
}

func BenchmarkCheck(b *testing.B) {
	set := compile(b, `{"r": {"tools": ["matrix://tool/mcp/fs/read_*@2026.8.31", "matrix://tool/mcp/fs/list_*@2026.8.31"],
		"side_effects": {"read": "allow"}, "places": ["slack:T1/C1"]}}`)
	in := core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1"}}
	u := uri("fs", "list_directory", "2026.8.31")
	b.ReportAllocs()
	for b.Loop() {
		if v := set.For(in).Check(u, mcp.EffectRead); v.Rule != Allow {
			b.Fatal(v)
		}
	}
}
