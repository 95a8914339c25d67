package feedback

import (
	"context"

	"github.com/neobot/neobot/core"
)

// Reasons are what a thumbs down is asked to say, offered as buttons on
// every platform; a rating's Reason is one of them or the person's words.
var Reasons = []string{"Wrong or made up", "Incomplete", "Did not do what I asked", "Hard to follow"}

// Rated returns the turn whose answer the feedback buttons shown under
// ctx's answer rate: its event ID. Without a rater (nothing would record
// the click) or a turn, there is nothing to rate and no buttons.
func Rated(ctx context.Context, rater core.Rater) (string, bool) {
	turn, ok := core.TurnFrom(ctx)
	if rater == nil || !ok || turn.Inbound.EventID == "" {
		return "", false
	}
	return turn.Inbound.EventID, true
}
