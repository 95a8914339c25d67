package discord

import (
	"context"
	"errors"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/internal/gatetext"
	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/core"
)

// A question a tool's server asks (a gate with a Form) shows as a gate
// message: a button per choice for an enum or a yes/no, else an "Answer…"
// button whose click is answered with a modal (interaction response type
// 9), one text input per field, pre-filled with the defaults. The modal's
// submission is checked against the form: a wrong value is told in
// private, and Answer… opens the form again.

// formPrefix starts the custom_id of a question's modal:
// neobot_form:<token>.
const formPrefix = "neobot_form:"

// maxModalInputs is the most inputs a Discord modal takes.
const maxModalInputs = 5

// openForm answers the click i with the modal of the question g.
func (a *Adapter) openForm(ctx context.Context, i *discordgo.Interaction, g core.Gate) {
	a.respond(ctx, i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: questionModal(g)})
}

// questionModal is the modal for the question g: one text input per
// field, a choice field's values named in its placeholder.
func questionModal(g core.Gate) *discordgo.InteractionResponseData {
	var rows []discordgo.MessageComponent
	for n, f := range g.Form.Fields {
		if n == maxModalInputs {
			break
		}
		in := discordgo.TextInput{CustomID: f.Name, Label: mdsplit.Clip(f.Label(), 45, width), Style: discordgo.TextInputShort,
			Value: mdsplit.Clip(f.Prefill(), 4000, width), Required: f.Required && f.Default == nil}
		hint := f.Description
		if c := choiceHint(f); c != "" {
			hint = c
		}
		in.Placeholder = mdsplit.Clip(hint, 100, width)
		if f.MaxLength != nil && *f.MaxLength > 0 && *f.MaxLength <= 4000 {
			in.MaxLength = *f.MaxLength
		}
		if f.Type == "string" && f.Format == "" && len(f.Enum) == 0 && (f.MaxLength == nil || *f.MaxLength > 200) {
			in.Style = discordgo.TextInputParagraph
		}
		rows = append(rows, discordgo.ActionsRow{Components: []discordgo.MessageComponent{in}})
	}
	return &discordgo.InteractionResponseData{CustomID: formPrefix + g.Token, Title: "Question", Components: rows}
}

// choiceHint names the values a choice field takes.
func choiceHint(f core.FormField) string {
	switch {
	case f.Type == "boolean":
		return "yes or no"
	case len(f.Enum) > 0:
		labels := make([]string, len(f.Enum))
		for i, v := range f.Enum {
			labels[i] = v
			if i < len(f.EnumTitles) && f.EnumTitles[i] != "" {
				labels[i] = f.EnumTitles[i]
			}
		}
		return "One of: " + strings.Join(labels, ", ")
	}
	return ""
}

// isFormSubmit reports whether i submits one of neobot's question modals.
func isFormSubmit(i *discordgo.Interaction) bool {
	return i.Type == discordgo.InteractionModalSubmit && strings.HasPrefix(i.ModalSubmitData().CustomID, formPrefix)
}

// submitForm records a question modal's submission: the question's
// message shows the answer (type 7), or the person is told in private
// what to fix.
func (a *Adapter) submitForm(ctx context.Context, i *discordgo.Interaction) {
	user, roles := clicker(i)
	gates := a.opts.Gates
	data := i.ModalSubmitData()
	token := strings.TrimPrefix(data.CustomID, formPrefix)
	if gates == nil {
		a.respond(ctx, i, ephemeral("Sorry, that form isn't one I can act on."))
		return
	}
	input := map[string]string{}
	for _, row := range data.Components {
		r, ok := row.(*discordgo.ActionsRow)
		if !ok {
			continue
		}
		for _, c := range r.Components {
			if in, ok := c.(*discordgo.TextInput); ok {
				input[in.CustomID] = in.Value
			}
		}
	}
	g, problems, err := gates.Submit(ctx, token, user, roles, input)
	switch {
	case err == nil && i.Message != nil:
		a.respond(ctx, i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage, Data: gateData(g)})
		return
	case err == nil:
		a.respond(ctx, i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate})
		a.showGate(ctx, g)
		return
	case errors.Is(err, core.ErrFormInvalid):
		var lines []string
		for _, f := range g.Form.Fields {
			if p := problems[f.Name]; p != "" {
				lines = append(lines, "• "+p)
			}
		}
		a.respond(ctx, i, ephemeral(escape(strings.Join(lines, "\n"))+"\nNothing was sent: click **"+gatetext.Label(core.ElicitOpen, 0, 80)+"** to try again."))
		return
	case !errors.Is(err, core.ErrGateForbidden) && !errors.Is(err, core.ErrGateClosed) && !errors.Is(err, core.ErrGateExpired) && !errors.Is(err, core.ErrGateUnknown):
		a.log.Error().Err(err).Msg("discord: record a question's answer")
	}
	a.respond(ctx, i, ephemeral(gates.SubmitRefusal(g, err)))
}

// onFormSubmit runs a modal submission off the reader.
func (a *Adapter) onFormSubmit(i *discordgo.Interaction) {
	a.work.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		defer intake.Guard(a.log, "discord: form")
		a.submitForm(ctx, i)
	})
}
