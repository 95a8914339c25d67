package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/neobot/neobot/core"
)

// answerData is the answer event: the text and the turn it answers, which
// a rating names.
type answerData struct {
	Text string `json:"text"`
	Turn string `json:"turn,omitempty"`
}

// showAnswer publishes the final answer with its turn.
func (r reporter) showAnswer(ctx context.Context, text string) {
	d := answerData{Text: text}
	if turn, ok := core.TurnFrom(ctx); ok {
		d.Turn = turn.Inbound.EventID
	}
	r.a.show(r.t.ID, EventAnswer, d)
}

// rate is POST /v1/conversations/{id}/feedback: the caller rates an
// answer of their conversation, {"turn", "rating": "up"|"down", "reason"}.
func (a *Adapter) rate(w http.ResponseWriter, r *http.Request, user string) {
	t, ok := a.owned(w, r, user)
	if !ok {
		return
	}
	var body struct {
		Turn   string `json:"turn"`
		Rating string `json:"rating"`
		Reason string `json:"reason"`
	}
	if err := decode(r, &body); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if body.Turn == "" || (body.Rating != "up" && body.Rating != "down") {
		apiError(w, http.StatusBadRequest, `send {"turn": "<the answer event's turn>", "rating": "up" or "down", "reason": "<optional, for down>"}`)
		return
	}
	if a.opts.Rater == nil {
		apiError(w, http.StatusNotImplemented, "ratings are not kept on this server")
		return
	}
	err := a.opts.Rater.Rate(r.Context(), core.Rating{Thread: t, Turn: body.Turn, User: user, Up: body.Rating == "up", Reason: strings.TrimSpace(body.Reason)})
	switch {
	case errors.Is(err, core.ErrNotFound):
		apiError(w, http.StatusNotFound, "no such answer in this conversation")
		return
	case err != nil:
		a.opts.Logger.Warn().Err(err).Str("thread", t.Key()).Msg("web: rate an answer")
		apiError(w, http.StatusInternalServerError, "the rating could not be recorded; try again")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "rated"})
}
