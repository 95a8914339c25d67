package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
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

// markdownAnswer has every element the page renders, and raw HTML that
// must show as text, never run.
const markdownAnswer = "## Rotating the key\n\n" +
	"Three steps, see [the runbook](https://example.com/runbook):\n\n" +
	"1. Create the key\n   - in the vault\n   - with the deploy role\n2. Update CI\n3. Revoke the old key\n\n" +
	"> Keys older than **90 days** are refused.\n\n" +
	"| Step | Who |\n| --- | --- |\n| create | ops |\n| revoke | sec |\n\n" +
	"```sh\nvault write keys/deploy role=deploy\n```\n\n" +
	"<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"

// stoppableAnswer is long and streamed slowly: Stop lands part-way.
var stoppableAnswer = strings.Repeat("This answer goes on for a while, one clause after another. ", 60)

// browserModel answers by the last user message: "hi" plainly, "rotate"
// streamed slowly, "markdown" with every markdown element, "essay" long
// and slow, "save" with a write that waits for approval, "book" and
// "size" with the asker's questions (a form, a choice), "logo" with two
// tool calls (a picture and an echo), "wait" not until the test ends, a
// message with an attached file by quoting the file, one showing a
// picture by saying it sees it.
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
		case strings.Contains(asked, "Attached file"):
			if i := strings.Index(asked, "secret-word-"); i >= 0 {
				return llmtest.Text("The file says " + strings.Fields(asked[i:])[0] + ".")
			}
			return llmtest.Text("I could not read the file.")
		case strings.Contains(asked, "rotate"):
			return llmtest.Text(streamingAnswer).Streamed(4, 40*time.Millisecond)
		case strings.Contains(asked, "markdown"):
			return llmtest.Text(markdownAnswer)
		case strings.Contains(asked, "essay"):
			return llmtest.Text(stoppableAnswer).Streamed(8, 40*time.Millisecond)
		case strings.Contains(asked, "save") && last.Role == "tool":
			return llmtest.Text("Saved note.txt.")
		case strings.Contains(asked, "save"):
			return llmtest.Calls(llmtest.Call("w1", "fs__write_file", `{"path":"`+filepath.Join(dir, "note.txt")+`","content":"from the page"}`))
		case strings.Contains(asked, "book") && last.Role == "tool":
			return llmtest.Text("Booked.")
		case strings.Contains(asked, "book"):
			return llmtest.Calls(llmtest.Call("b1", "asker__book", `{}`))
		case strings.Contains(asked, "size") && last.Role == "tool":
			return llmtest.Text("No size, then.")
		case strings.Contains(asked, "size"):
			return llmtest.Calls(llmtest.Call("s1", "asker__pick_size", `{}`))
		case strings.Contains(asked, "logo") && last.Role == "tool":
			return llmtest.Text("Here is the MCP logo.")
		case strings.Contains(asked, "logo"):
			return llmtest.Calls(llmtest.Call("c1", "every__get-tiny-image", `{}`), llmtest.Call("c2", "every__echo", `{"message":"hello from echo"}`))
		case strings.Contains(asked, "my notes") && last.Role == "tool":
			return llmtest.Text("Open the link above, then ask again.")
		case strings.Contains(asked, "my notes"):
			return llmtest.Calls(llmtest.Call("n1", "notes__note", `{}`))
		case len(last.Images) > 0:
			return llmtest.Text("I see your picture.")
		case strings.Contains(asked, "wait"):
			<-hold
			return llmtest.Text("Too late.")
		}
		return llmtest.Text("Hello! I'm **Neo**.")
	})
}

// The two screens every page test runs at.
var (
	desktop = screen{"desktop", 1366, 900}
	phone   = screen{"phone", 390, 844}
)

type screen struct {
	name          string
	width, height int
}

// page is a headless Chromium on the chat page of a running neobot web.
type page struct {
	t     *testing.T
	w     *webWorld
	p     *process
	ctx   context.Context
	shots string // where screenshots go
}

