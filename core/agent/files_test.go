package agent

import (
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
