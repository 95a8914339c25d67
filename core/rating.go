package core

import (
	"context"
	"time"
)

// Rating is what someone thought of one of Neo's answers: thumbs up or
// down, with an optional reason for a down. It is kept with the turn: the
// thread and the event ID of the message that asked.
type Rating struct {
	Thread Thread
	// Turn is the EventID of the inbound message the answer answered.
	Turn string
	// User is who rated; one rating per user and turn, the latest wins.
	User string
	At   time.Time
	Up   bool
	// Reason says what was wrong, for a down; "" when none was given.
	Reason string
	// DM reports a rating in a direct message, which decides the skill;
	// not stored.
	DM bool `json:"-"`
	// FollowUp marks the reason given after a thumbs down already
	// recorded: stored, not counted again. Not stored.
	FollowUp bool `json:"-"`

	// Filled in when the rating is recorded: the skill and model that
	// answered, and the question and the answer as stored.
	Skill    string
	Model    string
	Question string
	Answer   string
}

// Rater records ratings. Adapters take one to handle their feedback
// buttons; a nil Rater shows none.
type Rater interface {
	// Rate records r, replacing the user's earlier rating of the turn.
	Rate(ctx context.Context, r Rating) error
}

// RatingKind is "up" or "down", as metrics and exports name a rating.
func (r Rating) Kind() string {
	if r.Up {
		return "up"
	}
	return "down"
}
