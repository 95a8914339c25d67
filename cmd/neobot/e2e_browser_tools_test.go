package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWebPageSteps: a turn with two tool calls shows them as a compact
// list of steps above the answer (✓ each, its output behind a button with
// aria-expanded), the picture a tool returned inline with its download
// button, and the live region announces the answer alone. The answer gets
// 👍/👎: 👎 asks for a reason, the rating is stored (neobot feedback shows
// it) and the pressed button says so. At both sizes, with axe-core.
func TestWebPageSteps(t *testing.T) {
	forScreens(t, func(t *testing.T, s screen) {
		manifest, _ := everyManifest(t)
		pg := openPage(t, s, map[string]string{"NEO_MANIFEST": manifest})
		pg.signIn()
		pg.send("two tool calls", "show me the logo",
			until(lastAnswer+` === "Here is the MCP logo."`),
			until(`document.querySelectorAll(".steps li[data-state=complete]").length === 2`),
			until(`(() => { const i = document.querySelector(".tool-file img"); return i && i.complete && i.naturalWidth > 0; })()`),
			until(`document.querySelector(".feedback button.rate") !== null`))
		if said := eval[string](pg, `document.getElementById("announce").textContent`); said != "Here is the MCP logo." {
			t.Errorf("the live region says %q, want the answer alone", said)
		}
		// The steps come before the answer, one list for the turn.
		order := eval[string](pg, `[...document.querySelectorAll("#messages > *")].map((e) => e.className).join(" | ")`)
		if !strings.Contains(order, "msg steps") || strings.Index(order, "msg steps") > strings.Index(order, "msg assistant") {
			t.Errorf("the message list is %q, want the steps before the answer", order)
		}
		titles := eval[string](pg, `[...document.querySelectorAll(".steps li .title")].map((e) => e.textContent).join(", ")`)
		if strings.Count(titles, ",") != 1 {
			t.Errorf("step titles = %q, want two", titles)
		}
		marks := eval[string](pg, `[...document.querySelectorAll(".steps li .state")].map((e) => e.textContent + "/" + e.getAttribute("aria-label")).join(" ")`)
		if marks != "✓/Done ✓/Done" {
			t.Errorf("step marks = %q, want two ✓ labelled Done", marks)
		}
		if eval[bool](pg, `[...document.querySelectorAll(".steps .output")].some((o) => !o.hidden)`) {
			t.Error("a step's output shows before it was expanded")
		}
		pg.do("expand the echo step",
			chromedp.Click(chromedp.CSS(`.steps li[data-id="c2"] button`)),
			until(`document.querySelector('.steps li[data-id="c2"] button').getAttribute("aria-expanded") === "true"`),
			until(`(() => { const o = document.querySelector('.steps li[data-id="c2"] .output'); return !o.hidden && o.textContent.includes("hello from echo"); })()`))
		if got := eval[string](pg, `document.querySelector(".tool-file button").textContent`); !strings.HasPrefix(got, "Download ") || !strings.Contains(got, ".png") {
			t.Errorf("the tool's picture's button says %q", got)
		}
		if w := eval[int](pg, `document.querySelector(".tool-file img").naturalWidth`); w == 0 {
			t.Error("the tool's picture is not shown")
		}
		pg.shot("steps")
		pg.axe("with steps, a tool's picture and rating buttons")

		// 👎 asks for a reason; sending it stores the rating.
		pg.do("rate down",
			chromedp.Click(chromedp.CSS(`.feedback button[aria-label="Bad answer"]`)),
			chromedp.WaitVisible(chromedp.CSS(".feedback .reason input")))
		pg.axe("with the reason form")
		pg.do("give a reason",
			typeInto(eval[string](pg, `document.querySelector(".feedback .reason input").id`), "the logo is too small"),
			chromedp.Click(chromedp.CSS(`.feedback .reason button[type=submit]`)),
			until(`document.querySelector('.feedback button[aria-label="Bad answer"]').getAttribute("aria-pressed") === "true"`),
			until(`document.querySelector(".feedback .said").textContent.startsWith("Thanks")`),
			until(`document.querySelector(".feedback .reason").hidden`))
		if up := eval[string](pg, `document.querySelector('.feedback button[aria-label="Good answer"]').getAttribute("aria-pressed")`); up != "false" {
			t.Errorf("👍 is aria-pressed=%s after rating down", up)
		}
		pg.shot("rated")
		pg.p.stop(t)

		out, _, err := run(t, pg.w.env, "", "feedback", "--format", "json")
		var rows []map[string]string
		if err != nil || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
			t.Fatalf("neobot feedback = %s (%v), want one rating", out, err)
		}
		if r := rows[0]; r["rating"] != "down" || r["reason"] != "the logo is too small" || r["user"] != "me" || r["answer"] != "Here is the MCP logo." {
			t.Errorf("the page's rating = %v", r)
		}
	})
}

// TestWebPageRatingError: a rating the server refuses is said in plain
// words next to the buttons, none of them pressed.
func TestWebPageRatingError(t *testing.T) {
	pg := openPage(t, desktop)
	pg.signIn()
	pg.send("say hi", "hi", until(`document.querySelector(".feedback button.rate") !== null`))
	pg.p.stop(t)
	pg.do("rate up with the server gone",
		chromedp.Click(chromedp.CSS(`.feedback button[aria-label="Good answer"]`)),
		until(`document.querySelector(".feedback .said").textContent !== ""`))
	said := eval[string](pg, `document.querySelector(".feedback .said").textContent`)
	if !strings.Contains(said, "not sent") || !strings.Contains(said, "can't be reached") {
		t.Errorf("after a failed rating the page says %q", said)
	}
	if up := eval[string](pg, `document.querySelector('.feedback button[aria-label="Good answer"]').getAttribute("aria-pressed")`); up != "false" {
		t.Errorf("👍 is aria-pressed=%s though the rating was not stored", up)
	}
}

