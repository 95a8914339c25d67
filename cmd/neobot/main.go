// Command neobot runs Neo, a tool-calling LLM agent, in Slack or in a
// terminal. See the README for settings and set-up.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	err := m.Run(ctx, os.Args[1:])
	stop()
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stderr, "neobot: %v\n", err)
		os.Exit(1)
	}
}

// Main is the program: one Run per process, then Close. Tests build it
// with their own streams and environment.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string

	closers []func() error
	scrub   *scrubber // the logs' scrubber, once setup has run
}

// Run parses args and runs the chosen command until it ends or ctx is done.
func (m *Main) Run(ctx context.Context, args []string) error {
	cmd := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "version":
		fmt.Fprintf(m.Stdout, "neobot %s\n", version)
		return nil
	case "help":
		if len(args) > 0 && args[0] == "config" {
			printSettings(m.Stdout, len(args) > 1 && args[1] == "--markdown")
			return nil
		}
		_, _, err := loadConfig("neobot", []string{"-h"}, m.Getenv, m.Stdout, nil)
		return err
	case "", "run":
		return m.runBot(ctx, args)
	case "chat":
		return m.runChat(ctx, args)
	case "check":
		return m.runCheck(ctx, args)
	case "memory":
		return m.runMemory(ctx, args)
	default:
		return fmt.Errorf("unknown command %q; run neobot help", cmd)
	}
}

// Close releases everything Run opened, in reverse order.
func (m *Main) Close() error {
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		errs = append(errs, m.closers[i]())
	}
	m.closers = nil
	return errors.Join(errs...)
}

func (m *Main) onClose(f func() error) { m.closers = append(m.closers, f) }
