package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrBadResponse marks a 2xx response the client cannot use: not JSON,
// truncated JSON, or no choices. Errors wrap it with the provider's name.
var ErrBadResponse = errors.New("unusable response")

// The wire structs are the chat-completions JSON. They are separate from
// Message so that Reasoning only goes on the wire when the provider setting
// asks for it.

type wireRequest struct {
	Model       string        `json:"model"`
	Messages    []wireMessage `json:"messages"`
	ToolChoice  any           `json:"tool_choice,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	// MaxCompletionTokens replaces MaxTokens for the models that refuse
	// it (TokenLimitParam).
	MaxCompletionTokens int   `json:"max_completion_tokens,omitempty"`
	Seed                int64 `json:"seed,omitempty"`
	Stream              bool  `json:"stream"`
	// StreamOptions asks for the usage in the stream's last chunk.
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is null on an assistant turn that only calls tools; some
	// providers refuse an empty string there. It is a *string, or a
	// []wirePart for a message with images.
	Content          any        `json:"content"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
}

// wirePart is one item of a content array: a text part or an image_url
// part.
type wirePart struct {
	Type     string        `json:"type"`
	Text     *string       `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

// contentParts renders a message with images as a content array: its
// text first, then each picture, whose URL is a placeholder that
// spliceImages replaces with its data URL (see there). images collects
// the pictures in the order their placeholders appear.
func contentParts(m *Message, images *[]Image) []wirePart {
	parts := make([]wirePart, 0, len(m.Images)+1)
	if m.Content != "" {
		parts = append(parts, wirePart{Type: "text", Text: &m.Content})
	}
	for _, img := range m.Images {
		*images = append(*images, img)
		parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: imagePlaceholder}})
	}
	return parts
}

// imagePlaceholder stands for a picture's data URL while the request is
// marshaled. The JSON `"url":"<placeholder>"}` it makes can only be the
// structure the encoder wrote: inside any string value a quote is
// escaped.
const imagePlaceholder = "neobot-image"

var placeholderJSON = []byte(`"url":"` + imagePlaceholder + `"}`)

// spliceImages writes each picture's data URL in place of its
// placeholder, in order. Marshaling megabytes of base64 as a JSON string
// would scan every byte for escapes; base64 and the MIME type need none,
// so they are written as they are.
func spliceImages(body []byte, images []Image) ([]byte, error) {
	size := len(body)
	for _, img := range images {
		size += len("data:;base64,") + len(img.MIMEType) + base64.StdEncoding.EncodedLen(len(img.Data))
	}
	out := make([]byte, 0, size)
	for _, img := range images {
		i := bytes.Index(body, placeholderJSON)
		if i < 0 {
			return nil, errors.New("llm: encode images: a picture's place was not found")
		}
		if !safeMIME(img.MIMEType) {
			return nil, fmt.Errorf("llm: encode images: %q is not a picture type", img.MIMEType)
		}
		out = append(out, body[:i]...)
		out = append(out, `"url":"data:`...)
		out = append(out, img.MIMEType...)
		out = append(out, ";base64,"...)
		out = base64.StdEncoding.AppendEncode(out, img.Data)
		out = append(out, `"}`...)
		body = body[i+len(placeholderJSON):]
	}
	return append(out, body...), nil
}

// safeMIME reports whether a MIME type can go in a JSON string as it is:
// letters, digits and the few marks types use.
func safeMIME(mt string) bool {
	for i := 0; i < len(mt); i++ {
		c := mt[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/+-.", c) >= 0) {
			return false
		}
	}
	return mt != ""
}

type namedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// encodeRequest renders req as a chat-completions body.
func (c *Client) encodeRequest(req ChatRequest) ([]byte, error) {
	return c.encode(req, false)
}

// encode renders req, streamed or not.
func (c *Client) encode(req ChatRequest, stream bool) ([]byte, error) {
	var tools []json.RawMessage // each tool encoded, when there are tools
	var images []Image          // the pictures, in order (spliceImages)
	wr := wireRequest{
		Model:    c.set.model,
		Messages: make([]wireMessage, len(req.Messages)),
		Seed:     c.cfg.Seed,
		Stream:   stream,
	}
	if c.set.completionCap {
		wr.MaxCompletionTokens = c.cfg.MaxTokens
	} else {
		wr.MaxTokens = c.cfg.MaxTokens
	}
	if stream {
		wr.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if c.cfg.Temperature != 0 {
		t := c.cfg.Temperature
		wr.Temperature = &t
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role == "" {
			return nil, fmt.Errorf("llm: message %d has no role", i)
		}
		wm := wireMessage{Role: m.Role, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name}
		switch {
		case len(m.Images) > 0:
			wm.Content = contentParts(m, &images)
		case m.Content != "" || len(m.ToolCalls) == 0:
			wm.Content = &m.Content
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				if tc.Type == "" {
					tc.Type = "function"
				}
				calls[j] = tc
			}
			wm.ToolCalls = calls
			if c.set.echo && m.Role == RoleAssistant {
				wm.ReasoningContent = m.Reasoning
			}
		}
		wr.Messages[i] = wm
	}
	if len(req.Tools) > 0 {
		var err error
		if tools, err = c.encodeTools(req.Tools); err != nil {
			return nil, err
		}
		switch req.ToolChoice {
		case "":
			wr.ToolChoice = "auto"
		case "auto", "none", "required":
			wr.ToolChoice = req.ToolChoice
		default: // a function name forces that function
			nc := namedChoice{Type: "function"}
			nc.Function.Name = req.ToolChoice
			wr.ToolChoice = nc
		}
	} else if req.ToolChoice != "" && req.ToolChoice != "auto" && req.ToolChoice != "none" {
		return nil, fmt.Errorf("llm: tool choice %q without any tools", req.ToolChoice)
	}
	body, err := json.Marshal(wr)
	if err == nil && len(images) > 0 {
		body, err = spliceImages(body, images)
	}
	if err != nil || tools == nil {
		return body, err
	}
	// The tools go in as they were kept: marshaling them inside wr would
	// validate and copy every byte again. One buffer of the final size
	// takes the request and them.
	size := len(body) + len(`,"tools":[]`) + len(tools)
	for _, raw := range tools {
		size += len(raw) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, body[:len(body)-1]...)
	out = append(out, `,"tools":[`...)
	for i, raw := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, raw...)
	}
	return append(out, "]}"...), nil
}

