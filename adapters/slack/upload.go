package slack

import (
	"bytes"
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/core"
)

// Upload posts a file a tool returned in thread t, through Slack's
// external upload flow (files.getUploadURLExternal, the bytes to the
// upload URL, files.completeUploadExternal with channel_id and
// thread_ts). It needs the files:write scope. It is not retried: a
// completed upload whose answer was lost would post the file twice.
func (a *Adapter) Upload(ctx context.Context, t core.Thread, f core.ToolFile) error {
	_, err := a.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader: bytes.NewReader(f.Data), FileSize: len(f.Data), Filename: f.Name, Title: f.Name,
		Channel: t.Channel, ThreadTimestamp: t.ID,
	})
	if err != nil {
		return fmt.Errorf("slack: upload %s to %s (the app needs the files:write scope): %w", f.Name, t, err)
	}
	return nil
}
