package discord

import (
	"bytes"
	"context"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"
)

// Upload posts a file a tool returned in thread t as a message
// attachment (a multipart message: payload_json and files[0]).
func (a *Adapter) Upload(ctx context.Context, t core.Thread, f core.ToolFile) error {
	_, err := a.s.ChannelMessageSendComplex(t.ID, &discordgo.MessageSend{
		Files:           []*discordgo.File{{Name: f.Name, ContentType: f.MIMEType, Reader: bytes.NewReader(f.Data)}},
		AllowedMentions: &discordgo.MessageAllowedMentions{},
	}, call(ctx))
	if err != nil {
		return fmt.Errorf("discord: upload %s to %s: %w", f.Name, t, err)
	}
	return nil
}
