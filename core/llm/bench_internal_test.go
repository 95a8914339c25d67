package llm

import (
	"fmt"
	"os"
	"testing"
)

// BenchmarkCodec is the client's own CPU cost per call without the network:
// encoding a mid-conversation request and decoding a reasoning response.
func BenchmarkCodec(b *testing.B) {
	c, err := New(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		b.Fatal(err)
	}
	resp, err := os.ReadFile("testdata/together_inline_think.json")
	if err != nil {
		b.Fatal(err)
	}
	req := ChatRequest{Messages: []Message{SystemMessage("You are Neo, a careful assistant.")}}
	for i := range 4 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			UserMessage("what is the PAX price?"),
			Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Type: "function", Function: FunctionCall{Name: "paxeer__price", Arguments: `{"symbol":"PAX"}`}}}},
			ToolResult(id, "paxeer__price", `{"pax":"0.42"}`),
			AssistantMessage("PAX is trading around $0.42."),
		)
	}
	for i := range 8 {
		req.Tools = append(req.Tools, NewFunctionTool(fmt.Sprintf("srv__tool_%d", i), "Does one thing.", map[string]any{
			"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}},
		}))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.encodeRequest(req); err != nil {
			b.Fatal(err)
		}
		if _, err := decodeResponse("bench", 200, resp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSplitThink(b *testing.B) {
	s := "<think>\nThe user wants a greeting. Keep it short and friendly, no tools needed.\n</think>\n\nHello! How can I help you today?"
	b.ReportAllocs()
	for b.Loop() {
		splitThink(s)
	}
}

// BenchmarkEncodePicture is what a 1 MiB picture in the history adds to
// encoding every request that carries it (its data URL is built per call).
func BenchmarkEncodePicture(b *testing.B) {
	c, err := New(Config{Model: "gpt-4.1", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		b.Fatal(err)
	}
	pic := make([]byte, 1<<20)
	req := ChatRequest{Messages: []Message{SystemMessage("You are Neo."),
		{Role: RoleUser, Content: "what is in this picture?", Images: []Image{{MIMEType: "image/png", Data: pic}}}}}
	b.SetBytes(int64(len(pic)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.encodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShowerFirstAnswer is the cost of showing a first answer piece
// by piece while the posture is still unknown: the first bytes settle it,
// then each piece is passed on.
func BenchmarkShowerFirstAnswer(b *testing.B) {
	answer := "Rotating the deploy key takes three steps. First, create the new key in the vault and give it the deploy role."
	var prefixes []string
	for i := 4; i <= len(answer); i += 4 {
		prefixes = append(prefixes, answer[:i])
	}
	b.ReportAllocs()
	for b.Loop() {
		s := newShower(thinkUnknown, func(string) {})
		for _, p := range prefixes {
			s.seen(p)
		}
	}
}
