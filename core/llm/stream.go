package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// What this client knows about inline reasoning, which decides when
// streamed text may be shown. A chat template that puts <think> in the
// prompt makes a model answer "reasoning…</think>answer": until the
// closing tag arrives nothing says the text so far is reasoning. A model
// that never closes a tag it did not open streams at once; one that does
// has everything before its first closing tag held back. The posture is
// declared (Config.Posture), recalled from the store (Recall), or learned
// from the first answer, which is held back only until its first words
// show whether it opens with a tag.
const (
	thinkUnknown int32 = iota
	thinkOpenTags
	thinkCloserFirst
)

// ChatStream is Chat with the answer shown while the model writes it:
// onText receives the answer's visible text in order, piece by piece,
// never its reasoning (the reasoning field, <think>/<thinking> blocks,
// split over pieces or never closed). It returns what Chat would. The
// pieces may belong to a step that turns out to call tools; the caller
// decides what to show.
//
// A stream that breaks midway is an error like a failed Chat (transient:
// the caller's ladder retries). A provider that refuses to stream is asked
// again without it, and this client stops asking it to stream.
func (c *Client) ChatStream(ctx context.Context, req ChatRequest, onText func(string)) (*ChatResult, error) {
	if c.noStream.Load() || onText == nil {
		return c.Chat(ctx, req)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("llm: chat needs at least one message")
	}
	body, err := c.encode(req, true)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	name := c.set.provider.name
	start := c.now()
	resp, err := c.post(ctx, body, true)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if refusesStream(resp.StatusCode, raw) {
			c.noStream.Store(true)
			c.cfg.Logger.Info().Str("provider", name).Str("model", c.cfg.Model).Int("status", resp.StatusCode).
				Msg("llm: the provider refused a streamed answer; answers will come whole")
			return c.Chat(ctx, req)
		}
		return nil, c.httpError(resp, raw)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The provider ignored "stream" and answered whole.
		raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		if err != nil {
			return nil, fmt.Errorf("llm: %s: read response: %w", name, c.contextCause(ctx, err))
		}
		return decodeResponse(name, resp.StatusCode, raw)
	}
	res, err := c.readStream(ctx, resp.Body, onText)
	c.cfg.Logger.Debug().Str("provider", name).Str("model", c.cfg.Model).Int("request_bytes", len(body)).
		Dur("took", c.now().Sub(start)).Bool("ok", err == nil).Msg("llm chat stream")
	return res, err
}

// refusesStream reports an error answer that says streaming is not
// supported, rather than something wrong with the request.
func refusesStream(status int, body []byte) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, http.StatusNotImplemented:
		return bytes.Contains(bytes.ToLower(body), []byte("stream"))
	}
	return false
}

// chunk is one chat.completion.chunk.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage     `json:"usage"`
	Error *wireError `json:"error"`
}

// readStream reads Server-Sent Events until [DONE] and assembles the
// answer.
func (c *Client) readStream(ctx context.Context, body io.Reader, onText func(string)) (*ChatResult, error) {
	name := c.set.provider.name
	var (
		content, reasoning strings.Builder
		calls              []ToolCall
		finish             string
		usage              Usage
		total              int
		done               bool
	)
	before := c.think.Load()
	show := newShower(before, onText)
	r, _ := c.lines.Get().(*bufio.Reader)
	if r == nil {
		r = bufio.NewReaderSize(body, 64<<10)
	} else {
		r.Reset(body)
	}
	defer func() {
		r.Reset(nil) // keeps no body alive
		c.lines.Put(r)
	}()
	for !done {
		line, err := r.ReadBytes('\n')
		total += len(line)
		if total > maxResponseBytes {
			return nil, fmt.Errorf("llm: %s: %w: a streamed answer over %d bytes", name, ErrBadResponse, maxResponseBytes)
		}
		line = bytes.TrimRight(line, "\r\n")
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = bytes.TrimSpace(data)
			if string(data) == "[DONE]" {
				break
			}
			var ch chunk
			if jerr := json.Unmarshal(data, &ch); jerr != nil {
				return nil, fmt.Errorf("llm: %s: %w: a stream chunk: %s", name, ErrBadResponse, describeJSONError(data, jerr))
			}
			if ch.Error != nil {
				return nil, ch.Error.toError(name, http.StatusOK)
			}
			if ch.Usage != nil {
				usage = *ch.Usage
			}
			for _, choice := range ch.Choices {
				d := choice.Delta
				if d.Content != nil {
					content.WriteString(*d.Content)
					show.seen(content.String())
				}
				if d.ReasoningContent != nil {
					reasoning.WriteString(*d.ReasoningContent)
				} else if d.Reasoning != nil {
					reasoning.WriteString(*d.Reasoning)
				}
				for _, tc := range d.ToolCalls {
					for len(calls) <= tc.Index {
						calls = append(calls, ToolCall{Type: "function"})
					}
					call := &calls[tc.Index]
					if tc.ID != "" {
						call.ID = tc.ID
					}
					call.Function.Name += tc.Function.Name
					call.Function.Arguments += tc.Function.Arguments
				}
				if choice.FinishReason != nil && *choice.FinishReason != "" {
					finish = *choice.FinishReason
				}
			}
		}
		if err != nil {
			if err == io.EOF && finish != "" {
				break // some servers end without [DONE]
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("llm: %s: the stream broke before the answer ended: %w", name, c.contextCause(ctx, err))
		}
	}
	text := content.String()
	c.learn(text)
	c.remember(ctx, before)
	visible, inline := splitThink(text)
	msg := Message{Role: RoleAssistant, Content: visible, Reasoning: strings.TrimSpace(reasoning.String())}
	if inline != "" {
		if msg.Reasoning != "" {
			msg.Reasoning += "\n\n"
		}
		msg.Reasoning += inline
	}
	for i := range calls {
		if calls[i].Function.Arguments == "" {
			calls[i].Function.Arguments = "{}"
		}
	}
	msg.ToolCalls = calls
	return &ChatResult{Message: msg, FinishReason: normalizeFinish(finish, len(calls) > 0), Usage: usage}, nil
}

