package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/manifests"
)

// notesModel answers every conversation the same way, whatever its order:
// "write X" saves X in notes.md, "read" reads notes.md back, through the
// filesystem server's tools; the tool's result becomes the answer.
func notesModel(srv *llmtest.Server) {
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		return notesReply(r)
	})
}

// notesReply is notesModel's answer to a main-model request.
func notesReply(r llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	if last.Role == llm.RoleTool {
		if strings.Contains(last.ToolCallID, "write") {
			return llmtest.Text("write says: " + strings.TrimSpace(last.Content))
		}
		return llmtest.Text("notes say: " + strings.TrimSpace(last.Content))
	}
	words := strings.Fields(last.Content)
	for i, w := range words {
		switch {
		case w == "write" && i+1 < len(words):
			args, _ := json.Marshal(map[string]string{"path": "notes.md", "content": words[i+1]})
			return llmtest.Calls(llmtest.Call("call-write", "fs__write_file", string(args)))
		case w == "read":
			return llmtest.Calls(llmtest.Call("call-read", "fs__read_text_file", `{"path":"notes.md"}`))
		}
	}
	return llmtest.Text("say write or read")
}

// placeManifest is the default manifest as shipped, run from the npm
// install rather than through npx (the tests run offline), with its idle
// timeout and process bound, where it has them, set for the test.
func placeManifest(t *testing.T, idle string, maxProcs int) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(manifests.Default, &m); err != nil {
		t.Fatal(err)
	}
	fs := m["servers"].([]any)[0].(map[string]any)
	local := fsServerSpec(t, "fs", "")
	var args []any
	for _, a := range fs["args"].([]any) { // drop npx's -y and the package
		if s := a.(string); s != "-y" && !strings.HasPrefix(s, "@modelcontextprotocol/") {
			args = append(args, a)
		}
	}
	fs["command"], fs["args"] = local["command"], args
	if _, ok := fs["idle_timeout"]; ok {
		fs["idle_timeout"] = idle
	}
	if _, ok := fs["max_processes"]; ok {
		fs["max_processes"] = maxProcs
	}
	return writeJSON(t, "manifest.json", m)
}

// startIn is start with dir as neobot's working directory.
func startIn(t *testing.T, dir string, kv map[string]string) *process {
	t.Helper()
	needBinary(t)
	cmd := exec.Command(binary)
	cmd.Env, cmd.Dir = env(kv), dir
	p := &process{cmd: cmd, output: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	if err := cmd.Start(); err != nil {
		t.Fatalf("start neobot: %v", err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("neobot (%s) output:\n%s", dir, p.output.String())
		}
	})
	return p
}

// children counts the live child processes of pid.
func children(pid int) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	n := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			n++
		}
	}
	return n
}

// childWatch records the most child processes pid had at once, read from
// /proc until stopped.
type childWatch struct {
	mu   sync.Mutex
	peak int
	stop chan struct{}
	done chan struct{}
}

func watchChildren(pid int) *childWatch {
	w := &childWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			n := children(pid)
			w.mu.Lock()
			w.peak = max(w.peak, n)
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond): // sampling /proc, not timing the bot
			}
		}
	}()
	return w
}

func (w *childWatch) end() int {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak
}

// waitChildren waits until pid has n live children.
func waitChildren(t *testing.T, p *process, n int) {
	t.Helper()
	ctx := waitCtx(t)
	for children(p.cmd.Process.Pid) != n {
		select {
		case <-ctx.Done():
			t.Fatalf("neobot %d has %d child processes, want %d", p.cmd.Process.Pid, children(p.cmd.Process.Pid), n)
		case <-time.After(20 * time.Millisecond): // polling /proc, not timing the bot
		}
	}
}

