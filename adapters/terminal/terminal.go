// Package terminal is the zero-setup way to talk to Neo: a REPL over a
// reader and two writers. Answers (Say) go to Out; progress (Status),
// notices and approval prompts go to Err, so Out holds only what Neo said.
package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/rs/zerolog"
)

// Runner runs one turn (*agent.Agent).
type Runner interface {
	Run(ctx context.Context, t core.Turn) error
}

// Options configures [Run].
type Options struct {
	In       io.Reader
	Out, Err io.Writer
	// Thread is the conversation; reusing one continues it.
	Thread core.Thread
	// User names the person at the terminal (default "you").
	User   string
	Runner Runner
	// Logger records turn failures (zero value: silent).
	Logger zerolog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Interrupt delivers Ctrl-C: it stops a running turn, and ends the
	// conversation when nothing runs (nil: no interrupts).
	Interrupt <-chan struct{}
}

// Run reads one message per line from In and runs a turn for each, until In
// ends (a clean nil) or ctx ends (its error). Blank lines are skipped;
// "exit" or "quit" ends the conversation. While a turn runs, "stop" (or
// "cancel") or an interrupt stops it, as in Slack; an interrupt while idle,
// or a second one while a turn stops, ends the conversation cleanly. A
// turn's approvals are asked on Err and answered by the next line of In;
// other lines typed meanwhile wait for their own turn.
//
// The line reader stops at the end of In. When ctx ends first, Run returns
// at once and the reader stops at In's next line or end.
func Run(ctx context.Context, opts Options) error {
	if opts.In == nil || opts.Out == nil || opts.Err == nil || opts.Runner == nil {
		return errors.New("terminal: In, Out, Err and Runner are required")
	}
	if opts.User == "" {
		opts.User = "you"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t := &term{opts: opts, lines: make(chan string), done: make(chan struct{}), asks: make(chan chan string)}
	go t.read()
	defer close(t.done)
	t.printErr(banner(opts.Thread))
	session := opts.Now().UnixNano()
	var queued []string
	for n := 1; ; n++ {
		var line string
		if len(queued) > 0 {
			line, queued = queued[0], queued[1:]
		} else {
			t.printErr("> ")
			select {
			case l, ok := <-t.lines:
				if !ok {
					t.printErr("\n")
					return nil
				}
				line = l
			case <-opts.Interrupt:
				t.printErr("\n")
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		text := strings.TrimSpace(line)
		switch strings.ToLower(text) {
		case "":
			continue
		case "exit", "quit":
			return nil
		}
		if core.IsStop(text) {
			t.printErr("  note: nothing is running.\n")
			continue
		}
		in := core.Inbound{
			Thread: opts.Thread, User: opts.User, UserName: opts.User, Text: text,
			EventID: fmt.Sprintf("terminal-%d-%d", session, n), DM: true, At: opts.Now(),
		}
		more, leave, err := t.turn(ctx, in)
		queued = append(queued, more...)
		if err != nil || leave {
			return err
		}
	}
}

// banner is the one line that opens a conversation: which thread it is
// and how to leave.
func banner(th core.Thread) string {
	name := th.ID
	if name == "" {
		name = "default"
	}
	return fmt.Sprintf("Neo — conversation %q (continued when it has history). Type exit or press Ctrl-D to leave; stop or Ctrl-C stops an answer.\n", name)
}

// turn runs one message's turn while it watches the input: a "stop" line
// or an interrupt stops the turn, a second interrupt leaves once it has
// stopped, an approval gets the next line, and any other line waits in
// more for its own turn.
func (t *term) turn(ctx context.Context, in core.Inbound) (more []string, leave bool, err error) {
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		done <- t.opts.Runner.Run(tctx, core.Turn{Inbound: in, Reporter: t, Approver: t.approve})
	}()
	lines := t.lines
	stopping := false
	var asking chan string // an approval waiting for a line
	for {
		select {
		case err := <-done:
			switch {
			case err == nil, errors.Is(err, core.ErrAnswered):
			case errors.Is(context.Cause(tctx), core.ErrStopped):
				t.printErr("  note: stopped.\n")
			case ctx.Err() != nil:
				return more, true, ctx.Err()
			default:
				t.opts.Logger.Error().Err(err).Str("thread", t.opts.Thread.Key()).Msg("terminal: turn failed")
				t.printErr("Sorry, I couldn't finish that; the details are in the log.\n")
			}
			return more, leave, nil
		case <-t.opts.Interrupt:
			if stopping {
				leave = true
				continue
			}
			stopping = true
			cancel(core.ErrStopped)
		case ask := <-t.asks:
			switch {
			case len(more) > 0: // typed before the question showed
				ask <- more[0]
				more = more[1:]
			case lines == nil: // no more input: the approval is denied
				ask <- ""
			default:
				asking = ask
			}
		case line, ok := <-lines:
			if !ok {
				lines = nil // the end of input: lines typed before it still run
				if asking != nil {
					asking <- ""
					asking = nil
				}
				continue
			}
			switch {
			case core.IsStop(line):
				stopping = true
				cancel(core.ErrStopped)
			case asking != nil:
				asking <- line
				asking = nil
			default:
				more = append(more, line)
			}
		}
	}
}

// term is the REPL's Reporter and approver.
type term struct {
	opts  Options
	mu    sync.Mutex // serializes writes
	lines chan string
	done  chan struct{}
	asks  chan chan string // an approval asking the running turn for the next line
}

// read feeds In's lines to whoever asks next: the REPL or an approver.
func (t *term) read() {
	defer close(t.lines)
	sc := bufio.NewScanner(t.opts.In)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		select {
		case t.lines <- sc.Text():
		case <-t.done:
			return
		}
	}
}

// Say prints an answer to Out.
func (t *term) Say(ctx context.Context, text string) error {
	return t.write(t.opts.Out, strings.TrimRight(text, "\n")+"\n")
}

// Status prints progress to Err.
func (t *term) Status(ctx context.Context, text string) error {
	return t.write(t.opts.Err, "  … "+text+"\n")
}

var _ core.Stepper = (*term)(nil)

// Step prints one line per tool call to Err, once it has ended: a
// check mark or a cross, the tool in words and its short output.
func (t *term) Step(ctx context.Context, s core.Step) error {
	mark := "✓"
	switch s.State {
	case core.StepRunning:
		return nil
	case core.StepFailed:
		mark = "✗"
	}
	line := "  " + mark + " " + s.Title
	if s.Output != "" {
		line += ": " + s.Output
	}
	return t.write(t.opts.Err, line+"\n")
}

// Notice prints a note to Err.
func (t *term) Notice(ctx context.Context, text string) error {
	return t.write(t.opts.Err, "  note: "+text+"\n")
}

func (t *term) printErr(s string) { _ = t.write(t.opts.Err, s) }

func (t *term) write(w io.Writer, s string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("terminal: write: %w", err)
	}
	return nil
}

