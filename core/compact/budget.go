package compact

import (
	"fmt"

	"github.com/neobot/neobot/core/llm"
	"github.com/tiktoken-go/tokenizer"
)

// Default thresholds, as fractions of the context window.
const (
	DefaultSoftPct = 0.80
	DefaultHardPct = 0.92
)

// Pressure is how full the context window is.
type Pressure int

// Pressure levels.
const (
	// PressureNone needs no compaction.
	PressureNone Pressure = iota
	// PressureSoft compacts cooperatively at a clean boundary.
	PressureSoft
	// PressureHard forces compaction before the next model call.
	PressureHard
)

// String returns the level's name.
func (p Pressure) String() string {
	switch p {
	case PressureSoft:
		return "soft"
	case PressureHard:
		return "hard"
	}
	return "none"
}

// Budget is a model's context window and the thresholds at which it is
// compacted.
type Budget struct {
	// Window is the context window in tokens.
	Window int
	// SoftPct and HardPct are fractions of Window (defaults 0.80, 0.92).
	SoftPct, HardPct float64
}

// NewBudget returns the budget of a window with the default thresholds.
func NewBudget(window int) Budget {
	return Budget{Window: window, SoftPct: DefaultSoftPct, HardPct: DefaultHardPct}
}

// Check reports the pressure at used tokens.
func (b Budget) Check(used int) Pressure {
	if b.Window <= 0 {
		return PressureNone
	}
	soft, hard := b.SoftPct, b.HardPct
	if soft <= 0 {
		soft = DefaultSoftPct
	}
	if hard <= 0 {
		hard = DefaultHardPct
	}
	switch f := float64(used) / float64(b.Window); {
	case f >= hard:
		return PressureHard
	case f >= soft:
		return PressureSoft
	}
	return PressureNone
}

// Stat renders the budget line shown to the model.
func (b Budget) Stat(used int) string {
	if b.Window <= 0 {
		return fmt.Sprintf("~%d tokens used", used)
	}
	return fmt.Sprintf("~%d of %d tokens (%d%%)", used, b.Window, used*100/b.Window)
}

// Counter counts the tokens of a text.
type Counter func(s string) int

// msgOverhead is what the chat format adds per message (role, separators).
const msgOverhead = 4

// Heuristic estimates tokens at one per three bytes, rounded up. BPE
// tokenizers average about four bytes a token on English prose and fewer on
// JSON, hex and code, so this overestimates slightly, which errs on the
// side of compacting early. It costs one length lookup, so the agent can
// call it on every step; use [NewTokenizer] where precision matters more
// than speed.
func Heuristic(s string) int { return (len(s) + 2) / 3 }

// NewTokenizer returns an offline o200k_base counter (the vocabulary is
// embedded in the binary; nothing is downloaded). It is exact for recent
// OpenAI models and a close estimate for others, at about 10 MB/s.
func NewTokenizer() (Counter, error) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("compact: tokenizer: %w", err)
	}
	return func(s string) int {
		n, err := codec.Count(s)
		if err != nil {
			return Heuristic(s)
		}
		return n
	}, nil
}

// MessageTokens estimates one message, its tool calls included.
func MessageTokens(count Counter, m llm.Message) int {
	if count == nil {
		count = Heuristic
	}
	n := msgOverhead + count(m.Content)
	for _, c := range m.ToolCalls {
		n += msgOverhead + count(c.Function.Name) + count(c.Function.Arguments)
	}
	for _, img := range m.Images {
		n += img.Tokens()
	}
	return n
}

// Estimate estimates a whole request: messages and tool schemas.
func Estimate(count Counter, msgs []llm.Message, tools []llm.Tool) int {
	if count == nil {
		count = Heuristic
	}
	n := 0
	for _, m := range msgs {
		n += MessageTokens(count, m)
	}
	return n + ToolsTokens(count, tools)
}

// ToolsTokens estimates the tool schemas as sent.
func ToolsTokens(count Counter, tools []llm.Tool) int {
	if count == nil {
		count = Heuristic
	}
	n := 0
	for _, t := range tools {
		n += msgOverhead + count(t.Function.Name) + count(t.Function.Description)
		n += count(fmt.Sprint(t.Function.Parameters))
	}
	return n
}
