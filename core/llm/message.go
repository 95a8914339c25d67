package llm

import (
	"encoding/json"
	"fmt"
)

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat-completions message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the calls an assistant turn requests.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the function name on a tool message.
	Name string `json:"name,omitempty"`
	// Reasoning is the model's chain of thought. It is never the answer,
	// never shown to users, and not sent back to the provider unless the
	// provider requires it on tool-call turns.
	Reasoning string `json:"reasoning,omitempty"`
	// Images are pictures shown with a user message, to a model that
	// sees images. A message with images goes on the wire as a content
	// array: Content as its text part, then one image_url part each.
	// Everything that reads Content alone (compaction, search, logs)
	// reads the text and never the bytes.
	Images []Image `json:"images,omitempty"`
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	// ID is the provider's ID for the call, "" in an answer whose provider
	// gave none: the caller mints one unique where it needs to be (the
	// agent, per thread), since "call_0" would repeat at every step.
	ID       string       `json:"id"`
	Type     string       `json:"type"` // always "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names a function and carries its JSON-encoded arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ParseArgs decodes the call's JSON arguments. Empty arguments decode to an
// empty map; anything that is not a JSON object is an error that says so,
// never silently replaced by {}.
func (f FunctionCall) ParseArgs() (map[string]any, error) {
	if len(f.Arguments) == 0 {
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(f.Arguments), &args); err != nil {
		return nil, fmt.Errorf("arguments of %s are not a JSON object: %w", f.Name, err)
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// Tool is a function schema advertised to the model.
type Tool struct {
	Type     string      `json:"type"` // always "function"
	Function FunctionDef `json:"function"`
}

// FunctionDef describes a callable function; Parameters is a JSON Schema
// object. A client keeps the encoding of the Parameters map it was sent, so
// the map must not be changed afterwards: build a new one instead.
type FunctionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

// NewFunctionTool returns a function tool schema.
func NewFunctionTool(name, description string, parameters map[string]any) Tool {
	return Tool{Type: "function", Function: FunctionDef{Name: name, Description: description, Parameters: parameters}}
}

// SystemMessage returns a system message.
func SystemMessage(content string) Message { return Message{Role: RoleSystem, Content: content} }

// UserMessage returns a user message.
func UserMessage(content string) Message { return Message{Role: RoleUser, Content: content} }

// AssistantMessage returns an assistant message without tool calls.
func AssistantMessage(content string) Message {
	return Message{Role: RoleAssistant, Content: content}
}

// ToolResult returns the tool message answering callID.
func ToolResult(callID, name, content string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Name: name, Content: content}
}

// ChatRequest is one call to the model.
type ChatRequest struct {
	Messages []Message
	Tools    []Tool
	// ToolChoice is "auto" (the default when Tools is set), "none" or
	// "required".
	ToolChoice string
}

// Finish reasons reported by providers.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishToolCalls = "tool_calls"
)

// ChatResult is the model's single assistant turn.
type ChatResult struct {
	Message      Message
	FinishReason string
	Usage        Usage
}

// Usage is the provider's token accounting for a call; zero when the
// provider reports none.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}