// approve asks on Err and reads the answer from the next input line: "y"
// or "yes" approves with the first approving option, an option typed in
// full chooses it, anything else denies. The end of input or of ctx
// denies.
func (t *term) approve(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
	if req.Form != nil {
		// A server's question needs a form the terminal does not show:
		// it is cancelled, and the server hears so.
		if req.Note != "" {
			return core.GateAnswer{}, core.ErrNotFound // it never showed one
		}
		t.printErr(fmt.Sprintf("a tool's server asked a question the terminal cannot show; it was cancelled — %s\n", req.Question))
		return core.GateAnswer{}, nil
	}
	options := req.Options
	if len(options) == 0 {
		options = []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}
	}
	t.printErr(fmt.Sprintf("approval needed — %s\n    options: %s\n    approve? [y/N] ", req.Question, strings.Join(core.Labels(options), " | ")))
	reply := make(chan string, 1)
	var line string
	select {
	case t.asks <- reply:
		select {
		case line = <-reply:
		case <-ctx.Done():
			t.printErr("\n")
			return core.GateAnswer{}, ctx.Err()
		}
	case <-ctx.Done():
		t.printErr("\n")
		return core.GateAnswer{}, ctx.Err()
	}
	answer := strings.TrimSpace(line)
	choice, chosen := core.Option{}, false
	for _, o := range options {
		if strings.EqualFold(o.Label, answer) {
			choice, chosen = o, true
		}
	}
	if !chosen && (strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes")) {
		for _, o := range options {
			if o.Approves {
				choice, chosen = o, true
				break
			}
		}
	}
	if !chosen || !choice.Approves {
		deny := ""
		for _, o := range options {
			if !o.Approves {
				deny = o.Label
				break
			}
		}
		t.printErr("    denied\n")
		return core.GateAnswer{Approved: false, Answer: deny, By: t.opts.User}, nil
	}
	t.printErr("    approved\n")
	return core.GateAnswer{Approved: true, Answer: choice.Label, By: t.opts.User}, nil
}

// StreamAnswer prints an answer to Out as it is written.
func (t *term) StreamAnswer(ctx context.Context) (core.AnswerStream, error) {
	return &termStream{t: t}, nil
}

// termStream prints pieces as they come. A terminal cannot take words
// back: Abort ends the line, and Close prints what the final text adds.
type termStream struct {
	t       *term
	written strings.Builder
}

func (s *termStream) Write(ctx context.Context, text string) error {
	s.written.WriteString(text)
	return s.t.write(s.t.opts.Out, text)
}

func (s *termStream) Close(ctx context.Context, final string) error {
	rest, ok := strings.CutPrefix(strings.TrimRight(final, "\n"), s.written.String())
	if !ok {
		rest = "" // the words shown stand; the stored answer is the final text
	}
	return s.t.write(s.t.opts.Out, rest+"\n")
}

func (s *termStream) Abort(ctx context.Context) error {
	if s.written.Len() == 0 {
		return nil
	}
	return s.t.write(s.t.opts.Out, "\n")
}