// openPage starts neobot web (its login link signs in "me") and a browser
// of size s, not yet on the page; env, when given, adds to the settings.
func openPage(t *testing.T, s screen, env ...map[string]string) *page {
	t.Helper()
	browser := chromium(t)
	w := newWebWorld(t)
	delete(w.env, "NEO_WEB_USERS")
	for _, e := range env {
		maps.Copy(w.env, e)
	}
	browserModel(t, w.model, w.dir)
	pg := &page{t: t, w: w}
	pg.startServer()
	pg.openBrowser(s, browser)
	return pg
}

// openBrowser starts a headless Chromium of size s for pg, on no page
// yet.
func (pg *page) openBrowser(s screen, browser string) {
	t := pg.t
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.WindowSize(s.width, s.height))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 150*time.Second)
	t.Cleanup(cancelTimeout)
	pg.ctx = ctx
	// Headless Chromium keeps a window at least 500 pixels wide: the
	// viewport is set exactly, as a phone's would be.
	pg.do("set the screen size", chromedp.EmulateViewport(int64(s.width), int64(s.height)))
	// The screenshots are the tests' artefacts: kept after the run, in
	// NEOBOT_SCREENSHOTS or else the system's temporary directory.
	pg.shots = cmp.Or(os.Getenv("NEOBOT_SCREENSHOTS"), filepath.Join(os.TempDir(), "neobot-screenshots"))
	if err := os.MkdirAll(pg.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", pg.shots)
}

// startServer starts neobot web on the world's address.
func (pg *page) startServer() {
	pg.t.Helper()
	pg.p = start(pg.t, pg.w.env, "web", "--user", "me")
	waitHTTP(pg.t, pg.w.base+"/v1/openapi.json", pg.p)
}

// link returns the newest login link the server printed.
func (pg *page) link() string {
	pg.t.Helper()
	for ctx := waitCtx(pg.t); ; {
		out := pg.p.output.String()
		if i := strings.LastIndex(out, pg.w.base+"/#login="); i >= 0 {
			return strings.Fields(out[i:])[0]
		}
		select {
		case <-ctx.Done():
			pg.t.Fatalf("no login link printed:\n%s", out)
		case <-time.After(20 * time.Millisecond): // polling the output, not timing the bot
		}
	}
}

type steps = []chromedp.Action[chromedp.Void]

// do runs steps, failing the test with what and the server's output.
func (pg *page) do(what string, all ...chromedp.Action[chromedp.Void]) {
	pg.t.Helper()
	if err := chromedp.Do(pg.ctx, all...); err != nil {
		pg.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
		pg.t.Fatalf("%s: %v\n%s", what, err, pg.p.output.String())
	}
}

// until waits until the expression is true in the page.
func until(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(10*time.Millisecond))
}

