// Command neobot runs Neo, a tool-calling LLM agent, in Slack, Discord, a
// web chat or a terminal, on a bbolt file or PostgreSQL, and holds the
// operator's commands (check, memory, spends, store, threads, usage, ...).
// See the README for settings and set-up.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/neobot/neobot/cmd/neobot/internal/direct"
)

// version and commit are set at build time with -ldflags
// "-X main.version=... -X main.commit=..." (the Dockerfile does).
var (
	version = "dev"
	commit  = ""
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	interrupts := make(chan struct{})
	go func() {
		for range sigint {
			select {
			case interrupts <- struct{}{}:
			case <-ctx.Done():
			}
		}
	}()
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Interrupt: interrupts}
	err := m.Run(ctx, os.Args[1:])
	stop()
	signal.Stop(sigint)
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
	// Interrupt delivers Ctrl-C. A conversation in the terminal stops its
	// running turn on it, or ends when idle; every other command shuts
	// down on the first one.
	Interrupt <-chan struct{}

	closers []func() error
	tel     *telemetry        // metrics, made by build
	scrub   *scrubber         // the logs' scrubber, once setup has run
	pool    *direct.Transport // outbound connections, made by outbound
}

// Run parses args and runs the chosen command until it ends or ctx is done.
func (m *Main) Run(ctx context.Context, args []string) error {
	cmd := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	if cmd == "" && len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		cmd = "version"
	}
	switch cmd {
	case "version":
		fmt.Fprintf(m.Stdout, "neobot %s\n", versionString())
		return nil
	case "help":
		switch {
		case len(args) > 0 && args[0] == "config":
			printSettings(m.Stdout, len(args) > 1 && args[1] == "--markdown")
			return nil
		case len(args) > 0 && (args[0] == "chat" || args[0] == "check" || args[0] == "memory" || args[0] == "usage" || args[0] == "spends" || args[0] == "feedback" || args[0] == "threads" || args[0] == "run" || args[0] == "web" || args[0] == "store" || args[0] == "mcp"):
			return m.Run(ctx, []string{args[0], "-h"})
		}
		if len(args) > 0 {
			return fmt.Errorf("help: no command %q; run neobot help", args[0])
		}
		_, _, err := loadConfig("neobot", []string{"-h"}, m.Getenv, m.Stdout, nil)
		return err
	case "", "run":
		return m.runBot(ctx, args)
	case "chat":
		return m.runChat(ctx, args)
	case "check":
		ctx, cancel := m.interruptible(ctx)
		defer cancel()
		return m.runCheck(ctx, args)
	case "memory":
		ctx, cancel := m.interruptible(ctx)
		defer cancel()
		return m.runMemory(ctx, args)
	case "usage":
		return m.runUsage(ctx, args)
	case "spends":
		return m.runSpends(ctx, args)
	case "feedback":
		return m.runFeedback(ctx, args)
	case "threads":
		return m.runThreads(ctx, args)
	case "web":
		return m.runWeb(ctx, args)
	case "store":
		return m.runStore(ctx, args)
	case "mcp":
		return m.runMCP(ctx, args)
	case "config":
		return m.runConfig(ctx, args)
	default:
		return fmt.Errorf("unknown command %q; run neobot help", cmd)
	}
}

// versionString is the version set at build time, or else what the Go
// toolchain recorded: the module version and the VCS revision.
func versionString() string {
	if version != "dev" {
		if commit != "" {
			return version + " (" + commit[:min(12, len(commit))] + ")"
		}
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	v := version
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		v = mv
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v
}

// interruptible returns a context that also ends on the first Ctrl-C.
func (m *Main) interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-m.Interrupt:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
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
