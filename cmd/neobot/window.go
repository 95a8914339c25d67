package main

import (
	"fmt"

	"github.com/neobot/neobot/core/llm"
	"github.com/rs/zerolog"
)

// windowFix is what an operator does about a guessed window.
const windowFix = "set NEO_CONTEXT_WINDOW to the context the model is served with (for Ollama, its num_ctx or the server's OLLAMA_CONTEXT_LENGTH)"

// describeWindow says which context window c's model gets and where the
// figure came from, for `neobot check`.
func describeWindow(c *llm.Client) string {
	n, src := c.ContextWindowSource()
	switch src {
	case llm.WindowConfigured:
		return fmt.Sprintf("context window %d tokens (from NEO_CONTEXT_WINDOW)", n)
	case llm.WindowRegistry:
		return fmt.Sprintf("context window %d tokens (from the model registry)", n)
	}
	return fmt.Sprintf("context window %d tokens, a guess: the model registry does not know %s; %s", n, c.Model(), windowFix)
}

// logWindow records at start-up which context window the main model gets
// and where it came from; a guess is a warning, with the fix.
func logWindow(log zerolog.Logger, c *llm.Client) {
	n, src := c.ContextWindowSource()
	ev := log.Info()
	if src == llm.WindowGuessed {
		ev = log.Warn().Str("fix", windowFix)
	}
	ev.Str("model", c.Model()).Int("context_window", n).Str("window_source", src.String()).Msg("context window in use")
}

// visionEdit applies NEO_MODEL_VISION to the main model's client; the
// setting was validated with the rest, so an unreadable value is auto.
func (c *Config) visionEdit() func(*llm.Config) {
	seen, _ := c.vision()
	return func(lc *llm.Config) { lc.Vision = seen }
}

// describeVision says whether c's model is shown the pictures people
// attach and why, for `neobot check`.
func describeVision(c *llm.Client, setting string) string {
	_, known := llm.Vision(c.Model())
	from := "NEO_MODEL_VISION"
	if v, _ := (&Config{ModelVision: setting}).vision(); v == nil {
		from = "the model registry"
		if !known {
			from = "the model registry does not know " + c.Model() + ", so it is taken not to"
		}
	}
	if c.SeesImages() {
		return fmt.Sprintf("shown to %s as image content (%s)", c.Model(), from)
	}
	return fmt.Sprintf("not shown to %s (%s): it is told a picture was not shown, and so is the user; set NEO_MODEL_VISION=yes if it takes image content", c.Model(), from)
}
