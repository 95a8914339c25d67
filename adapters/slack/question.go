package slack

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/gatetext"
	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/core"
)

// A question a tool's server asks (a gate with a Form) shows as a gate
// message: one button per choice for an enum or a yes/no, else an
// "Answer…" button that opens a modal (views.open with the click's
// trigger_id) with one input per field, pre-filled with the defaults. The
// modal's view_submission is checked against the form: a wrong value keeps
// the modal open with the problem under its field.

// formCallbackID names neobot's question modals in view_submission.
const formCallbackID = "neobot_form"

// formActionID is the action_id of every input of a question modal; the
// block_id is the field's name.
const formActionID = "v"

// openForm opens the question g's modal for the click with trigger.
func (a *Adapter) openForm(ctx context.Context, trigger string, g core.Gate) error {
	_, err := a.api.OpenViewContext(ctx, trigger, questionModal(g))
	return err
}

// questionModal is the modal for the question g: its message, then one
// input per field.
func questionModal(g core.Gate) slack.ModalViewRequest {
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType,
		mdsplit.Clip(mrkdwn(g.Question), 2900, mdsplit.Bytes), false, false), nil, nil)}
	for _, f := range g.Form.Fields {
		label := slack.NewTextBlockObject(slack.PlainTextType, mdsplit.Clip(f.Label(), 2000, mdsplit.Bytes), false, false)
		var hint *slack.TextBlockObject
		if f.Description != "" {
			hint = slack.NewTextBlockObject(slack.PlainTextType, mdsplit.Clip(f.Description, 2000, mdsplit.Bytes), false, false)
		}
		var el slack.BlockElement
		if opts := fieldChoices(f); opts != nil {
			sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, formActionID)
			for i, v := range opts.values {
				o := slack.NewOptionBlockObject(v, slack.NewTextBlockObject(slack.PlainTextType, gatetext.Label(opts.labels[i], i, 75), false, false), nil)
				sel.Options = append(sel.Options, o)
				if v == f.Prefill() {
					sel.InitialOption = o
				}
			}
			el = sel
		} else {
			in := slack.NewPlainTextInputBlockElement(nil, formActionID)
			in.InitialValue = f.Prefill()
			if f.MaxLength != nil && *f.MaxLength > 0 && *f.MaxLength <= 3000 {
				in.MaxLength = *f.MaxLength
			}
			el = in
		}
		b := slack.NewInputBlock(f.Name, label, hint, el)
		b.Optional = !f.Required
		blocks = append(blocks, b)
	}
	return slack.ModalViewRequest{
		Type: slack.VTModal, CallbackID: formCallbackID, PrivateMetadata: g.Token,
		Title:  slack.NewTextBlockObject(slack.PlainTextType, "Question", false, false),
		Submit: slack.NewTextBlockObject(slack.PlainTextType, "Send", false, false),
		Close:  slack.NewTextBlockObject(slack.PlainTextType, "Back", false, false),
		Blocks: slack.Blocks{BlockSet: blocks},
	}
}

// choices are a select's values and labels.
type choices struct{ values, labels []string }

// fieldChoices returns the choices of an enum or boolean field, nil for a
// field typed in.
func fieldChoices(f core.FormField) *choices {
	switch {
	case f.Type == "boolean":
		return &choices{values: []string{"true", "false"}, labels: []string{"Yes", "No"}}
	case len(f.Enum) > 0 && len(f.Enum) <= 100:
		c := &choices{values: f.Enum}
		for i, v := range f.Enum {
			label := v
			if i < len(f.EnumTitles) && f.EnumTitles[i] != "" {
				label = f.EnumTitles[i]
			}
			c.labels = append(c.labels, label)
		}
		return c
	}
	return nil
}

// viewAck is the answer to a view_submission: nothing closes the modal;
// response_action "errors" keeps it open with a sentence under fields.
type viewAck struct {
	ResponseAction string            `json:"response_action,omitempty"`
	Errors         map[string]string `json:"errors,omitempty"`
}

// submitForm records a question modal's submission and returns the ack's
// payload: nil when it was recorded (the modal closes and the question's
// message shows the answer), else the problems to show in the modal.
func (a *Adapter) submitForm(ctx context.Context, cb slack.InteractionCallback) json.RawMessage {
	gates := a.opts.Gates
	token := cb.View.PrivateMetadata
	if gates == nil || token == "" {
		return nil
	}
	g, err := gates.Load(ctx, token)
	if err != nil || g.Form == nil {
		return nil
	}
	input := map[string]string{}
	for _, f := range g.Form.Fields {
		v := cb.View.State.Values[f.Name][formActionID]
		input[f.Name] = v.Value
		if v.SelectedOption.Value != "" {
			input[f.Name] = v.SelectedOption.Value
		}
	}
	d, problems, err := gates.Submit(ctx, token, cb.User.ID, nil, input)
	if err == nil {
		a.work.Go(func() {
			sctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
			defer cancel()
			defer intake.Guard(a.log, "slack: show answered question")
			a.showGate(sctx, d, "", "")
		})
		return nil
	}
	ack := viewAck{ResponseAction: "errors", Errors: problems}
	if !errors.Is(err, core.ErrFormInvalid) {
		if !errors.Is(err, core.ErrGateForbidden) && !errors.Is(err, core.ErrGateClosed) && !errors.Is(err, core.ErrGateExpired) {
			a.log.Error().Err(err).Msg("slack: record a question's answer")
		}
		ack.Errors = map[string]string{}
		if len(g.Form.Fields) > 0 {
			ack.Errors[g.Form.Fields[0].Name] = gates.SubmitRefusal(g, err)
		}
	}
	raw, _ := json.Marshal(ack)
	return raw
}

// ackWith acknowledges an envelope with a payload (a view_submission's
// response_action).
func (s *socket) ackWith(id string, payload json.RawMessage) error {
	raw, err := json.Marshal(struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload,omitempty"`
	}{id, payload})
	if err != nil {
		return err
	}
	return s.write(raw)
}

// isFormSubmission reports whether cb submits one of neobot's question
// modals.
func isFormSubmission(cb slack.InteractionCallback) bool {
	return cb.Type == slack.InteractionTypeViewSubmission && cb.View.CallbackID == formCallbackID
}

// formSubmitTimeout bounds recording a submission, within Slack's three
// seconds to answer it.
const formSubmitTimeout = 2500 * time.Millisecond

// formAck records a question modal's submission within Slack's time to
// answer it and returns the ack's payload (see submitForm).
func (a *Adapter) formAck(cb slack.InteractionCallback) json.RawMessage {
	ctx, cancel := context.WithTimeout(context.Background(), formSubmitTimeout)
	defer cancel()
	defer intake.Guard(a.log, "slack: question submission")
	return a.submitForm(ctx, cb)
}
