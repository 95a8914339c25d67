package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/neobot/neobot/core/llm/llmtest"
)

// chromium finds Debian's Chromium, which make test installs; outside CI
// a machine without it skips the browser tests.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing := t.Skipf
	if os.Getenv("CI") == "true" {
		missing = t.Fatalf
	}
	missing("Chromium is missing: run `make test`, which installs Debian's chromium package")
	return ""
}

// browserModel answers by the last user message: "hi" plainly, "rotate"
// streamed slowly, "save" with a write that waits for approval, "wait"
// not until the test ends.
func browserModel(t *testing.T, srv *llmtest.Server, dir string) {
	hold := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(hold) }) })
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		last := r.Messages[len(r.Messages)-1]
		var asked string
		for _, m := range r.Messages {
			if m.Role == "user" {
				asked = m.Content
			}
		}
		switch {
		case strings.Contains(asked, "rotate"):
			return llmtest.Text(streamingAnswer).Streamed(4, 40*time.Millisecond)
		case strings.Contains(asked, "save") && last.Role == "tool":
			return llmtest.Text("Saved note.txt.")
		case strings.Contains(asked, "save"):
			return llmtest.Calls(llmtest.Call("w1", "fs__write_file", `{"path":"`+filepath.Join(dir, "note.txt")+`","content":"from the page"}`))
		case strings.Contains(asked, "wait"):
			<-hold
			return llmtest.Text("Too late.")
		}
		return llmtest.Text("Hello! I'm **Neo**.")
	})
}

// TestWebPage drives the chat page in headless Chromium against the built
// binary: sign in with the printed link, see a streamed answer grow, allow
// a write with the approval's button and see the outcome, and stop a
// running turn with the stop button. It saves a screenshot of the page.
func TestWebPage(t *testing.T) {
	browser := chromium(t)
	w := newWebWorld(t)
	delete(w.env, "NEO_WEB_USERS")
	browserModel(t, w.model, w.dir)
	p := start(t, w.env, "web", "--user", "me")
	waitHTTP(t, w.base+"/v1/openapi.json", p)
	var link string
	for ctx := waitCtx(t); link == ""; {
		if i := strings.Index(p.output.String(), w.base+"/#login="); i >= 0 {
			link = strings.Fields(p.output.String()[i:])[0]
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no login link printed:\n%s", p.output.String())
		case <-time.After(20 * time.Millisecond): // polling the output, not timing the bot
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.WindowSize(390, 844)) // a phone-width screen
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	send := func(text string) []chromedp.Action[chromedp.Void] {
		return []chromedp.Action[chromedp.Void]{
			chromedp.WaitVisible(chromedp.ID("text")),
			chromedp.SetValue(chromedp.ID("text"), text),
			chromedp.Click(chromedp.ID("send")),
		}
	}
	lastAnswer := `(() => { const m = [...document.querySelectorAll(".msg.assistant:not(.gate)")]; return m.length ? m[m.length-1].textContent : ""; })()`
	// waitJS waits until the expression is true in the page.
	waitJS := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(10*time.Millisecond))
	}
	do := func(what string, steps ...[]chromedp.Action[chromedp.Void]) {
		t.Helper()
		var all []chromedp.Action[chromedp.Void]
		for _, s := range steps {
			all = append(all, s...)
		}
		if err := chromedp.Do(ctx, all...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, p.output.String())
		}
	}
	one := func(a ...chromedp.Action[chromedp.Void]) []chromedp.Action[chromedp.Void] { return a }

	do("sign in and say hi", one(chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("app"))), send("hi"),
		one(waitJS(`document.querySelector(".msg.assistant strong")?.textContent === "Neo"`)))

	// A streamed answer is seen part-written, then whole.
	do("streamed answer starts", send("how do I rotate the deploy key?"),
		one(waitJS(`(() => { const t = `+lastAnswer+`; return t.startsWith("Rotating") && !t.includes("clean slate."); })()`)))
	partial, err := chromedp.Run(ctx, chromedp.Evaluate[string](lastAnswer))
	if err != nil {
		t.Fatal(err)
	}
	do("streamed answer ends", one(waitJS(lastAnswer+`.endsWith("starts from a clean slate.")`)))
	if len(partial) >= len(streamingAnswer) {
		t.Errorf("the answer was never seen part-written (%d characters)", len(partial))
	}

	// An approval: the button allows the write, the outcome shows.
	do("approval", send("save a note"), one(
		chromedp.WaitVisible(chromedp.CSS(".gate button.approve")),
		chromedp.Click(chromedp.CSS(".gate button.approve")),
		waitJS(`document.querySelector(".gate .outcome")?.textContent.startsWith("Approved (Allow once) by me")`),
		waitJS(lastAnswer+` === "Saved note.txt."`),
	))
	if data, err := os.ReadFile(filepath.Join(w.dir, "note.txt")); err != nil || string(data) != "from the page" {
		t.Errorf("note.txt = %q, %v", data, err)
	}

	// The stop button stops a running turn.
	do("stop", send("wait for something slow"), one(
		chromedp.WaitVisible(chromedp.ID("stop")),
		chromedp.Click(chromedp.ID("stop")),
		waitJS(`[...document.querySelectorAll(".msg.notice")].some((m) => m.textContent.startsWith("Stopped."))`),
		waitJS(`document.querySelector("#stop").hidden`),
	))
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "web.png")
	if os.Getenv("NEO_UPDATE_SCREENSHOT") != "" {
		path = filepath.Join(repoRoot(t), "docs", "web.png")
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
}
