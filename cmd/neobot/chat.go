package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/adapters/terminal"
	"github.com/neobot/neobot/core"
)

// terminalThread is the conversation `neobot chat --thread NAME` continues.
func terminalThread(name string) (core.Thread, error) {
	t := core.Thread{Platform: "terminal", Workspace: "local", Channel: "cli", ID: name}
	if err := t.Validate(); err != nil {
		return core.Thread{}, fmt.Errorf("--thread %q: use a name without '/'", name)
	}
	return t, nil
}

// runChat is `neobot chat`: a conversation in this terminal, or with
// --dry-run the system block and tool schemas Neo would send.
func (m *Main) runChat(ctx context.Context, args []string) error {
	var name string
	var dry bool
	cfg, _, log, err := m.setup("neobot chat", args, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "thread", "default", "conversation to continue (stored in NEO_DB_PATH)")
		fs.BoolVar(&dry, "dry-run", false, "print the system block and tool schemas, call no model")
	})
	if err != nil {
		return err
	}
	return m.chat(ctx, cfg, log, name, dry)
}

func (m *Main) chat(ctx context.Context, cfg *Config, log zerolog.Logger, name string, dry bool) error {
	thread, err := terminalThread(name)
	if err != nil {
		return err
	}
	a, err := m.build(ctx, cfg, log, buildOptions{model: !dry})
	if err != nil {
		return err
	}
	if dry {
		system, tools, err := a.agent.Prompt(ctx, core.Inbound{Thread: thread, User: "you", DM: true})
		if err != nil {
			return fmt.Errorf("dry run: %w", err)
		}
		schemas, err := json.MarshalIndent(tools, "", "  ")
		if err != nil {
			return fmt.Errorf("dry run: %w", err)
		}
		fmt.Fprintf(m.Stdout, "=== system ===\n%s\n\n=== tools ===\n%s\n", system, schemas)
		return nil
	}
	return terminal.Run(ctx, terminal.Options{
		In: m.Stdin, Out: m.Stdout, Err: m.Stderr, Interrupt: m.Interrupt,
		Thread: thread, Runner: a.agent, Logger: log.With().Str("component", "terminal").Logger(),
	})
}
