package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core/llm"
	"github.com/rs/zerolog"
)

// LedgerHeader introduces the side effects already done, carried from one
// summary to the next so nothing is repeated.
const LedgerHeader = "LEDGER (tool calls already made — do not repeat them):"

// ErrEmptySummary reports a summarizer that answered with nothing usable.
var ErrEmptySummary = errors.New("compact: summarizer returned no summary")

// Model is what compact needs of a language model.
type Model interface {
	Chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatResult, error)
}

// Options configures a [Compactor].
type Options struct {
	// Cheap writes summaries. When nil or failing, Main does.
	Cheap Model
	// Main is the fallback summarizer.
	Main Model
	// ExcerptCap caps each message's text in the summarizer's prompt
	// (default 4 KiB); whatever is cut still reaches validation.
	ExcerptCap int
	// Logger records fallbacks (zero value: silent).
	Logger zerolog.Logger
}

// Compactor writes validated consolidated summaries. It is safe for
// concurrent use.
type Compactor struct {
	models     []Model
	excerptCap int
	log        zerolog.Logger
}

// New returns a Compactor.
func New(opts Options) *Compactor {
	c := &Compactor{excerptCap: opts.ExcerptCap, log: opts.Logger}
	for _, m := range []Model{opts.Cheap, opts.Main} {
		if m != nil {
			c.models = append(c.models, m)
		}
	}
	if c.excerptCap <= 0 {
		c.excerptCap = 4 << 10
	}
	return c
}

// Result is a consolidated summary and what validation had to restore.
type Result struct {
	// Text is the summary, ledger and preserved artifacts included.
	Text string
	// Dropped are the tokens the summarizer lost and validation restored.
	Dropped []string
}

// summarySystem is the schema the cheap model writes to.
const summarySystem = `You compact the working history of an assistant's conversation so it can continue without it.
Write a consolidated summary with exactly these sections, each header on its own line:
GOAL: what the user is trying to achieve.
DECISIONS: what was decided, and why.
ARTIFACTS: every identifier, address, hash, ID, URL, file path and number that matters, copied verbatim.
OPEN: questions and tasks still open.
LAST_RESULTS: the latest tool results that matter.
NEXT: what the assistant should do next.
Merge the previous summary into yours. Never invent facts. Copy identifiers character for character.
Answer with the summary only.`

// Summarize consolidates prior (the previous summary, possibly "") and
// msgs into a new summary: the cheap model writes it (the main model when
// the cheap one is unset or fails), the ledger of tool calls is carried
// over and extended, and [ValidateSummary] restores any high-entropy token
// of prior or msgs that the model dropped. On error the caller degrades to
// [SafeTail] with [Fallback].
func (c *Compactor) Summarize(ctx context.Context, prior string, msgs []llm.Message) (Result, error) {
	if len(c.models) == 0 {
		return Result{}, errors.New("compact: no model to summarize with")
	}
	req := llm.ChatRequest{Messages: []llm.Message{
		llm.SystemMessage(summarySystem),
		llm.UserMessage(c.prompt(prior, msgs)),
	}}
	var text string
	var errs []error
	for i, m := range c.models {
		res, err := m.Chat(ctx, req)
		if err == nil && res.FinishReason != llm.FinishLength && strings.TrimSpace(res.Message.Content) != "" {
			text = strings.TrimSpace(res.Message.Content)
			break
		}
		if err == nil {
			err = ErrEmptySummary
		}
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		errs = append(errs, err)
		if i+1 < len(c.models) {
			c.log.Warn().Err(err).Msg("compact: cheap model failed, summarizing with the main model")
		}
	}
	if text == "" {
		return Result{}, fmt.Errorf("compact: summarize: %w", errors.Join(errs...))
	}
	text = stripSection(text, LedgerHeader)
	text = stripSection(text, ArtifactsHeader)
	return c.finish(text, prior, msgs), nil
}