// eval returns the value of a JavaScript expression in the page.
func eval[T any](pg *page, expr string) T {
	pg.t.Helper()
	v, err := chromedp.Run(pg.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		pg.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// signIn opens the newest login link and waits for the message box.
func (pg *page) signIn() {
	pg.t.Helper()
	// From a blank page: a link differing only in its #fragment would not
	// load the page again.
	pg.do("sign in", chromedp.Navigate("about:blank"), chromedp.Navigate(pg.link()), chromedp.WaitVisible(chromedp.ID("text")))
}

// send types text into the message box and presses Send.
func send(text string) steps {
	return steps{
		chromedp.WaitVisible(chromedp.ID("text")),
		chromedp.SetValue(chromedp.ID("text"), text),
		chromedp.Click(chromedp.ID("send")),
	}
}

// typeInto sets the value of input id as typing would, input event and
// all.
func typeInto(id, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("input")); })()`, id, text))
}

func (pg *page) send(what, text string, then ...chromedp.Action[chromedp.Void]) {
	pg.t.Helper()
	pg.do(what, append(send(text), then...)...)
}

// shot saves a screenshot of what is on screen as name.png.
func (pg *page) shot(name string) string {
	pg.t.Helper()
	png, err := chromedp.Run(pg.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		pg.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	path := filepath.Join(pg.shots, strings.ReplaceAll(pg.t.Name(), "/", "-")+"-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		pg.t.Fatal(err)
	}
	return path
}

const lastAnswer = `(() => { const m = [...document.querySelectorAll(".msg.assistant:not(.gate)")]; return m.length ? m[m.length-1].textContent : ""; })()`

// onScreen is true when the element is wholly inside the window.
func onScreen(id string) string {
	return `(() => { const r = document.getElementById("` + id + `").getBoundingClientRect();
		return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; })()`
}

// axe runs axe-core (npm's, as make test installs it) on the page and
// fails the test on any serious or critical violation.
func (pg *page) axe(when string) {
	pg.t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot(pg.t), "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		pg.t.Fatalf("axe-core is missing: run npm ci (make test does): %v", err)
	}
	if _, err := chromedp.Run(pg.ctx, chromedp.Evaluate[bool](string(src)+";true")); err != nil {
		pg.t.Fatalf("load axe-core: %v", err)
	}
	found, err := chromedp.Run(pg.ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then((r) =>
		r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
			.map((v) => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.map((n) => n.target.join(" ")).join(", ")).join("\n"))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		pg.t.Fatalf("run axe-core: %v", err)
	}
	if found != "" {
		pg.t.Errorf("accessibility (axe-core) %s:\n%s", when, found)
	}
}

// forScreens runs test at both screen sizes.
func forScreens(t *testing.T, test func(t *testing.T, s screen)) {
	for _, s := range []screen{desktop, phone} {
		t.Run(s.name, func(t *testing.T) { test(t, s) })
	}
}

// TestWebPage drives the chat page in headless Chromium against the built
// binary, at a desktop's and a phone's size: sign in with the printed
// link with the message box focused, see a streamed answer grow, allow a
// write with the approval's button and see the outcome, and stop a
// running turn with the stop button. It checks accessibility with
// axe-core.
func TestWebPage(t *testing.T) {
	forScreens(t, func(t *testing.T, s screen) {
		pg := openPage(t, s)
		pg.signIn()
		if w := eval[int](pg, `innerWidth`); w != s.width {
			t.Fatalf("the page is %d pixels wide, want %d", w, s.width)
		}
		if focused := eval[string](pg, `document.activeElement.id`); focused != "text" {
			t.Errorf("at load the focus is on %q, not the message box", focused)
		}
		pg.axe("signed in, empty")
		pg.send("say hi", "hi", until(`document.querySelector(".msg.assistant strong")?.textContent === "Neo"`),
			until(`document.querySelectorAll("#conversations li").length === 1`))
		if cur := eval[int](pg, `document.querySelectorAll('#conversations [aria-current="true"]').length`); cur != 1 {
			t.Errorf("%d conversations are marked aria-current, want the open one", cur)
		}

		// A streamed answer is seen part-written, then whole; the live
		// region announces it once, whole.
		pg.send("streamed answer starts", "how do I rotate the deploy key?",
			until(`(() => { const t = `+lastAnswer+`; return t.startsWith("Rotating") && !t.includes("clean slate."); })()`))
		partial := eval[string](pg, lastAnswer)
		if said := eval[string](pg, `document.getElementById("announce").textContent`); strings.HasPrefix(said, "Rotating") {
			t.Errorf("the live region announced the answer before it was finished: %q", said)
		}
		pg.do("streamed answer ends", until(lastAnswer+`.endsWith("starts from a clean slate.")`),
			until(`document.getElementById("announce").textContent.endsWith("clean slate.")`))
		if len(partial) >= len(streamingAnswer) {
			t.Errorf("the answer was never seen part-written (%d characters)", len(partial))
		}

		// An approval: the button allows the write, the outcome shows.
		pg.send("approval", "save a note",
			chromedp.WaitVisible(chromedp.CSS(".gate button.approve")),
			// The write waiting for approval is a running step above it.
			until(`document.querySelector(".steps li[data-state=in_progress] .state")?.getAttribute("aria-label") === "Running"`))
		pg.shot("approval")
		pg.axe("with an approval")
		pg.do("approve",
			chromedp.Click(chromedp.CSS(".gate button.approve")),
			until(`document.querySelector(".gate .outcome")?.textContent.startsWith("Approved (Allow once) by me")`),
			until(lastAnswer+` === "Saved note.txt."`),
			until(`document.querySelector(".steps li:last-child")?.dataset.state === "complete"`),
		)
		if data, err := os.ReadFile(filepath.Join(pg.w.dir, "note.txt")); err != nil || string(data) != "from the page" {
			t.Errorf("note.txt = %q, %v", data, err)
		}

		// The stop button stops a running turn.
		pg.send("stop", "wait for something slow",
			chromedp.WaitVisible(chromedp.ID("stop")),
			chromedp.Click(chromedp.ID("stop")),
			until(`[...document.querySelectorAll(".msg.notice")].some((m) => m.textContent.startsWith("Stopped."))`),
			until(`document.querySelector("#stop").hidden`),
		)
		pg.shot("after-stop")
		pg.p.stop(t)
	})
}

// TestWebPageMarkdown: an answer's headings, nested ordered list, quote,
// table, code (with a copy button) and link render as such, raw HTML
// shows as text and never runs, and the user's own multi-line message
// keeps its lines. The screenshots are docs/web-desktop.png and
// docs/web-phone.png when NEO_UPDATE_SCREENSHOT is set.
func TestWebPageMarkdown(t *testing.T) {
	forScreens(t, func(t *testing.T, s screen) {
		pg := openPage(t, s)
		pg.signIn()
		pg.send("ask for markdown", "Show me markdown, please:\nline two\nline three",
			until(`document.querySelector(".msg.assistant table") !== null`))
		checks := map[string]string{
			"a heading":                 `document.querySelector(".msg.assistant h2")?.textContent === "Rotating the key"`,
			"an ordered list":           `document.querySelectorAll(".msg.assistant ol > li").length === 3`,
			"a nested list":             `document.querySelectorAll(".msg.assistant ol > li > ul > li").length === 2`,
			"a quote":                   `document.querySelector(".msg.assistant blockquote strong")?.textContent === "90 days"`,
			"a table":                   `document.querySelectorAll(".msg.assistant table tbody tr").length === 2 && document.querySelector(".msg.assistant th")?.textContent === "Step"`,
			"code with a copy button":   `document.querySelector(".msg.assistant .code pre code")?.textContent.includes("vault write") && document.querySelector(".msg.assistant .code button.copy") !== null`,
			"a link opening apart":      `(() => { const a = document.querySelector(".msg.assistant a"); return a.href === "https://example.com/runbook" && a.target === "_blank" && a.rel.includes("noopener"); })()`,
			"raw HTML as text":          `document.querySelector(".msg.assistant").textContent.includes("<script>") && document.querySelector(".msg.assistant script, .msg.assistant img") === null`,
			"no script ran":             `document.title === "Neo"`,
			"the user's lines kept":     `document.querySelector(".msg.user").innerText.trim() === "Show me markdown, please:\nline two\nline three"`,
			"the box on screen":         onScreen("text"),
			"the send button on screen": onScreen("send"),
		}
		for what, expr := range checks {
			if !eval[bool](pg, expr) {
				t.Errorf("%s: not seen (%s)", what, expr)
			}
		}
		if s == phone {
			if eval[bool](pg, `document.getElementById("sidebar").offsetParent !== null`) {
				t.Error("on a phone the conversation list takes the screen before it is asked for")
			}
			pg.do("open the conversations", chromedp.Click(chromedp.ID("menu")), chromedp.WaitVisible(chromedp.ID("new")))
			pg.shot("menu")
			pg.axe("with the conversations open")
			pg.do("close the conversations", chromedp.Click(chromedp.ID("menu")), until(`document.getElementById("sidebar").offsetParent === null`))
		}
		path := pg.shot("markdown")
		pg.axe("with a markdown answer")
		if os.Getenv("NEO_UPDATE_SCREENSHOT") != "" && path != "" {
			data, _ := os.ReadFile(path)
			if err := os.WriteFile(filepath.Join(repoRoot(t), "docs", "web-"+s.name+".png"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		pg.do("copy the code", chromedp.Click(chromedp.CSS(".code button.copy")),
			until(`document.querySelector(".code button.copy").textContent !== "Copy"`))
		pg.p.stop(t)
	})
}

// TestWebPageScroll: on a phone, after 20 answers the message box and
// Send are still on screen (the message list scrolls, not the page); a
// streamed answer is followed to its end; once the reader scrolls up it
// is not, and "Jump to latest" brings them back; Stop keeps the words
// already written, marked stopped, and so do a reload and the model's
// next turn.
func TestWebPageScroll(t *testing.T) {
	pg := openPage(t, phone)
	pg.w.env["NEO_USER_MESSAGES_PER_MINUTE"] = "0" // 21 messages in a few seconds
	pg.p.stop(t)
	pg.startServer()
	pg.signIn()
	for i := range 20 {
		pg.send(fmt.Sprintf("answer %d", i+1), fmt.Sprintf("hi number %d", i+1),
			until(fmt.Sprintf(`document.querySelectorAll(".msg.assistant").length === %d`, i+1)))
	}
	pg.shot("20-answers")
	for what, expr := range map[string]string{
		"the message box":       onScreen("text"),
		"the send button":       onScreen("send"),
		"the page not scrolled": `document.scrollingElement.scrollTop === 0 && document.scrollingElement.scrollHeight <= innerHeight`,
		"the newest answer":     `(() => { const m = document.getElementById("messages"); return m.scrollHeight - m.scrollTop - m.clientHeight < 2; })()`,
	} {
		if !eval[bool](pg, expr) {
			t.Errorf("after 20 answers on a phone, %s is not on screen (%s)", what, expr)
		}
	}

	// Followed while it streams: the list stays at its bottom as it grows.
	atBottom := `(() => { const m = document.getElementById("messages"); return m.scrollHeight - m.scrollTop - m.clientHeight < 2; })()`
	pg.send("a long answer streams", "write an essay",
		until(lastAnswer+`.length > 400`), until(atBottom), chromedp.WaitVisible(chromedp.ID("stop")))
	if !eval[bool](pg, onScreen("stop")) {
		t.Error("Stop is not on screen while an answer streams")
	}
	// The reader scrolls up: the list stays where they put it.
	pg.do("scroll up", chromedp.Evaluate[chromedp.Void](`document.getElementById("messages").scrollTop = 0`),
		chromedp.WaitVisible(chromedp.ID("jump")))
	grown := eval[int](pg, lastAnswer+`.length`)
	pg.do("the answer grows", until(lastAnswer+`.length > `+fmt.Sprint(grown+200)))
	if top := eval[float64](pg, `document.getElementById("messages").scrollTop`); top != 0 {
		t.Errorf("the list moved to %v while the reader was reading above", top)
	}
	pg.shot("scrolled-up")
	pg.do("jump to latest", chromedp.Click(chromedp.ID("jump")), until(atBottom), until(`document.getElementById("jump").hidden`))

	// Stop keeps what was written.
	pg.do("stop", chromedp.Click(chromedp.ID("stop")),
		until(`document.querySelector(".msg.assistant.stopped .mark")?.textContent === "Stopped"`))
	kept := eval[string](pg, `document.querySelector(".msg.assistant.stopped").textContent`)
	if !strings.HasPrefix(kept, "This answer goes on") || len(kept) >= len(stoppableAnswer) {
		t.Errorf("the stopped answer shows %d characters (%.40q…), want the part written before Stop", len(kept), kept)
	}
	pg.shot("stopped")

	// The transcript agrees: a reload shows the same words, stopped, and
	// the model's next turn reads them.
	pg.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("text")),
		until(`document.querySelector(".msg.assistant.stopped .mark")?.textContent === "Stopped"`))
	if again := eval[string](pg, `document.querySelector(".msg.assistant.stopped").textContent`); again != kept {
		t.Errorf("after a reload the stopped answer shows %d characters, the page showed %d", len(again), len(kept))
	}
	pg.send("after the stop", "hi after the stop", until(`document.querySelectorAll(".msg.assistant").length === 22`))
	reqs := mainRequests(pg.w.model)
	var seen bool
	for _, m := range reqs[len(reqs)-1].Messages {
		seen = seen || (m.Role == "assistant" && strings.HasPrefix(m.Content, "This answer goes on") && strings.HasSuffix(m.Content, "_(stopped)_"))
	}
	if !seen {
		t.Error("the model's next turn was not given the stopped answer's words")
	}
	pg.p.stop(t)
}

// TestWebPageConversations: conversations are renamed, searched by
// title and by what was said, and deleted with their transcript.
func TestWebPageConversations(t *testing.T) {
	forScreens(t, func(t *testing.T, s screen) {
		pg := openPage(t, s)
		pg.signIn()
		menu := func() chromedp.Action[chromedp.Void] {
			if s == phone {
				return chromedp.Click(chromedp.ID("menu"))
			}
			return chromedp.Sleep(0)
		}
		pg.send("first conversation", "hi about the alpha project", until(`document.querySelectorAll(".msg.assistant").length === 1`))
		pg.do("new conversation", menu(), chromedp.Click(chromedp.ID("new")),
			until(`document.querySelectorAll(".msg").length === 0`),
			until(`document.querySelectorAll("#conversations li").length === 2`),
			until(`document.activeElement.id === "text"`)) // the focus back on the message box
		pg.send("second conversation", "hi about bravo", until(`document.querySelectorAll(".msg.assistant").length === 1`),
			until(`document.querySelectorAll("#conversations li").length === 2`))

		pg.do("rename", chromedp.Click(chromedp.ID("rename")), chromedp.WaitVisible(chromedp.ID("rename-text")),
			chromedp.SetValue(chromedp.ID("rename-text"), "Bravo plans"), chromedp.Click(chromedp.CSS("#rename-form button[type=submit]")),
			until(`document.getElementById("title").textContent === "Bravo plans"`),
			until(`[...document.querySelectorAll("#conversations button")].some((b) => b.textContent === "Bravo plans")`))

		// Search by title, then by content.
		pg.do("search by title", menu(), chromedp.WaitVisible(chromedp.ID("search")), typeInto("search", "plans"),
			until(`document.querySelectorAll("#conversations li").length === 1 && document.querySelector("#conversations button").textContent === "Bravo plans"`))
		pg.shot("search")
		pg.do("search by content", typeInto("search", "ALPHA"),
			until(`document.querySelectorAll("#conversations li").length === 1 && document.querySelector("#conversations button").textContent.includes("alpha project")`))
		pg.do("search for nothing", typeInto("search", "zebra"),
			until(`document.querySelectorAll("#conversations li").length === 0`), chromedp.WaitVisible(chromedp.ID("no-match")))
		pg.do("clear the search", typeInto("search", ""),
			until(`document.querySelectorAll("#conversations li").length === 2`), menu())

		// Delete the open one, with its transcript.
		id := eval[string](pg, `document.querySelector('#conversations [aria-current="true"]').dataset.id`)
		pg.do("delete", chromedp.Click(chromedp.ID("delete")), chromedp.WaitVisible(chromedp.ID("delete-yes")))
		pg.shot("confirm-delete")
		pg.do("confirm", chromedp.Click(chromedp.ID("delete-yes")),
			until(`document.querySelectorAll("#conversations li").length === 1`),
			until(`document.querySelector(".msg.user")?.textContent.includes("alpha")`))
		token := eval[string](pg, `sessionStorage.getItem("neo-token")`)
		if code := pg.w.call(t, token, "GET", "/v1/conversations/"+id, nil, nil); code != 404 {
			t.Errorf("the deleted conversation answers %d, want 404", code)
		}
		pg.p.stop(t)
	})
}

// TestWebPageTrouble: with the server down, sending keeps the typed
// message and says the server can't be reached, and New says so too;
// after a restart the page asks to sign in again in plain words, and the
// message is still there; a used sign-in link shows the server's message.
func TestWebPageTrouble(t *testing.T) {
	forScreens(t, func(t *testing.T, s screen) {
		pg := openPage(t, s)
		used := pg.link()
		pg.signIn()
		pg.send("say hi", "hi", until(`document.querySelectorAll(".msg.assistant").length === 1`))
		menu := func() chromedp.Action[chromedp.Void] {
			if s == phone {
				return chromedp.Click(chromedp.ID("menu"))
			}
			return chromedp.Sleep(0)
		}

		// The server down: the message is kept, the page says why.
		pg.p.stop(t)
		pg.send("send with the server down", "a message typed while the server is down",
			until(`!document.getElementById("error").hidden`), chromedp.WaitVisible(chromedp.ID("net")))
		for what, expr := range map[string]string{
			"the reason":   `document.getElementById("error").textContent.includes("can't be reached")`,
			"the text":     `document.getElementById("text").value === "a message typed while the server is down"`,
			"offline sign": `document.getElementById("net").textContent.startsWith("Offline")`,
		} {
			if !eval[bool](pg, expr) {
				t.Errorf("with the server down, %s is not shown (%s)", what, expr)
			}
		}
		pg.shot("server-down")
		pg.do("new conversation with the server down", chromedp.Evaluate[chromedp.Void](`document.getElementById("error").hidden = true`),
			menu(), chromedp.Click(chromedp.ID("new")),
			until(`!document.getElementById("error").hidden && document.getElementById("error").textContent.includes("can't be reached")`), menu())

		// The server back, restarted: sign in again, the text still there.
		pg.startServer()
		pg.do("restarted", until(`!document.getElementById("signin").hidden`))
		if msg := eval[string](pg, `document.getElementById("signin-error").textContent`); !strings.Contains(msg, "Sign in again") || strings.Contains(msg, "Bearer") {
			t.Errorf("after a restart the page says %q, want a plain sign-in-again", msg)
		}
		pg.shot("restarted")
		pg.axe("on the sign-in page")
		pg.signIn()
		if got := eval[string](pg, `document.getElementById("text").value`); got != "a message typed while the server is down" {
			t.Errorf("after signing in again the message box holds %q", got)
		}
		pg.do("send it now", chromedp.Click(chromedp.ID("send")),
			until(`document.getElementById("text").value === ""`),
			until(`[...document.querySelectorAll(".msg.user")].some((m) => m.textContent === "a message typed while the server is down")`))

		// A used link: the server's message, never a blank form.
		pg.do("open the used link", chromedp.Navigate("about:blank"), chromedp.Navigate(used),
			chromedp.WaitVisible(chromedp.ID("signin")), until(`document.getElementById("signin-error").textContent !== ""`))
		if msg := eval[string](pg, `document.getElementById("signin-error").textContent`); !strings.Contains(msg, "used already or has expired") {
			t.Errorf("a used link shows %q, want the server's message", msg)
		}
		pg.shot("used-link")
		pg.p.stop(t)
	})
}

// TestWebPageUpload: a text file's content reaches the model, and an
// image shows in the conversation.
func TestWebPageUpload(t *testing.T) {
	pg := openPage(t, desktop)
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("the word is secret-word-42 today\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for x := range 40 {
		for y := range 30 {
			img.Set(x, y, color.RGBA{R: uint8(x * 6), G: 120, B: 200, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pic := filepath.Join(dir, "chart.png")
	if err := os.WriteFile(pic, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pg.signIn()
	pg.do("attach", chromedp.SetUploadFiles(chromedp.ID("file"), []string{text, pic}),
		until(`document.querySelectorAll("#picked li").length === 2`))
	pg.shot("picked")
	pg.send("send with files", "what does the file say?",
		until(lastAnswer+` === "The file says secret-word-42."`),
		until(`(() => { const i = document.querySelector(".msg.user .files img"); return i && i.complete && i.naturalWidth === 40; })()`),
		until(`document.querySelectorAll("#picked li").length === 0`),
		// Titled by what was typed, not the file's content or notes.
		until(`document.querySelector("#conversations button")?.textContent === "what does the file say?"`))
	if !eval[bool](pg, `[...document.querySelectorAll(".msg.user .files .file")].some((f) => f.textContent.startsWith("notes.txt"))`) {
		t.Error("the text file is not shown with the message")
	}
	pg.shot("uploaded")
	var asked string
	for _, r := range mainRequests(pg.w.model) {
		for _, m := range r.Messages {
			if m.Role == "user" && strings.Contains(m.Content, "secret-word-42") {
				asked = m.Content
			}
		}
	}
	if !strings.Contains(asked, `Attached file "notes.txt"`) {
		t.Errorf("the model was not given the text file; last user message: %q", asked)
	}
	pg.p.stop(t)
}
