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
}

// Run reads one message per line from In and runs a turn for each, until In
// ends (a clean nil) or ctx ends (its error). Blank lines are skipped;
// "exit" or "quit" ends the conversation. A turn's approvals are asked on
// Err and answered by the next line of In.
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
	t := &term{opts: opts, lines: make(chan string), done: make(chan struct{})}
	go t.read()
	defer close(t.done)

	session := opts.Now().UnixNano()
	for n := 1; ; n++ {
		t.printErr("> ")
		line, ok, err := t.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			t.printErr("\n")
			return nil
		}
		text := strings.TrimSpace(line)
		switch strings.ToLower(text) {
		case "":
			continue
		case "exit", "quit":
			return nil
		}
		in := core.Inbound{
			Thread: opts.Thread, User: opts.User, UserName: opts.User, Text: text,
			EventID: fmt.Sprintf("terminal-%d-%d", session, n), DM: true, At: opts.Now(),
		}
		turn := core.Turn{Inbound: in, Reporter: t, Approver: t.approve}
		err = opts.Runner.Run(ctx, turn)
		switch {
		case err == nil, errors.Is(err, core.ErrAnswered):
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			opts.Logger.Error().Err(err).Str("thread", opts.Thread.Key()).Msg("terminal: turn failed")
			t.printErr("Sorry, I couldn't finish that; the details are in the log.\n")
		}
	}
}

// term is the REPL's Reporter and approver.
type term struct {
	opts  Options
	mu    sync.Mutex // serializes writes
	lines chan string
	done  chan struct{}
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

// next returns the next line; ok is false at the end of input.
func (t *term) next(ctx context.Context) (string, bool, error) {
	select {
	case line, ok := <-t.lines:
		return line, ok, nil
	case <-ctx.Done():
		return "", false, ctx.Err()
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
	options := req.Options
	if len(options) == 0 {
		options = []string{"yes", "no"}
	}
	t.printErr(fmt.Sprintf("approval needed — %s\n    options: %s\n    approve? [y/N] ", req.Question, strings.Join(options, " | ")))
	line, ok, err := t.next(ctx)
	if err != nil {
		t.printErr("\n")
		return core.GateAnswer{}, err
	}
	if !ok {
		t.printErr("\n")
		return core.GateAnswer{}, nil
	}
	answer := strings.TrimSpace(line)
	choice := ""
	for _, o := range options {
		if strings.EqualFold(o, answer) {
			choice = o
		}
	}
	if choice == "" && (strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes")) {
		for _, o := range options {
			if core.Approves(o) {
				choice = o
				break
			}
		}
	}
	if choice == "" || !core.Approves(choice) {
		deny := ""
		for _, o := range options {
			if !core.Approves(o) {
				deny = o
				break
			}
		}
		t.printErr("    denied\n")
		return core.GateAnswer{Approved: false, Answer: deny, By: t.opts.User}, nil
	}
	t.printErr("    approved\n")
	return core.GateAnswer{Approved: true, Answer: choice, By: t.opts.User}, nil
}