// TestWebPagePicture: an image uploaded in the page reaches a model that
// sees pictures as image content; with a text-only model the page says
// Neo cannot see pictures.
func TestWebPagePicture(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 24, 16))
	for x := range 24 {
		for y := range 16 {
			img.Set(x, y, color.RGBA{R: 200, G: uint8(y * 12), B: 40, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pic := filepath.Join(t.TempDir(), "sunset.png")
	if err := os.WriteFile(pic, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, vision, want string
	}{
		{"vision", "yes", `I see your picture.`},
		{"text-only", "no", `I can't see pictures with the model I'm using`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pg := openPage(t, desktop, map[string]string{"NEO_MODEL_VISION": tc.vision})
			pg.signIn()
			pg.do("attach", chromedp.SetUploadFiles(chromedp.ID("file"), []string{pic}),
				until(`document.querySelectorAll("#picked li").length === 1`))
			pg.send("send the picture", "what is in this?",
				until(`[...document.querySelectorAll("#messages .msg")].some((m) => m.textContent.includes(`+jsString(tc.want)+`))`))
			pg.shot("answered")
			var images [][]byte
			for _, r := range mainRequests(pg.w.model) {
				for _, m := range r.Messages {
					for _, i := range m.Images {
						images = append(images, i.Data)
					}
				}
			}
			if tc.vision == "yes" && (len(images) == 0 || !bytes.Equal(images[0], buf.Bytes())) {
				t.Errorf("the model saw %d images, want the uploaded PNG", len(images))
			}
			if tc.vision == "no" && len(images) != 0 {
				t.Errorf("a text-only model was sent %d images", len(images))
			}
			pg.p.stop(t)
		})
	}
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestWebPageQuestion: a tool server's form question is a form in the
// page, its default pre-filled; a value the server refuses gets its
// sentence under its field (aria-invalid), the corrected answer reaches
// the server; a choice question's Decline button declines. At both
// sizes, with axe-core.
func TestWebPageQuestion(t *testing.T) {
	forScreens(t, func(t *testing.T, s screen) {
		a := newAsker(t)
		pg := openPage(t, s, map[string]string{"NEO_MANIFEST": a.manifest(t), "NEOBOT_ASKER_LOG": a.log})
		pg.signIn()
		pg.send("book", "book a table",
			until(`document.querySelector(".question form.ask") !== null || document.querySelector(".gate:not(.question) button.approve") !== null`))
		if eval[bool](pg, `document.querySelector(".gate:not(.question) button.approve") !== null`) {
			pg.do("allow the write", chromedp.Click(chromedp.CSS(".gate:not(.question) button.approve")),
				until(`document.querySelector(".question form.ask") !== null`))
		}
		field := func(name string) string {
			return `document.querySelector('.question .field[data-field="` + name + `"] input')`
		}
		if v := eval[string](pg, field("name")+`.value`); v != "Ada" {
			t.Errorf("the name field holds %q, want its default Ada", v)
		}
		if typ := eval[string](pg, field("guests")+`.type`); typ != "number" {
			t.Errorf("the guests field is a %q input, want number", typ)
		}
		if got := eval[string](pg, `[...document.querySelectorAll(".question .actions button")].map((b) => b.textContent).join("|")`); got != "Send answer|Decline|Cancel" {
			t.Errorf("the question's buttons are %q", got)
		}
		pg.do("a bad email",
			typeInto(eval[string](pg, field("guests")+`.id`), "2"),
			typeInto(eval[string](pg, field("email")+`.id`), "not-an-email"),
			chromedp.Click(chromedp.CSS(".question form.ask button[type=submit]")),
			until(`(() => { const p = document.querySelector('.question .field[data-field="email"] .problem'); return !p.hidden && p.textContent !== ""; })()`),
			until(field("email")+`.getAttribute("aria-invalid") === "true"`))
		if eval[bool](pg, `!document.querySelector('.question .field[data-field="guests"] .problem').hidden`) {
			t.Error("a problem shows under guests, which was fine")
		}
		pg.shot("question-refused")
		pg.axe("with a question's form and a refused field")
		pg.do("a good email",
			typeInto(eval[string](pg, field("email")+`.id`), "ada@example.com"),
			chromedp.Click(chromedp.CSS(".question form.ask button[type=submit]")),
			until(`document.querySelector(".question .outcome")?.textContent === "Answered by me"`),
			until(lastAnswer+` === "Booked."`))
		if got := a.answers(t); len(got) != 1 || got[0].Action != "accept" || got[0].Content["name"] != "Ada" || fmt.Sprint(got[0].Content["guests"]) != "2" || got[0].Content["email"] != "ada@example.com" {
			t.Errorf("the server heard %+v, want Ada, 2 guests, ada@example.com", got)
		}
		pg.shot("question-answered")

		pg.send("a choice", "pick a size",
			until(`[...document.querySelectorAll(".question .options button")].map((b) => b.textContent).join("|") === "Small|Medium|Large|Decline|Cancel"`))
		pg.shot("question-choice")
		pg.do("decline",
			chromedp.Click(chromedp.CSS(`.question:last-of-type .options button:nth-child(4)`)),
			until(lastAnswer+` === "No size, then."`))
		if got := a.answers(t); len(got) != 2 || got[1].Action != "decline" {
			t.Errorf("the server heard %+v, want a decline", got)
		}
		pg.p.stop(t)
	})
}
