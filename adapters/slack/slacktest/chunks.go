package slacktest

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Chunk is one chunk a streamed message received through the chunks
// argument of chat.startStream, chat.appendStream or chat.stopStream, as
// Slack documents them: markdown_text {text}, task_update {id, title,
// status, details, output, sources}, plan_update {title} and blocks.
type Chunk struct {
	Type    string          `json:"type"`
	Text    string          `json:"text,omitempty"`
	ID      string          `json:"id,omitempty"`
	Title   string          `json:"title,omitempty"`
	Status  string          `json:"status,omitempty"`
	Details string          `json:"details,omitempty"`
	Output  string          `json:"output,omitempty"`
	Sources []ChunkSource   `json:"sources,omitempty"`
	Blocks  json.RawMessage `json:"blocks,omitempty"`
	// Method is the call that carried the chunk.
	Method string `json:"-"`
}

// ChunkSource is a task_update's source link.
type ChunkSource struct {
	Type string `json:"type"`
	URL  string `json:"url"`
	Text string `json:"text"`
}

// Tasks returns the message's task cards: for each task_update ID, in
// the order they first appeared, the statuses it went through.
func (m Message) Tasks() []Task {
	var out []Task
	at := map[string]int{}
	for _, c := range m.Chunks {
		if c.Type != "task_update" {
			continue
		}
		i, ok := at[c.ID]
		if !ok {
			i = len(out)
			at[c.ID] = i
			out = append(out, Task{ID: c.ID})
		}
		t := &out[i]
		t.Title = c.Title
		if c.Output != "" {
			t.Output = c.Output
		}
		if n := len(t.Statuses); n == 0 || t.Statuses[n-1] != c.Status {
			t.Statuses = append(t.Statuses, c.Status)
		}
	}
	return out
}

// Plan returns the title of the message's last plan_update, or "".
func (m Message) Plan() string {
	p := ""
	for _, c := range m.Chunks {
		if c.Type == "plan_update" {
			p = c.Title
		}
	}
	return p
}

// Task is a task card of a streamed message.
type Task struct {
	ID, Title, Output string
	// Statuses are the card's statuses in order, repeats dropped.
	Statuses []string
}

// parseChunks reads a stream call's chunks argument, refusing what Slack
// refuses: not a JSON array, an unknown type, a missing required field, a
// task status Slack does not know, a source without text, markdown over
// 12,000 characters. The error is Slack's error code.
func parseChunks(method string, p url.Values) ([]Chunk, string) {
	raw := p.Get("chunks")
	if raw == "" {
		return nil, ""
	}
	var chunks []Chunk
	if err := json.Unmarshal([]byte(raw), &chunks); err != nil {
		return nil, "invalid_chunks"
	}
	for i := range chunks {
		c := &chunks[i]
		c.Method = method
		switch c.Type {
		case "markdown_text":
			if c.Text == "" || utf8.RuneCountInString(c.Text) > 12000 {
				return nil, "invalid_chunks"
			}
		case "task_update":
			if c.ID == "" || strings.TrimSpace(c.Title) == "" {
				return nil, "invalid_chunks"
			}
			switch c.Status {
			case "pending", "in_progress", "complete", "error":
			default:
				return nil, "invalid_chunks"
			}
			for _, s := range c.Sources {
				if s.Text == "" {
					return nil, "invalid_chunks"
				}
			}
		case "plan_update":
			if strings.TrimSpace(c.Title) == "" {
				return nil, "invalid_chunks"
			}
		case "blocks":
			if !json.Valid(c.Blocks) {
				return nil, "invalid_chunks"
			}
		default:
			return nil, "invalid_chunks"
		}
	}
	return chunks, ""
}

// chunkMarkdown is the markdown_text chunks' text, joined.
func chunkMarkdown(chunks []Chunk) string {
	var b strings.Builder
	for _, c := range chunks {
		if c.Type == "markdown_text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// checkStopBlocks refuses chat.stopStream's blocks argument where Slack
// would: it is a JSON array of Block Kit blocks (at most 50, each with a
// type), shown at the bottom of the finished message, and its
// context_actions blocks hold what Slack allows there.
func checkStopBlocks(raw string) string {
	var blocks []blockJSON
	if json.Unmarshal([]byte(raw), &blocks) != nil || len(blocks) > 50 {
		return "invalid_blocks"
	}
	for _, b := range blocks {
		if b.Type == "" {
			return "invalid_blocks"
		}
	}
	return checkContextActions(raw)
}
