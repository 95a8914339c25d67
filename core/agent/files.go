package agent

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
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

// maxStoredPictureBytes bounds the pictures one stored message keeps:
// one full-size picture, or several small ones. The pictures past it are
// shown for the turn that has them (its steps share the in-memory
// message) and named as no longer kept in the stored one, so a flood of
// pictures cannot grow the store by more than this a message.
const maxStoredPictureBytes = 5 << 20

// storedPictures returns m as it is stored: within maxStoredPictureBytes
// of pictures, the others dropped in order and named in the text. m
// itself is not changed.
func storedPictures(m *llm.Message) *llm.Message {
	if m == nil || len(m.Images) == 0 {
		return m
	}
	total := 0
	for _, img := range m.Images {
		total += len(img.Data)
	}
	if total <= maxStoredPictureBytes {
		return m
	}
	kept := *m
	kept.Images = nil
	var dropped []string
	total = 0
	for _, img := range m.Images {
		if total+len(img.Data) <= maxStoredPictureBytes {
			kept.Images = append(kept.Images, img)
			total += len(img.Data)
			continue
		}
		dropped = append(dropped, strconv.Quote(cmp.Or(img.Name, "a picture")))
	}
	kept.Content += "\n\n[Pictures shown with this message but not kept for later messages (over " +
		strconv.Itoa(maxStoredPictureBytes>>20) + " MB together): " + strings.Join(dropped, ", ") + ".]"
	return &kept
}

// toolPicturesIntro opens the user message that shows tools' pictures.
const toolPicturesIntro = "[harness] The pictures the tools just returned, shown to you: "

// ToolPictures reports whether m is the message that shows a model the
// pictures tools returned: a user message the user never wrote, which a
// transcript shown to people leaves out.
func ToolPictures(m llm.Message) bool {
	return m.Role == llm.RoleUser && strings.HasPrefix(m.Content, toolPicturesIntro)
}
