package speak

import (
	"context"
	"errors"
	"testing"

	"github.com/neobot/neobot/core"
)

// platform records the calls a Reporter makes: the method, the thread it
// was told and what it carried.
type platform struct {
	calls []string
	err   error
}

func (p *platform) note(method string, t core.Thread, what string) error {
	p.calls = append(p.calls, method+" "+t.Key()+" "+what)
	return p.err
}

func (p *platform) Say(_ context.Context, t core.Thread, text string) error {
	return p.note("Say", t, text)
}

func (p *platform) Status(_ context.Context, t core.Thread, text string) error {
	return p.note("Status", t, text)
}

func (p *platform) Notice(_ context.Context, t core.Thread, text string) error {
	return p.note("Notice", t, text)
}

func (p *platform) StreamAnswer(_ context.Context, t core.Thread) (core.AnswerStream, error) {
	return nil, p.note("StreamAnswer", t, "")
}

func (p *platform) Step(_ context.Context, t core.Thread, s core.Step) error {
	return p.note("Step", t, s.ID)
}

func (p *platform) Upload(_ context.Context, t core.Thread, f core.ToolFile) error {
	return p.note("Upload", t, f.Name)
}

func (p *platform) PrivateNotice(_ context.Context, t core.Thread, user, text string) error {
	return p.note("PrivateNotice", t, user+":"+text)
}

// TestReporterTellsTheThread: every call reaches the platform with the
// reporter's thread and what it carried, and the platform's error comes
// back.
func TestReporterTellsTheThread(t *testing.T) {
	boom := errors.New("boom")
	p := &platform{err: boom}
	thread := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.5"}
	r := Reporter[*platform]{P: p, T: thread}
	ctx := context.Background()
	key := thread.Key()

	for _, tc := range []struct {
		call func() error
		want string
	}{
		{func() error { return r.Say(ctx, "answer") }, "Say " + key + " answer"},
		{func() error { return r.Status(ctx, "working") }, "Status " + key + " working"},
		{func() error { return r.Notice(ctx, "stopped") }, "Notice " + key + " stopped"},
		{func() error { _, err := r.StreamAnswer(ctx); return err }, "StreamAnswer " + key + " "},
		{func() error { return r.Step(ctx, core.Step{ID: "call-1"}) }, "Step " + key + " call-1"},
		{func() error { return r.Upload(ctx, core.ToolFile{Name: "a.png"}) }, "Upload " + key + " a.png"},
		{func() error { return r.PrivateNotice(ctx, "U1", "link") }, "PrivateNotice " + key + " U1:link"},
	} {
		p.calls = nil
		if err := tc.call(); !errors.Is(err, boom) {
			t.Errorf("%s: error %v, want the platform's %v", tc.want, err, boom)
		}
		if len(p.calls) != 1 || p.calls[0] != tc.want {
			t.Errorf("platform calls = %q, want [%q]", p.calls, tc.want)
		}
	}
}
