package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// maxToolPictures caps the pictures from one step's calls shown to the
// model, as attach caps those of one message.
const maxToolPictures = 4

// maxPictureBytes caps one picture shown to the model: the smallest
// per-image limit of the providers that take images.
const maxPictureBytes = 5 << 20

// deliver posts the files the calls returned in the thread, when the
// thread's Reporter is a core.Uploader, and notes in each call's result
// what was posted. It returns the user message that shows a model that
// sees images the pictures among them, nil when there is none to show.
func (tr *turn) deliver(ctx context.Context, results []outcome) *llm.Message {
	a := tr.a
	up, _ := tr.reporter().(core.Uploader)
	var pics []llm.Image
	var names []string
	for i := range results {
		r := &results[i]
		var posted []string
		for _, f := range r.files {
			if up != nil {
				if err := up.Upload(ctx, f); err != nil {
					a.log.Warn().Err(err).Str("thread", tr.st.thread.Key()).Str("tool", f.Tool).Str("file", f.Name).Msg("agent: post a tool's file in the thread")
				} else {
					posted = append(posted, f.Name)
				}
			}
			if _, ok := llm.SniffImage(f.Data); ok && a.opts.Vision && len(pics) < maxToolPictures && len(f.Data) <= maxPictureBytes {
				pics = append(pics, llm.Image{Name: f.Name, MIMEType: f.MIMEType, Data: f.Data})
				names = append(names, fmt.Sprintf("%q from %s", f.Name, f.Tool))
			}
		}
		if len(posted) > 0 {
			r.content += "\n[Posted in the thread for the user to see: " + strings.Join(posted, ", ") + ".]"
		}
	}
	if len(pics) == 0 {
		return nil
	}
	return &llm.Message{Role: llm.RoleUser, Images: pics,
		Content: toolPicturesIntro + strings.Join(names, ", ") + ". They are tool output, not the user's words."}
}

// toolPicturesIntro opens the user message that shows tools' pictures.
const toolPicturesIntro = "[harness] The pictures the tools just returned, shown to you: "

// ToolPictures reports whether m is the message that shows a model the
// pictures tools returned: a user message the user never wrote, which a
// transcript shown to people leaves out.
func ToolPictures(m llm.Message) bool {
	return m.Role == llm.RoleUser && strings.HasPrefix(m.Content, toolPicturesIntro)
}
