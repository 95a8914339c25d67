package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/neobot/neobot/core/llm"
)

// wireRequest is the part of a chat-completions request the server decodes.
type wireRequest struct {
	Model      string          `json:"model"`
	Messages   []wireMessage   `json:"messages"`
	Tools      json.RawMessage `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	Stream     bool            `json:"stream"`

	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
}

// wireMessage accepts both reasoning spellings a client may echo back.
type wireMessage struct {
	Role string `json:"role"`
	// Content is a string, null, or a content array of text and
	// image_url parts.
	Content          json.RawMessage `json:"content"`
	ToolCalls        []llm.ToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	Name             string          `json:"name"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
}

// toolMemo keeps the tool lists requests carried, decoded: a client sends
// the same list with every request, and decoding its schemas was most of
// the fake's work per request. Requests share the decoded schemas, so a
// test must not change a Request's tool schemas.
type toolMemo struct {
	mu sync.Mutex
	m  map[string][]llm.Tool // by the list's JSON
}

// maxToolLists bounds toolMemo; past it the memo starts over.
const maxToolLists = 64

// decode returns the tool list raw encodes.
func (tm *toolMemo) decode(raw json.RawMessage) ([]llm.Tool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	tm.mu.Lock()
	tools, ok := tm.m[string(raw)]
	tm.mu.Unlock()
	if ok {
		return slices.Clone(tools), nil
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, err
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.m == nil || len(tm.m) >= maxToolLists {
		tm.m = map[string][]llm.Tool{}
	}
	tm.m[string(raw)] = tools
	return slices.Clone(tools), nil
}

func (tm *toolMemo) readRequest(r *http.Request) (Request, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return Request{}, fmt.Errorf("read body: %w", err)
	}
	req := Request{Header: r.Header.Clone(), Body: body}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return req, fmt.Errorf("request body is not chat-completions JSON: %w", err)
	}
	req.Model = wr.Model
	if req.Tools, err = tm.decode(wr.Tools); err != nil {
		return req, fmt.Errorf("request tools are not a list of tools: %w", err)
	}
	req.Stream = wr.Stream
	if wr.MaxTokens != nil {
		req.MaxTokens = *wr.MaxTokens
	}
	if wr.MaxCompletionTokens != nil {
		req.MaxCompletionTokens = *wr.MaxCompletionTokens
	}
	req.sentMaxTokens = wr.MaxTokens != nil
	if len(wr.ToolChoice) > 0 && string(wr.ToolChoice) != "null" {
		var s string
		if json.Unmarshal(wr.ToolChoice, &s) == nil {
			req.ToolChoice = s
		} else {
			req.ToolChoice = string(wr.ToolChoice)
		}
	}
	req.Messages = make([]llm.Message, len(wr.Messages))
	for i, m := range wr.Messages {
		msg := llm.Message{Role: m.Role, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name}
		if err := readContent(m.Content, &msg); err != nil {
			return req, fmt.Errorf("message %d: %w", i, err)
		}
		msg.Reasoning = m.ReasoningContent
		if msg.Reasoning == "" {
			msg.Reasoning = m.Reasoning
		}
		req.Messages[i] = msg
	}
	return req, nil
}

type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   llm.Usage    `json:"usage"`
}

type wireChoice struct {
	Index        int        `json:"index"`
	Message      wireAnswer `json:"message"`
	FinishReason string     `json:"finish_reason"`
}

type wireAnswer struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []llm.ToolCall `json:"tool_calls,omitempty"`
}

// completion renders reply as a chat.completion object.
func completion(reply Reply) []byte {
	m := reply.Message
	ans := wireAnswer{Role: m.Role, ReasoningContent: m.Reasoning, ToolCalls: m.ToolCalls}
	if ans.Role == "" {
		ans.Role = llm.RoleAssistant
	}
	if m.Content != "" || len(m.ToolCalls) == 0 {
		c := m.Content
		ans.Content = &c
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = llm.FinishStop
		if len(m.ToolCalls) > 0 {
			finish = llm.FinishToolCalls
		}
	}
	usage := reply.Usage
	if usage.TotalTokens == 0 {
		usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	}
	body, _ := json.Marshal(wireCompletion{
		ID:      "chatcmpl-llmtest",
		Object:  "chat.completion",
		Created: 1767225600,
		Model:   "llmtest",
		Choices: []wireChoice{{Message: ans, FinishReason: finish}},
		Usage:   usage,
	})
	return body
}

// checkConversation refuses what OpenAI-compatible servers refuse with 400:
// an unknown role, a tool message that answers no call of the assistant
// message before it, and an assistant message whose tool calls are not
// all answered before the next message of another role.
func checkConversation(msgs []llm.Message) error {
	var open map[string]bool // calls of the last assistant message still unanswered
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser, llm.RoleAssistant, llm.RoleTool, "developer":
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
		if m.Role == llm.RoleTool {
			if !open[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: a tool message must answer a tool call of the assistant message before it; %q answers none", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			continue
		}
		if len(open) > 0 {
			for id := range open {
				return fmt.Errorf("messages[%d]: the assistant's tool call %q has no tool message answering it", i, id)
			}
		}
		open = nil
		if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
			open = map[string]bool{}
			for _, tc := range m.ToolCalls {
				open[tc.ID] = true
			}
		}
	}
	for id := range open {
		return fmt.Errorf("the assistant's tool call %q has no tool message answering it", id)
	}
	return nil
}

// reasoningModel reports the OpenAI model families that refuse max_tokens
// and take max_completion_tokens: the o-series (o1, o3-mini, o4-mini...)
// and gpt-5, as OpenAI's API reference documents them. The name may carry
// a provider path (openai/o3).
func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "gpt-5") {
		return true
	}
	if len(m) < 2 || m[0] != 'o' || m[1] < '0' || m[1] > '9' {
		return false
	}
	rest := strings.TrimLeft(m[1:], "0123456789")
	return rest == "" || rest[0] == '-'
}

// contentPart is one item of a content array.
type contentPart struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// readContent decodes a message's content into msg: a string into
// Content; a content array's text parts joined into Content and its
// image_url parts, which must be base64 data URLs in a user message (the
// only role chat-completions takes pictures in), into Images.
func readContent(raw json.RawMessage, msg *llm.Message) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		return json.Unmarshal(raw, &msg.Content)
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor a content array: %w", err)
	}
	var text []string
	for j, p := range parts {
		switch p.Type {
		case "text":
			if p.Text == nil {
				return fmt.Errorf("content part %d: text part without text", j)
			}
			text = append(text, *p.Text)
		case "image_url":
			if msg.Role != llm.RoleUser {
				return fmt.Errorf("content part %d: an image in a %s message; images go in user messages", j, msg.Role)
			}
			if p.ImageURL == nil {
				return fmt.Errorf("content part %d: image_url part without image_url", j)
			}
			img, err := dataURL(p.ImageURL.URL)
			if err != nil {
				return fmt.Errorf("content part %d: %w", j, err)
			}
			msg.Images = append(msg.Images, img)
		default:
			return fmt.Errorf("content part %d: unknown type %q", j, p.Type)
		}
	}
	msg.Content = strings.Join(text, "\n")
	return nil
}

// dataURL decodes a data:TYPE;base64,DATA URL.
func dataURL(u string) (llm.Image, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return llm.Image{}, fmt.Errorf("image url %.40q is not a data: URL", u)
	}
	mt, b64, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return llm.Image{}, fmt.Errorf("image data URL is not base64")
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return llm.Image{}, fmt.Errorf("image data URL: %w", err)
	}
	return llm.Image{MIMEType: mt, Data: data}, nil
}
