package discordtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/bwmarrin/discordgo"
)

type rewrite struct{ base *url.URL }

func (t rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.base.Scheme, t.base.Host, t.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

// TestModalAsDiscord: a modal response sent by discordgo is kept with its
// inputs, one Discord would refuse is refused, and a submission reads back
// through discordgo's ModalSubmitData as Discord's does.
func TestModalAsDiscord(t *testing.T) {
	s := New(t)
	base, _ := url.Parse(s.URL())
	dg, err := discordgo.New("Bot test")
	if err != nil {
		t.Fatal(err)
	}
	dg.Client, dg.MaxRestRetries = &http.Client{Transport: rewrite{base}}, 0
	ch := s.AddChannel("general").ID
	posted, err := dg.ChannelMessageSend(ch, "which size?")
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := s.MessageByID(posted.ID)
	modal := func(title string) *discordgo.InteractionResponse {
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
			CustomID: "form:1", Title: title, Components: []discordgo.MessageComponent{
				discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{CustomID: "name", Label: "Name", Style: discordgo.TextInputShort, Value: "Ada"}}},
				discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{CustomID: "guests", Label: "Guests", Style: discordgo.TextInputShort, Required: true}}},
			}}}
	}
	click := s.Click("111", msg, 0)
	in := &discordgo.Interaction{ID: click.ID, Token: "itoken-" + click.ID, AppID: AppID}
	if err := dg.InteractionRespond(in, modal("A title well over the forty-five characters Discord allows")); err == nil {
		t.Error("a modal with a 58-character title was accepted")
	}
	if err := dg.InteractionRespond(in, modal("Question")); err != nil {
		t.Fatalf("modal response: %v", err)
	}
	resps := s.Responses()
	if len(resps) != 1 || resps[0].Type != ResponseModal || resps[0].CustomID != "form:1" {
		t.Fatalf("responses = %+v, want the modal", resps)
	}
	inputs := resps[0].Inputs()
	if len(inputs) != 2 || inputs[0].Value != "Ada" || inputs[1].CustomID != "guests" {
		t.Fatalf("modal inputs = %+v, want name (Ada) and guests", inputs)
	}

	s.SubmitModal("111", resps[0], map[string]string{"guests": "3"})
	s.mu.Lock()
	raw := s.gw.queue[len(s.gw.queue)-1]
	s.mu.Unlock()
	var f struct {
		T string          `json:"t"`
		D json.RawMessage `json:"d"`
	}
	var ic discordgo.InteractionCreate
	if err := json.Unmarshal(raw, &f); err != nil || json.Unmarshal(f.D, &ic) != nil {
		t.Fatalf("dispatched frame %s does not decode", raw)
	}
	if f.T != "INTERACTION_CREATE" || ic.Type != discordgo.InteractionModalSubmit {
		t.Fatalf("dispatched %s of type %v, want a modal submit", f.T, ic.Type)
	}
	data := ic.ModalSubmitData()
	got := map[string]string{}
	for _, row := range data.Components {
		for _, c := range row.(*discordgo.ActionsRow).Components {
			ti := c.(*discordgo.TextInput)
			got[ti.CustomID] = ti.Value
		}
	}
	if data.CustomID != "form:1" || got["name"] != "Ada" || got["guests"] != "3" || ic.Message == nil || ic.Message.ID != posted.ID {
		t.Errorf("submission = %s %v (message %v), want form:1 with name Ada, guests 3, from the clicked message", data.CustomID, got, ic.Message)
	}
}