// encodeTools returns each tool's encoding, kept in c.tools where the
// schema did not change.
func (c *Client) encodeTools(tools []Tool) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		raw, err := c.tools.encode(t)
		if err != nil {
			return nil, fmt.Errorf("llm: encode tool %q: %w", t.Function.Name, err)
		}
		out[i] = raw
	}
	return out, nil
}

type wireResponse struct {
	Choices []struct {
		Message      wireReply `json:"message"`
		FinishReason string    `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage     `json:"usage"`
	Error *wireError `json:"error"`
}

type wireReply struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// decodeResponse turns a 2xx body into a ChatResult. An error object in a
// 2xx body (some gateways do that) becomes an *Error.
func decodeResponse(providerName string, status int, body []byte) (*ChatResult, error) {
	var wr wireResponse
	if err := json.Unmarshal(body, &wr); err != nil {
		return nil, fmt.Errorf("llm: %s: %w: %s", providerName, ErrBadResponse, describeJSONError(body, err))
	}
	if len(wr.Choices) == 0 {
		if wr.Error != nil {
			e := wr.Error.toError(providerName, status)
			return nil, e
		}
		return nil, fmt.Errorf("llm: %s: %w: no choices in the response", providerName, ErrBadResponse)
	}
	ch := wr.Choices[0]
	content, err := contentText(ch.Message.Content)
	if err != nil {
		return nil, fmt.Errorf("llm: %s: %w: %v", providerName, ErrBadResponse, err)
	}
	visible, inline := splitThink(content)
	msg := Message{Role: RoleAssistant, Content: visible}
	switch {
	case ch.Message.ReasoningContent != nil && *ch.Message.ReasoningContent != "":
		msg.Reasoning = strings.TrimSpace(*ch.Message.ReasoningContent)
	case ch.Message.Reasoning != nil:
		msg.Reasoning = strings.TrimSpace(*ch.Message.Reasoning)
	}
	if inline != "" {
		if msg.Reasoning != "" {
			msg.Reasoning += "\n\n"
		}
		msg.Reasoning += inline
	}
	if n := len(ch.Message.ToolCalls); n > 0 {
		msg.ToolCalls = make([]ToolCall, n)
		for i, tc := range ch.Message.ToolCalls {
			call := ToolCall{ID: tc.ID, Type: tc.Type, Function: FunctionCall{Name: tc.Function.Name}}
			if call.Type == "" {
				call.Type = "function"
			}
			call.Function.Arguments = argumentsText(tc.Function.Arguments)
			msg.ToolCalls[i] = call
		}
	}
	res := &ChatResult{Message: msg, FinishReason: normalizeFinish(ch.FinishReason, len(msg.ToolCalls) > 0)}
	if wr.Usage != nil {
		res.Usage = *wr.Usage
	}
	return res, nil
}

// contentText reads a message's content: a string, null, or an array of
// parts whose text is concatenated.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("content: %w", err)
		}
		return s, nil
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", fmt.Errorf("content parts: %w", err)
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "" || p.Type == "text" || p.Type == "output_text" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("content is neither a string nor a list of parts")
}

// argumentsText keeps arguments as the JSON text the model wrote. Providers
// that send an object instead of a string get the object's JSON; invalid
// JSON is left for ParseArgs to report.
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// normalizeFinish maps provider spellings onto the Finish* constants.
func normalizeFinish(reason string, hasCalls bool) string {
	switch strings.ToLower(reason) {
	case "tool_calls", "function_call", "tool_use":
		return FinishToolCalls
	case "length", "max_tokens", "model_length":
		return FinishLength
	case "", "stop", "eos", "end_turn", "stop_sequence":
		if hasCalls {
			return FinishToolCalls
		}
		return FinishStop
	}
	return reason
}

// describeJSONError says briefly why body is not a usable JSON document,
// without dumping it.
func describeJSONError(body []byte, err error) string {
	trimmed := bytes.TrimSpace(body)
	var syn *json.SyntaxError
	switch {
	case len(trimmed) == 0:
		return "empty body"
	case trimmed[0] == '<':
		return "HTML instead of JSON: " + summarizeHTML(body)
	case errors.As(err, &syn) && syn.Offset >= int64(len(body)) || strings.Contains(err.Error(), "unexpected end of JSON input"):
		return fmt.Sprintf("truncated JSON (%d bytes)", len(body))
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d of %d: %s", syn.Offset, len(body), excerpt(trimmed, 60))
	}
	return fmt.Sprintf("not a chat completion: %v", err)
}
