package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/slack-go/slack"
)

// message is what Neo posts, or edits a message into, with
// chat.postMessage and chat.update.
type message struct {
	text     string // the message, or the fallback for its blocks
	markdown string // markdown_text, which Slack renders from standard markdown
	// blocks is a JSON array of Block Kit blocks. Empty sends none, which
	// chat.update reads as "keep the blocks"; "[]" removes them.
	blocks string
}

// noBlocks removes the blocks of a message an update edits, such as a
// status line's: its text shows instead.
const noBlocks = "[]"

// textMessage is a message of plain mrkdwn text.
func textMessage(text string) message { return message{text: text} }

// blockMessage is a message of Block Kit blocks and their fallback text.
func blockMessage(fallback string, blocks ...slack.Block) (message, error) {
	if len(blocks) == 0 {
		return message{text: fallback, blocks: noBlocks}, nil
	}
	b, err := json.Marshal(blocks)
	if err != nil {
		return message{}, fmt.Errorf("encode blocks: %w", err)
	}
	return message{text: fallback, blocks: string(b)}, nil
}

// maxChatResponse bounds the answer to a chat call read into memory: Slack
// echoes the message, at most 40,000 characters of text and 50 blocks.
const maxChatResponse = 1 << 20

// chat calls chat.postMessage, or chat.update when ts is set, and returns
// the message's ts. Every turn posts a status line and edits it into the
// answer; slack-go would decode the whole message Slack echoes back each
// time, where Neo needs only ok, ts and error. The errors are slack-go's,
// so retry and the callers read them alike.
func (a *Adapter) chat(ctx context.Context, channel, threadTS, ts string, m message) (string, error) {
	method := "chat.postMessage"
	if ts != "" {
		method = "chat.update"
	}
	// The request body is not recycled: the transport may still be
	// writing it when an early answer arrives.
	form := make([]byte, 0, 64+len(channel)+len(m.text)+len(m.markdown)+len(m.blocks))
	form = field(form, "channel", channel)
	form = field(form, "thread_ts", threadTS)
	form = field(form, "ts", ts)
	form = field(form, "text", m.text)
	form = field(form, "markdown_text", m.markdown)
	form = field(form, "blocks", m.blocks)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.opts.APIURL+method, bytes.NewReader(form))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+a.opts.BotToken)
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		// Retry-After 0 means at once; a missing or unreadable one waits
		// a second rather than not at all: Slack asked for a pause.
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil || secs < 0 {
			secs = 1
		}
		return "", &slack.RateLimitedError{RetryAfter: time.Duration(secs) * time.Second}
	case resp.StatusCode != http.StatusOK:
		return "", slack.StatusCodeError{Code: resp.StatusCode, Status: resp.Status}
	}
	body, _ := a.answers.Get().(*bytes.Buffer)
	if body == nil {
		body = new(bytes.Buffer)
	}
	defer a.answers.Put(body)
	body.Reset()
	if _, err := body.ReadFrom(io.LimitReader(resp.Body, maxChatResponse)); err != nil {
		return "", fmt.Errorf("read the answer: %w", err)
	}
	var out struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		TS    string `json:"ts"`
	}
	if err := json.Unmarshal(body.Bytes(), &out); err != nil {
		return "", fmt.Errorf("read the answer: %w", err)
	}
	if !out.OK {
		if out.Error == "" {
			out.Error = "ok is false, with no error given"
		}
		return "", slack.SlackErrorResponse{Err: out.Error}
	}
	return out.TS, nil
}

// field appends key=value to a form body; an empty value is left out.
func field(form []byte, key, value string) []byte {
	if value == "" {
		return form
	}
	if len(form) > 0 {
		form = append(form, '&')
	}
	form = append(form, key...)
	form = append(form, '=')
	return append(form, url.QueryEscape(value)...)
}
