package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/neobot/neobot/core"
)

// A question a tool's server asks (a gate with a Form) goes out on the
// conversation's stream as a question.asked event with its form. A choice
// question is answered like an approval, with the index of an option at
// POST /v1/gates/{token}/answer (Decline and Cancel among them); a form is
// sent whole to POST /v1/gates/{token}/form. Only the person whose turn it
// is may answer; its end is a gate.decided event.

// EventQuestionAsked is a question a tool's server asks the person whose
// turn it is: {"token", "question", "options", "form", ...}.
const EventQuestionAsked = "question.asked"

// questionData is a question as the event stream shows it.
type questionData struct {
	Token    string `json:"token"`
	Question string `json:"question"`
	// Options are the buttons: the choices of a one-choice form, or
	// "Answer…" (open the form), then Decline and Cancel.
	Options []string    `json:"options"`
	Form    []formField `json:"form"`
	// URL is a URL-mode question's page, opened with a link.
	URL          string    `json:"url,omitempty"`
	Requester    string    `json:"requester"`
	Expires      time.Time `json:"expires"`
	Conversation string    `json:"conversation"`
}

// formField is one field of a question's form.
type formField struct {
	Name        string   `json:"name"`
	Label       string   `json:"label"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type"`
	Format      string   `json:"format,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	EnumTitles  []string `json:"enum_titles,omitempty"`
	Min         *float64 `json:"minimum,omitempty"`
	Max         *float64 `json:"maximum,omitempty"`
	Default     string   `json:"default,omitempty"`
	Required    bool     `json:"required"`
}

// postQuestion shows the question g on its conversation's stream.
func (a *Adapter) postQuestion(g core.Gate) {
	d := questionData{Token: g.Token, Question: mention.ReplaceAllString(g.Question, "@$1"), Options: core.Labels(g.Options),
		Requester: g.Requester, Expires: g.Expires, Conversation: g.Thread.ID, URL: g.Form.URL}
	for _, f := range g.Form.Fields {
		d.Form = append(d.Form, formField{Name: f.Name, Label: f.Label(), Description: f.Description, Type: f.Type,
			Format: f.Format, Enum: f.Enum, EnumTitles: f.EnumTitles, Min: f.Min, Max: f.Max, Default: f.Prefill(), Required: f.Required})
	}
	a.show(g.Thread.ID, EventQuestionAsked, d)
}

// form answers POST /v1/gates/{token}/form: the person whose turn it is
// sends the question's fields, by name. A value that breaks the form is
// refused with 422 and a sentence per field, and the question stays open.
func (a *Adapter) form(w http.ResponseWriter, r *http.Request, user string) {
	var body struct {
		Values map[string]any `json:"values"`
	}
	if err := decode(r, &body); err != nil || body.Values == nil {
		apiError(w, http.StatusBadRequest, `send {"values": {"<field>": <value>, ...}}; fields left out take their defaults`)
		return
	}
	gates := a.opts.Gates
	token := r.PathValue("token")
	if gates == nil {
		apiError(w, http.StatusNotFound, "no such question")
		return
	}
	g, err := gates.Load(r.Context(), token)
	if err != nil || g.Thread.Platform != Platform || g.Form == nil {
		apiError(w, http.StatusNotFound, "no such question")
		return
	}
	input := map[string]string{}
	for k, v := range body.Values {
		if v != nil {
			input[k] = fmt.Sprint(v)
		}
	}
	d, problems, err := gates.Submit(r.Context(), token, user, nil, input)
	switch {
	case err == nil:
		a.showGate(d)
		writeJSON(w, http.StatusOK, decidedData{Token: d.Token, State: string(d.State), Answer: d.Answer, By: d.DecidedBy})
	case errors.Is(err, core.ErrFormInvalid):
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": "the answer does not fit the form; nothing was sent", "problems": problems})
	case errors.Is(err, core.ErrGateForbidden):
		apiError(w, http.StatusForbidden, mention.ReplaceAllString(gates.SubmitRefusal(g, err), "@$1"))
	case errors.Is(err, core.ErrGateClosed), errors.Is(err, core.ErrGateExpired):
		apiError(w, http.StatusConflict, gates.SubmitRefusal(g, err))
	default:
		a.log.Error().Err(err).Msg("web: record a question's answer")
		apiError(w, http.StatusServiceUnavailable, gates.SubmitRefusal(g, err))
	}
}
