package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/feedback"
)

// ratingRow is one rating as neobot feedback prints it.
type ratingRow struct {
	At       time.Time `json:"at"`
	Thread   string    `json:"thread"`
	Turn     string    `json:"turn"`
	User     string    `json:"user"`
	Rating   string    `json:"rating"`
	Reason   string    `json:"reason,omitempty"`
	Skill    string    `json:"skill"`
	Model    string    `json:"model"`
	Question string    `json:"question"`
	Answer   string    `json:"answer"`
}

// runFeedback is `neobot feedback [--since 7d] [--format csv|json]`: what
// people thought of Neo's answers, with the question and the answer, so a
// team can see what Neo gets wrong.
func (m *Main) runFeedback(ctx context.Context, args []string) error {
	src, from, format, err := m.openExport(ctx, "feedback", args, "csv", "json")
	if err != nil {
		return err
	}
	ratings, err := src.Ratings(ctx, from)
	if err != nil {
		return err
	}
	rows := make([]ratingRow, 0, len(ratings))
	for _, r := range ratings {
		rows = append(rows, ratingRow{At: r.At.UTC(), Thread: r.Thread.Key(), Turn: r.Turn, User: r.User, Rating: r.Kind(),
			Reason: r.Reason, Skill: r.Skill, Model: r.Model, Question: r.Question, Answer: r.Answer})
	}
	if format == "json" {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	w := csv.NewWriter(m.Stdout)
	_ = w.Write([]string{"at", "thread", "turn", "user", "rating", "reason", "skill", "model", "question", "answer"})
	for _, r := range rows {
		_ = w.Write([]string{stamp(r.At), r.Thread, r.Turn, r.User, r.Rating, r.Reason, r.Skill, r.Model, r.Question, r.Answer})
	}
	w.Flush()
	return w.Error()
}

// newRater builds the service the chats' feedback buttons rate through,
// counted in neobot_feedback_total.
func (m *Main) newRater(a *app) (*feedback.Service, error) {
	ratings := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neobot_feedback_total",
		Help: "Ratings of answers from the chats' feedback buttons and the web, by rating (up, down), skill and model; a changed rating counts again, the reason given after a thumbs down does not."},
		[]string{"rating", "skill", "model"})
	if err := m.tel.reg.Register(ratings); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, fmt.Errorf("feedback metrics: %w", err)
		}
		ratings = are.ExistingCollector.(*prometheus.CounterVec)
	}
	return feedback.New(feedback.Options{
		Store: a.db,
		Turn: func(ctx context.Context, t core.Thread, eventID string) (string, string, error) {
			_, live, err := a.db.LoadTranscript(ctx, t)
			if err != nil {
				return "", "", err
			}
			old, err := a.db.Archived(ctx, t)
			if err != nil {
				return "", "", err
			}
			return agent.TurnText(append(old, live...), eventID)
		},
		Skill:   func(in core.Inbound) string { return a.skills.For(in).Name },
		Model:   a.cfg.Model,
		Observe: func(r core.Rating) { ratings.WithLabelValues(r.Kind(), r.Skill, r.Model).Inc() },
	})
}
