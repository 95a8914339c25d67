package terminal

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// scriptRunner answers every turn by echoing it and, when the text asks
// for it, requesting an approval first.
type scriptRunner struct {
	turns   []core.Inbound
	answers []core.GateAnswer
}

func (r *scriptRunner) Run(ctx context.Context, t core.Turn) error {
	r.turns = append(r.turns, t.Inbound)
	t.Reporter.Status(ctx, "Thinking…")
	if strings.HasPrefix(t.Inbound.Text, "pay") || strings.HasPrefix(t.Inbound.Text, "ship") {
		req := core.GateRequest{Question: "send 5 USDC to bob?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}}
		if strings.HasPrefix(t.Inbound.Text, "ship") {
			// Labels that say the opposite of their flags.
			req.Options = []core.Option{{Label: "Ship it", Approves: true}, {Label: "Yes"}}
		}
		ans := core.Ask(ctx, t.Approver, req)
		r.answers = append(r.answers, ans)
		if !ans.Approved {
			return t.Reporter.Say(ctx, "Not sent: you denied it.")
		}
		return t.Reporter.Say(ctx, "Sent.")
	}
	if t.Inbound.Text == "fail" {
		return errors.New("agent: persist step: disk full")
	}
	return t.Reporter.Say(ctx, "echo: "+t.Inbound.Text)
}

func TestRun(t *testing.T) {
	tests := []struct {
		name, in, wantOut string
		wantErr           []string
		wantApproved      []bool
	}{
		{"answers each line", "hello\n\nworld\n", "echo: hello\necho: world\n", []string{"> ", "  … Thinking…\n"}, nil},
		{"approval denied with n", "pay bob\nn\n", "Not sent: you denied it.\n",
			[]string{"approval needed — send 5 USDC to bob?\n    options: yes | no\n    approve? [y/N] ", "    denied\n"}, []bool{false}},
		{"approval granted with y", "pay bob\ny\n", "Sent.\n", []string{"    approved\n"}, []bool{true}},
		{"anything else denies", "pay bob\nsure\n", "Not sent: you denied it.\n", nil, []bool{false}},
		{"y picks the marked option", "ship\ny\n", "Sent.\n", []string{"    approved\n"}, []bool{true}},
		{"an unmarked yes denies", "ship\nYes\n", "Not sent: you denied it.\n", []string{"    denied\n"}, []bool{false}},
		{"end of input during approval denies", "pay bob", "Not sent: you denied it.\n", nil, []bool{false}},
		{"exit ends", "hi\nexit\nnever\n", "echo: hi\n", nil, nil},
		{"failure is a sentence", "fail\n", "", []string{"Sorry, I couldn't finish that; the details are in the log.\n"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw strings.Builder
			r := &scriptRunner{}
			th := core.Thread{Platform: "terminal", Workspace: "local", Channel: "cli", ID: "default"}
			err := Run(context.Background(), Options{In: strings.NewReader(tc.in), Out: &out, Err: &errw, Thread: th, User: "ada", Runner: r,
				Now: func() time.Time { return time.Unix(100, 0) }})
			if err != nil {
				t.Fatalf("Run = %v, want nil at end of input", err)
			}
			if out.String() != tc.wantOut {
				t.Errorf("Out = %q, want %q", out.String(), tc.wantOut)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errw.String(), w) {
					t.Errorf("Err = %q, want it to contain %q", errw.String(), w)
				}
			}
			if strings.Contains(errw.String(), "disk full") {
				t.Errorf("Err leaks the raw error: %q", errw.String())
			}
			var got []bool
			for _, a := range r.answers {
				got = append(got, a.Approved)
			}
			if len(got) != len(tc.wantApproved) || (len(got) > 0 && got[0] != tc.wantApproved[0]) {
				t.Errorf("approvals = %v, want %v", got, tc.wantApproved)
			}
			for i, in := range r.turns {
				if in.Thread != th || in.User != "ada" || in.EventID == "" || (i > 0 && in.EventID == r.turns[i-1].EventID) {
					t.Errorf("turn %d inbound = %+v, want the thread, the user and a fresh event ID", i, in)
				}
			}
		})
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, errw strings.Builder
	err := Run(ctx, Options{In: pr, Out: &out, Err: &errw, Runner: &scriptRunner{}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run(cancelled) = %v, want context.Canceled", err)
	}
}

// streamRunner streams its answer: each piece must be on Out before the
// next is written.
type streamRunner struct{ seen []string }

func (r *streamRunner) Run(ctx context.Context, t core.Turn) error {
	s, err := t.Reporter.(core.Streamer).StreamAnswer(ctx)
	if err != nil {
		return err
	}
	out := r.out(ctx, t)
	if s.Write(ctx, "Let me ") != nil || s.Abort(ctx) != nil { // a step that turned into tool calls
		return errors.New("abort")
	}
	r.seen = append(r.seen, out())
	s, _ = t.Reporter.(core.Streamer).StreamAnswer(ctx)
	for _, p := range []string{"The key ", "rotates ", "monthly."} {
		if err := s.Write(ctx, p); err != nil {
			return err
		}
		r.seen = append(r.seen, out())
	}
	return s.Close(ctx, "The key rotates monthly.\n")
}

func (r *streamRunner) out(ctx context.Context, t core.Turn) func() string {
	return func() string { return ctx.Value(outKey{}).(*strings.Builder).String() }
}

type outKey struct{}

func TestStreamedAnswerPrintsAsItComes(t *testing.T) {
	var out, errw strings.Builder
	r := &streamRunner{}
	ctx := context.WithValue(context.Background(), outKey{}, &out)
	th := core.Thread{Platform: "terminal", Workspace: "local", Channel: "cli", ID: "default"}
	if err := Run(ctx, Options{In: strings.NewReader("key?\n"), Out: &out, Err: &errw, Thread: th, User: "ada", Runner: r}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Let me \n", "Let me \nThe key ", "Let me \nThe key rotates ", "Let me \nThe key rotates monthly."}
	if strings.Join(r.seen, "|") != strings.Join(want, "|") {
		t.Errorf("Out while streaming = %q, want %q", r.seen, want)
	}
	if out.String() != "Let me \nThe key rotates monthly.\n" {
		t.Errorf("Out = %q, want the answer ended by its newline", out.String())
	}
}

// stepRunner shows two steps, one failed, then answers.
type stepRunner struct{}

func (stepRunner) Run(ctx context.Context, t core.Turn) error {
	s, ok := t.Reporter.(core.Stepper)
	if !ok {
		return errors.New("the terminal does not show steps")
	}
	for _, st := range []core.Step{
		{ID: "c1", Title: "Read file (fs)", State: core.StepRunning},
		{ID: "c2", Title: "Write file (fs)", State: core.StepRunning},
		{ID: "c1", Title: "Read file (fs)", State: core.StepDone, Output: "read 42 bytes"},
		{ID: "c2", Title: "Write file (fs)", State: core.StepFailed, Output: "permission denied"},
	} {
		if err := s.Step(ctx, st); err != nil {
			return err
		}
	}
	return t.Reporter.Say(ctx, "Done.")
}

// TestStepsOneLineEach: each tool call is one line on Err once it ends.
func TestStepsOneLineEach(t *testing.T) {
	var out, errw strings.Builder
	th := core.Thread{Platform: "terminal", Workspace: "local", Channel: "cli", ID: "default"}
	if err := Run(context.Background(), Options{In: strings.NewReader("go\n"), Out: &out, Err: &errw, Thread: th, User: "ada", Runner: stepRunner{}}); err != nil {
		t.Fatal(err)
	}
	want := "  ✓ Read file (fs): read 42 bytes\n  ✗ Write file (fs): permission denied\n"
	if !strings.Contains(errw.String(), want) {
		t.Errorf("Err = %q, want the lines %q", errw.String(), want)
	}
}
