package agent

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/core/llm"
)

// The user message that shows a model the tools' pictures belongs to the
// turn: a turn cut short after it is still open, so a restart resumes it
// instead of taking it as answered by a later user's message.
func TestToolPicturesKeepTheTurnOpen(t *testing.T) {
	user := llm.UserMessage("draw me a chart")
	call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Type: "function", Function: llm.FunctionCall{Name: "charts__draw"}}}}
	result := llm.ToolResult("c1", "charts__draw", "[image: image/png, 70 bytes]")
	pics := llm.Message{Role: llm.RoleUser, Content: toolPicturesIntro + `"charts__draw-1.png" from charts__draw.`,
		Images: []llm.Image{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")}}}
	st := &state{items: []item{
		{rec: record{EventID: "E1"}, msg: user},
		{msg: call},
		{msg: result},
		{rec: record{ToolPictures: true}, msg: pics},
	}}
	if place, at := st.locate("E1"); place != turnOpen || at != 0 {
		t.Errorf("locate(E1) = %v, %d, want the turn open at 0", place, at)
	}
	if calls := st.dangling(); len(calls) != 0 {
		t.Errorf("dangling() = %v, want none: the call has its result", calls)
	}
	if !ToolPictures(pics) || ToolPictures(user) {
		t.Error("ToolPictures does not tell the pictures message from the user's")
	}
	st.items = append(st.items, item{rec: record{EventID: "E2"}, msg: llm.UserMessage("next question")})
	if place, _ := st.locate("E1"); place != turnAnswered {
		t.Errorf("locate(E1) after another user message = %v, want answered", place)
	}
}

// A message's pictures are stored within maxStoredPictureBytes; the ones
// past it are named in the stored text, and the message in memory (the
// running turn's) keeps them all.
func TestStoredPicturesBounded(t *testing.T) {
	big := func(name string) llm.Image {
		return llm.Image{Name: name, MIMEType: "image/png", Data: make([]byte, maxStoredPictureBytes/2)}
	}
	small := llm.UserMessage("look")
	small.Images = []llm.Image{{Name: "a.png", MIMEType: "image/png", Data: []byte("x")}}
	if got := storedPictures(&small); got != &small {
		t.Errorf("storedPictures(small) = %+v, want the message as it is", got)
	}
	m := llm.UserMessage("compare these")
	m.Images = []llm.Image{big("one.png"), big("two.png"), big("three.png")}
	got := storedPictures(&m)
	if len(got.Images) != 2 || got.Images[1].Name != "two.png" {
		t.Errorf("stored pictures = %d, want the first two", len(got.Images))
	}
	if want := `not kept for later messages (over 5 MB together): "three.png".]`; !strings.HasSuffix(got.Content, want) {
		t.Errorf("stored text = %q, want it to end %q", got.Content, want)
	}
	if len(m.Images) != 3 || m.Content != "compare these" {
		t.Errorf("the message in memory changed: %d pictures, %q", len(m.Images), m.Content)
	}
}
