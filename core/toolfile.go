package core

import "context"

// ToolFile is a file a tool returned (a picture, or an embedded resource's
// content), to be posted in the thread and, when it is a picture, shown
// to a model that sees images.
type ToolFile struct {
	// Name is the file's name as posted: the resource's own, or one made
	// from the tool's name and the type.
	Name string
	// MIMEType is the type the tool gave, or the one its bytes show for a
	// picture.
	MIMEType string
	// Data is the file's content.
	Data []byte
	// Tool is the function name of the call that returned it.
	Tool string
}

// Uploader is a Reporter that can also post a file in the thread: Slack's
// external upload, a Discord attachment, a web download. A Reporter that
// is not one leaves the files to the text that describes them.
type Uploader interface {
	// Upload posts f in the thread. The error says it was not posted.
	Upload(ctx context.Context, f ToolFile) error
}

type fileSinkKey struct{}

// WithFileSink returns a context whose tool calls hand the files their
// results carry to sink. The agent sets one per call; sink is called from
// the dispatching goroutine, before Dispatch returns.
func WithFileSink(ctx context.Context, sink func(ToolFile)) context.Context {
	return context.WithValue(ctx, fileSinkKey{}, sink)
}

// SendFile hands f to the context's file sink, and reports whether there
// was one to take it.
func SendFile(ctx context.Context, f ToolFile) bool {
	sink, _ := ctx.Value(fileSinkKey{}).(func(ToolFile))
	if sink == nil {
		return false
	}
	sink(f)
	return true
}
