package llm

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

func TestSplitThink(t *testing.T) {
	tests := []struct {
		name, in, visible, reasoning string
	}{
		{"plain", "Hello there.", "Hello there.", ""},
		{"plain keeps spacing", "  indented\n", "  indented\n", ""},
		{"leading block", "<think>\nplan\n</think>\n\nAnswer.", "Answer.", "plan"},
		{"thinking tag", "<thinking>plan</thinking>Answer.", "Answer.", "plan"},
		{"upper case", "<THINK>plan</Think>Answer.", "Answer.", "plan"},
		{"middle block", "Start. <think>aside</think> End.", "Start.  End.", "aside"},
		{"several blocks", "<think>a</think>one <thinking>b</thinking>two", "one two", "a\n\nb"},
		{"unterminated", "Answer so far <think>still thinking about", "Answer so far", "still thinking about"},
		{"unterminated only", "<think>all of it", "", "all of it"},
		{"nested opener is reasoning text", "<think>a <think> b</think>c", "c", "a <think> b"},
		{"mixed closers", "<thinking>a</think>b", "b", "a"},
		{"closer without opener", "reasoning first</think>\n\nThe answer.", "The answer.", "reasoning first"},
		{"stray closer after answer", "<think>a</think>b</think>c", "b</think>c", "a"},
		{"empty block", "<think></think>Answer.", "Answer.", ""},
		{"lookalike tags stay", "a <thinker> b <think b", "a <thinker> b <think b", ""},
		{"html stays", "<b>bold</b>", "<b>bold</b>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, r := splitThink(tt.in)
			if v != tt.visible || r != tt.reasoning {
				t.Errorf("splitThink(%q) = %q, %q; want %q, %q", tt.in, v, r, tt.visible, tt.reasoning)
			}
		})
	}
}

// checkAccounted verifies that the parts of s tile it exactly and that
// splitThink's outputs account for every non-space rune outside the tags.
func checkAccounted(t *testing.T, s string) {
	t.Helper()
	parts := thinkParts(s, nil)
	var whole strings.Builder
	tagRunes := 0
	for _, p := range parts {
		whole.WriteString(p.text)
		if p.kind == partTag {
			if n, _ := tagAt(p.text); n != len(p.text) {
				t.Fatalf("thinkParts(%q): tag part %q is not a think tag", s, p.text)
			}
			tagRunes += countNonSpace(p.text)
		}
	}
	if whole.String() != s {
		t.Fatalf("thinkParts(%q) concatenated = %q, want the original", s, whole.String())
	}
	v, r := splitThink(s)
	if got, want := countNonSpace(v)+countNonSpace(r), countNonSpace(s)-tagRunes; got != want {
		t.Fatalf("splitThink(%q) = %q, %q: %d non-space runes, want %d", s, v, r, got, want)
	}
	for _, p := range parts {
		if p.kind == partVisible {
			if i, _, closing := nextTag(p.text, false); i >= 0 && !closing {
				t.Fatalf("splitThink(%q): visible part %q holds an opening tag", s, p.text)
			}
		}
	}
}

func countNonSpace(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

func FuzzSplitThink(f *testing.F) {
	for _, seed := range []string{
		"", "plain", "<think>a</think>b", "<thinking>a</thinking>b<think>c</think>d",
		"x<think>unterminated", "r</think>a", "<think>a</think>b</think>c", "<Think>", "</thinking>",
		"<think><think></think></think>", "<<think>>", "\u00a0<think>\u00a0</think>\u00a0", "<thi<think>x</think>nk>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAccounted(t, s)
	})
}

// FuzzDecodeResponse feeds arbitrary content through a whole response body:
// decoding never panics, and the content is split without losing text.
func FuzzDecodeResponse(f *testing.F) {
	f.Add("<think>plan</think>answer", "why", `{"a":1}`, "stop")
	f.Add("", "", "", "")
	f.Add("</think>", "x", "{", "length")
	f.Fuzz(func(t *testing.T, content, reasoning, args, finish string) {
		body, err := json.Marshal(map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{
				"role": "assistant", "content": content, "reasoning_content": reasoning,
				"tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "f", "arguments": args}}},
			},
			"finish_reason": finish,
		}}})
		if err != nil {
			t.Skip()
		}
		res, err := decodeResponse("fuzz", 200, body)
		if err != nil {
			t.Fatalf("decodeResponse(valid body) = %v", err)
		}
		// json.Marshal replaces invalid UTF-8, so compare against what went on the wire.
		var wire struct {
			Choices []struct {
				Message struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Function struct {
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(body, &wire); err != nil {
			t.Fatal(err)
		}
		sent := wire.Choices[0].Message.Content
		v, r := splitThink(sent)
		if res.Message.Content != v || !strings.Contains(res.Message.Reasoning, r) {
			t.Fatalf("decodeResponse content = %q / %q, want split %q / %q", res.Message.Content, res.Message.Reasoning, v, r)
		}
		if got, want := res.Message.ToolCalls[0].Function.Arguments, wire.Choices[0].Message.ToolCalls[0].Function.Arguments; got != want {
			t.Fatalf("decodeResponse arguments = %q, want them verbatim %q", got, want)
		}
		_, _ = decodeResponse("fuzz", 200, []byte(content)) // raw garbage never panics
		checkAccounted(t, sent)
	})
}