// learn records what an answer's content shows about inline reasoning.
func (c *Client) learn(content string) {
	if i, _, closing := nextTag(content, false); i >= 0 && closing {
		c.think.Store(thinkCloserFirst)
		return
	}
	c.think.CompareAndSwap(thinkUnknown, thinkOpenTags)
}

// shower passes on the visible text of a growing content, never a piece
// that later text could turn into reasoning.
type shower struct {
	state   int32
	onText  func(string)
	shown   string // the visible text passed on so far
	stopped bool   // the visible text stopped growing as a prefix: show no more
}

func newShower(state int32, onText func(string)) *shower {
	return &shower{state: state, onText: onText}
}

// seen takes the whole content so far.
func (s *shower) seen(content string) {
	if s.stopped {
		return
	}
	if s.state == thinkUnknown && !s.opening(content) {
		return
	}
	if s.state == thinkCloserFirst {
		if i, _, _ := nextTag(content, false); i < 0 {
			return // still inside the reasoning the prompt opened
		}
	}
	// A '<' near the end may begin a tag still arriving: hold it back.
	if k := strings.LastIndexByte(content, '<'); k >= 0 && k > len(content)-len("</thinking>") && partialTag(content[k:]) {
		content = content[:k]
	}
	visible, _ := splitThink(content)
	// Spaces at either end may yet be trimmed away: show what is between.
	visible = strings.TrimSpace(visible)
	if !strings.HasPrefix(visible, s.shown) {
		s.stopped = true
		return
	}
	if len(visible) == len(s.shown) {
		return
	}
	piece := visible[len(s.shown):]
	s.shown = visible
	s.onText(piece)
}

// opening settles an unknown posture from an answer's first non-space
// bytes, reporting whether it is settled: an opening tag is a model that
// writes its own tags (its blocks are left out as they come); a closing
// tag is a template that opened the block (an empty one); anything else
// is taken as an answer and shown. A model whose template opens the block
// should be declared (NEO_MODEL_OPENS_IN_REASONING=yes): what it writes
// before its first closing tag cannot be told from an answer until then,
// and once that closer comes no more is shown, and the answer as a whole
// replaces what was.
func (s *shower) opening(content string) bool {
	head := strings.TrimLeft(content, " \t\r\n")
	if head == "" || head[0] == '<' && len(head) < len("</thinking>") && partialTag(head) {
		return false // the first bytes may yet be a tag
	}
	s.state = thinkOpenTags
	if n, closing := tagAt(head); n > 0 && closing {
		s.state = thinkCloserFirst
	}
	return true
}

// partialTag reports whether s, which starts with '<', may be the start
// of a think tag not yet complete.
func partialTag(s string) bool {
	low := strings.ToLower(s)
	for _, tag := range [...]string{"<think>", "<thinking>", "</think>", "</thinking>"} {
		if len(low) < len(tag) && strings.HasPrefix(tag, low) {
			return true
		}
	}
	return false
}
