package llm

import (
	"context"
	"fmt"
	"strings"
)

// Posture is what is known about where a model's answers start: whether
// a chat template opens a reasoning block in the prompt, so that an answer
// begins inside it ("reasoning…</think>answer") with no opening tag to
// tell. It decides how soon streamed text may be shown.
type Posture string

// The postures. PostureAuto is a setting's default, never a learned
// posture: it means "learn it from the answers".
const (
	// PostureAuto learns the posture: from the store if an earlier run
	// learned it for this model and endpoint, else from the first answer.
	PostureAuto Posture = "auto"
	// PostureOpened is a model whose answers may begin inside a reasoning
	// block the prompt opened: nothing before its first closing tag is
	// shown.
	PostureOpened Posture = "yes"
	// PostureTagged is a model that never closes a tag it did not open:
	// its answers stream at once, with any <think> blocks left out.
	PostureTagged Posture = "no"
)

// ParsePosture reads a posture setting: auto, yes or no (any case,
// around space). The error names setting and says what to write.
func ParsePosture(setting, s string) (Posture, error) {
	switch p := Posture(strings.ToLower(strings.TrimSpace(s))); p {
	case "", PostureAuto:
		return PostureAuto, nil
	case PostureOpened, PostureTagged:
		return p, nil
	}
	return "", fmt.Errorf("%s=%q is not a reasoning posture: write auto (learn it from the first answer), yes (the chat template opens <think> in the prompt, so answers start inside reasoning) or no (answers never start inside reasoning)", setting, s)
}

// Postures keeps what a model's answers taught about its posture across
// restarts, per model and endpoint, so a restarted client streams its
// first answer at once. The store implements it with plain strings.
type Postures interface {
	// ModelPosture returns the posture saved for model at endpoint, or ""
	// when none is.
	ModelPosture(ctx context.Context, model, endpoint string) (string, error)
	// SaveModelPosture saves the posture learned for model at endpoint,
	// replacing any saved before.
	SaveModelPosture(ctx context.Context, model, endpoint, posture string) error
}

func (p Posture) state() int32 {
	switch p {
	case PostureOpened:
		return thinkCloserFirst
	case PostureTagged:
		return thinkOpenTags
	}
	return thinkUnknown
}

func postureOf(state int32) Posture {
	switch state {
	case thinkCloserFirst:
		return PostureOpened
	case thinkOpenTags:
		return PostureTagged
	}
	return PostureAuto
}

// Posture returns what the client knows about its model's posture now:
// declared, recalled from the store, or learned; PostureAuto while
// nothing is known yet.
func (c *Client) Posture() Posture { return postureOf(c.think.Load()) }

// Recall loads the posture an earlier run saved for this client's model
// and endpoint, and keeps store to save what later answers teach. A
// declared posture (Config.Posture) is never replaced by a stored one.
// Call it once, before the client's first answer.
func (c *Client) Recall(ctx context.Context, store Postures) error {
	if store == nil {
		return nil
	}
	c.postures.Store(&store)
	if c.declared() {
		return nil
	}
	s, err := store.ModelPosture(ctx, c.cfg.Model, c.set.endpoint)
	if err != nil {
		return fmt.Errorf("llm: recall what %s taught about reasoning: %w", c.cfg.Model, err)
	}
	switch p := Posture(s); p {
	case PostureOpened, PostureTagged:
		c.think.CompareAndSwap(thinkUnknown, p.state())
	}
	return nil
}

// templateOpens reports model families whose published chat templates
// open a reasoning block in the prompt: in auto, they start as declared
// "yes" until an answer or the store says otherwise, so not even their
// first answer shows its reasoning.
func templateOpens(model string) bool {
	m := strings.ToLower(model)
	for _, family := range [...]string{"deepseek-r1", "qwq", "thinking-2507"} {
		if strings.Contains(m, family) {
			return true
		}
	}
	return false
}

func (c *Client) declared() bool {
	return c.cfg.Posture == PostureOpened || c.cfg.Posture == PostureTagged
}

// remember saves a posture the last answer changed. A failed save costs
// only the next restart's first answer a short hold: it is logged, not
// returned.
func (c *Client) remember(ctx context.Context, before int32) {
	after := c.think.Load()
	if after == before || c.declared() {
		return
	}
	sp := c.postures.Load()
	if sp == nil {
		return
	}
	if err := (*sp).SaveModelPosture(context.WithoutCancel(ctx), c.cfg.Model, c.set.endpoint, string(postureOf(after))); err != nil {
		c.cfg.Logger.Warn().Err(err).Str("model", c.cfg.Model).Msg("llm: saving what the answer taught about reasoning failed; the next start holds its first answer back until its first words")
		return
	}
	c.cfg.Logger.Info().Str("model", c.cfg.Model).Str("posture", string(postureOf(after))).Msg("llm: learned whether answers start inside reasoning")
}
