package compact

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
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
	// MaxTokens bounds a whole summary, ledger and preserved identifiers
	// included (0: unbounded). What does not fit stays in the archive,
	// where the history search tool finds it; the summary says so.
	MaxTokens int
	// Counter measures MaxTokens (default [Heuristic]).
	Counter Counter
	// Logger records fallbacks (zero value: silent).
	Logger zerolog.Logger
}

// Compactor writes validated consolidated summaries. It is safe for
// concurrent use.
type Compactor struct {
	models     []Model
	excerptCap int
	maxTokens  int
	count      Counter
	log        zerolog.Logger
}

// New returns a Compactor.
func New(opts Options) *Compactor {
	c := &Compactor{excerptCap: opts.ExcerptCap, maxTokens: opts.MaxTokens, count: opts.Counter, log: opts.Logger}
	if c.count == nil {
		c.count = Heuristic
	}
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

// Shares of MaxTokens: the summarizer's prose, then the ledger; the
// preserved identifiers get what is left.
const (
	proseShare  = 0.45
	ledgerShare = 0.20
)

// ArchiveNote ends a ledger or identifier list that had no room for
// everything: the rest is in the archive, and the model can search it.
const ArchiveNote = "- … more from earlier in this conversation is archived: search it with " + HistorySearch

// HistorySearch is the tool that searches what compaction archived.
const HistorySearch = "history_search"

// finish appends the ledger and the identifiers the prose lost, within
// MaxTokens: the most recent tool calls, and the most recent and most
// referenced identifiers, first. Whatever is left out stays findable in
// the archive.
func (c *Compactor) finish(text, prior string, msgs []llm.Message) Result {
	history := prior + "\n" + Render(msgs, 0)
	var ledger []string
	for _, l := range append(sectionLines(prior, LedgerHeader), ledgerLines(msgs)...) {
		if l != ArchiveNote {
			ledger = append(ledger, l)
		}
	}
	if c.maxTokens > 0 {
		text = c.fit(text, int(proseShare*float64(c.maxTokens)))
	}
	if len(ledger) > 0 {
		if c.maxTokens > 0 {
			ledger = c.newest(ledger, int(ledgerShare*float64(c.maxTokens)))
		}
		text += "\n\n" + LedgerHeader + "\n" + strings.Join(ledger, "\n")
	}
	lost := missing(text, history)
	kept := lost
	if c.maxTokens > 0 {
		kept = c.rank(lost, c.maxTokens-c.count(text)-c.count(ArtifactsHeader+ArchiveNote)-8)
	}
	if len(kept) > 0 {
		lines := make([]string, 0, len(kept)+1)
		for _, a := range kept {
			lines = append(lines, "- "+a.tok)
		}
		if len(kept) < len(lost) {
			lines = append(lines, ArchiveNote)
		}
		text += "\n\n" + ArtifactsHeader + "\n" + strings.Join(lines, "\n")
	} else if len(lost) > 0 {
		text += "\n\n" + ArtifactsHeader + "\n" + ArchiveNote
	}
	dropped := make([]string, len(kept))
	for i, a := range kept {
		dropped[i] = a.tok
	}
	return Result{Text: text + "\n", Dropped: dropped}
}

// fit cuts text to about limit tokens, on a line boundary where it can.
func (c *Compactor) fit(text string, limit int) string {
	n := c.count(text)
	if n <= limit {
		return text
	}
	cut := len(text) * limit / n
	for cut > 0 && text[cut]&0xC0 == 0x80 {
		cut--
	}
	if nl := strings.LastIndexByte(text[:cut], '\n'); nl > cut/2 {
		cut = nl
	}
	return strings.TrimRight(text[:cut], " \n") + "\n…"
}

// newest keeps the last lines that fit in limit tokens, in order, and
// notes the archive when some are left out.
func (c *Compactor) newest(lines []string, limit int) []string {
	used := c.count(ArchiveNote)
	i := len(lines)
	for i > 0 && used+c.count(lines[i-1])+1 <= limit {
		used += c.count(lines[i-1]) + 1
		i--
	}
	if i == 0 {
		return lines
	}
	return append([]string{ArchiveNote}, lines[i:]...)
}

// artifact is an identifier of the history the summary does not hold.
type artifact struct {
	tok  string
	refs int // times it occurs in the history
	last int // its last occurrence, in scan order: higher is more recent
}

// missing returns the identifiers of history that text does not hold as
// whole tokens, in order of first appearance.
func missing(text, history string) []artifact {
	present := map[string]bool{}
	scanArtifacts(text, func(tok string) { present[tok] = true })
	idx := map[string]int{}
	var out []artifact
	n := 0
	scanArtifacts(history, func(tok string) {
		n++
		if present[tok] {
			return
		}
		if i, ok := idx[tok]; ok {
			out[i].refs++
			out[i].last = n
			return
		}
		// A token inside a longer one (an ID inside a URL) is still
		// verbatim, but only as a whole token.
		if containsToken(text, tok) {
			present[tok] = true
			return
		}
		idx[tok] = len(out)
		out = append(out, artifact{tok: tok, refs: 1, last: n})
	})
	return out
}

// rank picks the identifiers that fit in limit tokens: half the room goes
// to the most recent, the rest to the most referenced of the others.
func (c *Compactor) rank(all []artifact, limit int) []artifact {
	cost := func(a artifact) int { return c.count(a.tok) + 2 }
	total := 0
	for _, a := range all {
		total += cost(a)
	}
	if total <= limit {
		return all
	}
	byRecent := slices.Clone(all)
	slices.SortStableFunc(byRecent, func(a, b artifact) int { return cmp.Compare(b.last, a.last) })
	var kept []artifact
	taken := map[string]bool{}
	used := 0
	for _, a := range byRecent {
		if used+cost(a) > limit/2 {
			break
		}
		used += cost(a)
		kept = append(kept, a)
		taken[a.tok] = true
	}
	byRefs := slices.Clone(byRecent)
	slices.SortStableFunc(byRefs, func(a, b artifact) int { return cmp.Compare(b.refs, a.refs) })
	for _, a := range byRefs {
		if taken[a.tok] || used+cost(a) > limit {
			continue
		}
		used += cost(a)
		kept = append(kept, a)
	}
	return kept
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