// TestToolWorkspacePerPlace drives two neobots, each serving its own Slack
// workspace, from one working directory with the default manifest, the
// first serving the web too. The Slack workspaces and a web user each
// write notes.md and read it back: each reads its own. The first neobot
// may run two filesystem processes: a third place stops the one idle the
// longest, and it never has more. The second one's idle process stops.
func TestToolWorkspacePerPlace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts child processes in /proc")
	}
	dir := t.TempDir()
	model := llmtest.New(t)
	notesModel(model)
	addr, healthAddr := freeAddr(t), freeAddr(t)
	ww := &webWorld{base: "http://" + addr, model: model}
	var users []string
	for _, name := range []string{"alice", "bob"} {
		token, hash, err := web.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, name+"="+hash)
		if name == "alice" {
			ww.alice = token
		} else {
			ww.bob = token
		}
	}
	slack := func(team, idle, extra string) (*slacktest.Server, map[string]string) {
		s := slacktest.New(t)
		s.Team = team
		kv := map[string]string{
			"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": model.BaseURL(),
			"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_MANIFEST": placeManifest(t, idle, 2),
			"SLACK_BOT_TOKEN": "xoxb-e2e-bot-token", "SLACK_APP_TOKEN": "xapp-e2e-app-token",
			"SLACK_API_URL": s.APIURL(),
		}
		if extra != "" {
			kv["NEO_WEB_ADDR"], kv["NEO_WEB_USERS"] = extra, strings.Join(users, ",")
			kv["NEO_HEALTH_ADDR"] = healthAddr
		}
		return s, kv
	}
	// The first keeps its processes until the test ends, so the bound,
	// not the idle timeout, decides which one stops.
	s1, env1 := slack("T0ONE", "10m", addr)
	s2, env2 := slack("T0TWO", "1s", "")
	p1 := startIn(t, dir, env1)
	p2 := startIn(t, dir, env2)
	for _, s := range []*slacktest.Server{s1, s2} {
		if err := s.WaitConnected(waitCtx(t)); err != nil {
			t.Fatalf("neobot never connected to Slack: %v", err)
		}
	}
	waitHTTP(t, ww.base+"/v1/openapi.json", p1)
	watch := watchChildren(p1.cmd.Process.Pid)

	slackSay := func(s *slacktest.Server, text, want string) string {
		t.Helper()
		d := s.Mention(slacktest.Msg{User: "UALICE", Text: text})
		w := &slackWorld{slack: s}
		return w.answerIn(t, "C0GENERAL", d.TS, want).Rendered()
	}
	webSay := func(token, msg, want string) string {
		t.Helper()
		var created struct{ ID string }
		ww.call(t, token, "POST", "/v1/conversations", map[string]any{}, &created)
		events := ww.follow(t, token, created.ID, "")
		defer events.cancel()
		ww.call(t, token, "POST", "/v1/conversations/"+created.ID+"/messages", map[string]string{"text": msg}, nil)
		e, _ := events.next(t, "answer")
		if !strings.Contains(text(e), want) {
			t.Errorf("web answer to %q = %q, want %q", msg, text(e), want)
		}
		return text(e)
	}

	slackSay(s1, "write one", "Successfully wrote")
	slackSay(s2, "write two", "Successfully wrote")
	webSay(ww.alice, "write alice", "Successfully wrote")
	// The bound: T0ONE's process is idle the longest and stops for Bob's.
	webSay(ww.bob, "write bob", "Successfully wrote")

	for _, c := range []struct {
		name, got, want string
	}{
		{"Slack T0ONE", slackSay(s1, "read", "notes say:"), "one"},
		{"Slack T0TWO", slackSay(s2, "read", "notes say:"), "two"},
		{"web alice", webSay(ww.alice, "read", "notes say:"), "alice"},
		{"web bob", webSay(ww.bob, "read", "notes say:"), "bob"},
	} {
		if !strings.Contains(c.got, "notes say: "+c.want) {
			t.Errorf("%s reads back %q, want only its own notes (%q)", c.name, c.got, c.want)
		}
	}
	for _, rel := range []string{"slack.T0ONE", "slack.T0TWO", "web.web.alice", "web.web.bob"} {
		if _, err := os.Stat(filepath.Join(dir, "workspace", rel, "notes.md")); err != nil {
			t.Errorf("notes of %s: %v", rel, err)
		}
	}

	if _, body, err := get("http://" + healthAddr + "/readyz"); err != nil || !strings.Contains(body, "fs up (2 place processes)") {
		t.Errorf("/readyz = %q, %v; want the tools line to count the place processes", body, err)
	}
	if peak := watch.end(); peak != 2 {
		t.Errorf("the first neobot had at most %d filesystem processes at once, want the bound 2", peak)
	}
	if !strings.Contains(p1.output.String(), `"reason":"evicted"`) {
		t.Errorf("the first neobot never stopped a process for the bound")
	}
	// The second one's process stops once idle for its second.
	waitChildren(t, p2, 0)
	if !strings.Contains(p2.output.String(), `"reason":"idle"`) {
		t.Errorf("the second neobot's process stopped, but not for being idle")
	}
	p1.stop(t)
	p2.stop(t)
}
