// Package feedback records what people think of Neo's answers: a rating
// from a chat's feedback buttons is completed with the question, the
// answer, the skill and the model, stored with the turn, and counted.
package feedback

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neobot/neobot/core"
)

// Store keeps ratings. The bbolt and PostgreSQL stores implement it.
type Store interface {
	// SaveRating stores r, replacing the rating of the same thread, turn
	// and user.
	SaveRating(ctx context.Context, r core.Rating) error
	// Ratings returns the ratings made at or after since, oldest first.
	Ratings(ctx context.Context, since time.Time) ([]core.Rating, error)
}

// Options configure a Service.
type Options struct {
	Store Store
	// Turn returns a turn's question and final answer (see
	// agent.TurnText); nil leaves them empty.
	Turn func(ctx context.Context, t core.Thread, eventID string) (question, answer string, err error)
	// Skill names the skill bound where the rating was made; nil leaves
	// it empty.
	Skill func(in core.Inbound) string
	// Model is the model that answers.
	Model string
	// Observe is told of every rating recorded, for metrics, but not of
	// the reason that follows a thumbs down (core.Rating.FollowUp).
	Observe func(core.Rating)
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
}

// MaxReason bounds a reason's length in characters.
const MaxReason = 500

// Service records ratings; it is a core.Rater.
type Service struct{ opts Options }

var _ core.Rater = (*Service)(nil)

// New returns a Service; Store is required.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("feedback: no store")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{opts: opts}, nil
}

// Rate completes r with the turn's question and answer, the skill and
// the model, and stores it. A rating of a turn the thread does not hold
// is refused with core.ErrNotFound: a button's value is not trusted.
func (s *Service) Rate(ctx context.Context, r core.Rating) error {
	if r.Turn == "" || r.User == "" {
		return fmt.Errorf("feedback: a rating needs a turn and a user: %w", core.ErrNotFound)
	}
	if r.At.IsZero() {
		r.At = s.opts.Now()
	}
	r.Reason = strings.TrimSpace(r.Reason)
	if rs := []rune(r.Reason); len(rs) > MaxReason {
		r.Reason = string(rs[:MaxReason])
	}
	if r.Up {
		r.Reason = ""
	}
	if s.opts.Turn != nil {
		q, a, err := s.opts.Turn(ctx, r.Thread, r.Turn)
		if err != nil {
			return fmt.Errorf("feedback: rate turn %s in %s: %w", r.Turn, r.Thread.Key(), err)
		}
		r.Question, r.Answer = q, a
	}
	if s.opts.Skill != nil {
		r.Skill = s.opts.Skill(core.Inbound{Thread: r.Thread, User: r.User, DM: r.DM})
	}
	r.Model = s.opts.Model
	if err := s.opts.Store.SaveRating(ctx, r); err != nil {
		return fmt.Errorf("feedback: save the rating of turn %s: %w", r.Turn, err)
	}
	if s.opts.Observe != nil && !r.FollowUp {
		s.opts.Observe(r)
	}
	return nil
}

// Ratings returns the ratings made at or after since.
func (s *Service) Ratings(ctx context.Context, since time.Time) ([]core.Rating, error) {
	return s.opts.Store.Ratings(ctx, since)
}