// Fallback is the summary kept when no model could write one: the prior
// summary, a note, the ledger, and every artifact of the compacted
// history, so even the degraded path keeps the trust contract.
func (c *Compactor) Fallback(prior string, msgs []llm.Message) Result {
	text := stripSection(stripSection(prior, LedgerHeader), ArtifactsHeader)
	note := "(Earlier messages were set aside without a summary; the identifiers below are from them.)"
	if strings.TrimSpace(text) == "" {
		text = note
	} else {
		text = strings.TrimSpace(text) + "\n\n" + note
	}
	return c.finish(text, prior, msgs)
}

// finish appends the ledger and validates the result against everything
// it stands for.
func (c *Compactor) finish(text, prior string, msgs []llm.Message) Result {
	ledger := append(sectionLines(prior, LedgerHeader), ledgerLines(msgs)...)
	if len(ledger) > 0 {
		text += "\n\n" + LedgerHeader + "\n" + strings.Join(ledger, "\n")
	}
	// Restored artifacts from earlier summaries stay restored.
	if prev := sectionLines(prior, ArtifactsHeader); len(prev) > 0 {
		text += "\n\n" + ArtifactsHeader + "\n" + strings.Join(prev, "\n")
	}
	validated, dropped := ValidateSummary(text, prior+"\n"+Render(msgs, 0))
	return Result{Text: validated, Dropped: dropped}
}

// prompt renders the summarizer's input.
func (c *Compactor) prompt(prior string, msgs []llm.Message) string {
	var b strings.Builder
	if strings.TrimSpace(prior) != "" {
		b.WriteString("Previous summary:\n")
		b.WriteString(prior)
		b.WriteString("\n\n")
	}
	b.WriteString("History to compact:\n")
	b.WriteString(Render(msgs, c.excerptCap))
	return b.String()
}

// Render writes msgs as plain text, one block per message, each capped at
// limit bytes (0: no cap).
func Render(msgs []llm.Message, limit int) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.Role == "" {
			continue
		}
		b.WriteString("[" + m.Role)
		if m.Role == llm.RoleTool && m.Name != "" {
			b.WriteString(" " + m.Name)
		}
		b.WriteString("] ")
		b.WriteString(clip(m.Content, limit))
		for _, tc := range m.ToolCalls {
			b.WriteString("\n  -> " + tc.Function.Name + " " + clip(tc.Function.Arguments, limit))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ledgerLines lists the tool calls made in msgs, with their outcome.
func ledgerLines(msgs []llm.Message) []string {
	outcome := map[string]string{}
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			status := "done"
			if strings.HasPrefix(m.Content, "error:") {
				status = "failed"
			}
			outcome[m.ToolCallID] = status
		}
	}
	var lines []string
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			status, ok := outcome[tc.ID]
			if !ok {
				status = "no result"
			}
			lines = append(lines, fmt.Sprintf("- %s %s -> %s", tc.Function.Name, clip(tc.Function.Arguments, 300), status))
		}
	}
	return lines
}

// sectionLines returns the "- " lines of the section under header in text.
func sectionLines(text, header string) []string {
	k := strings.Index(text, header)
	if k < 0 {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(text[k+len(header):], "\n") {
		if strings.HasPrefix(l, "- ") {
			lines = append(lines, l)
			continue
		}
		if strings.TrimSpace(l) != "" {
			break
		}
	}
	return lines
}

// stripSection removes the section under header (its header and "- "
// lines) from text; the compactor writes those sections itself.
func stripSection(text, header string) string {
	k := strings.Index(text, header)
	if k < 0 {
		return text
	}
	rest := text[k+len(header):]
	end := len(rest)
	off := 0
	for _, l := range strings.SplitAfter(rest, "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "- ") {
			end = off
			break
		}
		off += len(l)
	}
	return strings.TrimSpace(strings.TrimSpace(text[:k]) + "\n\n" + strings.TrimSpace(rest[end:]))
}

// clip caps s at limit bytes on a rune boundary (0: no cap).
func clip(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" …[%d bytes cut]", len(s)-cut)
}
