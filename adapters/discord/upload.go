package discord

import (
	"bytes"
	"context"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"
)

// Upload posts a file a tool returned in the thread as a message
// attachment (a multipart message: payload_json and files[0]).
func (r reporter) Upload(ctx context.Context, f core.ToolFile) error { return r.a.upload(ctx, r.t, f) }

var _ core.Uploader = reporter{}

func (a *Adapter) upload(ctx context.Context, t core.Thread, f core.ToolFile) error {
	_, err := a.s.ChannelMessageSendComplex(t.ID, &discordgo.MessageSend{
		Files:           []*discordgo.File{{Name: f.Name, ContentType: f.MIMEType, Reader: bytes.NewReader(f.Data)}},
		AllowedMentions: &discordgo.MessageAllowedMentions{},
	}, call(ctx))
	if err != nil {
		return fmt.Errorf("discord: upload %s to %s: %w", f.Name, t, err)
	}
	return nil
}
