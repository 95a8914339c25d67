package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/tools"
)

// runCheck is `neobot check`: validate the settings and the manifest,
// start every MCP server, and print the tool surface. It does not open the
// database, so it can run beside a live bot.
func (m *Main) runCheck(ctx context.Context, args []string) error {
	var live bool
	cfg, _, log, err := m.setup("neobot check", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&live, "live", false, "also call every service once: a one-token call to each model, Slack auth.test, Discord users/@me, the daemon")
	})
	if err != nil {
		return err
	}
	var problems []error
	if cfg.Model == "" {
		fmt.Fprintln(m.Stdout, "model: NEO_MODEL is not set; `neobot chat --dry-run` works, talking does not")
	} else if c, err := m.newLLM(cfg, cfg.mainEndpoint(), cfg.ActorDID, log, cfg.visionEdit()); err != nil {
		problems = append(problems, err)
	} else {
		fmt.Fprintf(m.Stdout, "model: %s via %s (%s), %s\n", c.Model(), c.Provider(), c.Endpoint(), describeWindow(c))
		fmt.Fprintf(m.Stdout, "pictures: %s\n", describeVision(c, cfg.ModelVision))
	}
	if cfg.CheapModel != "" {
		if c, err := m.newLLM(cfg, cfg.cheapEndpoint(), cfg.ActorDID, log); err != nil {
			problems = append(problems, fmt.Errorf("NEO_CHEAP_MODEL: %w", err))
		} else {
			fmt.Fprintf(m.Stdout, "cheap model: %s via %s (%s), context window %d tokens\n", c.Model(), c.Provider(), c.Endpoint(), c.ContextWindow())
		}
	}
	if cfg.SlackBotToken != "" {
		fmt.Fprintf(m.Stdout, "slack: %s mode, API %s\n", cfg.SlackMode, cfg.SlackAPIURL)
	}
	if cfg.SlackClientID != "" {
		fmt.Fprintf(m.Stdout, "slack: any workspace may add Neo at /slack/install on %s; Slack sends installers back to %s; events over HTTP, API %s\n",
			cfg.SlackListenAddr, cfg.SlackRedirectURL, cfg.SlackAPIURL)
	}
	if cfg.DiscordBotToken != "" {
		fmt.Fprintf(m.Stdout, "discord: gateway via %s\n", cfg.DiscordAPIURL)
	}
	if cfg.WebAddr != "" {
		users, err := web.ParseUsers(cfg.WebUsers)
		if err != nil {
			problems = append(problems, fmt.Errorf("NEO_WEB_USERS: %w", err))
		}
		fmt.Fprintf(m.Stdout, "web: API and chat page on http://%s, %d user(s) in NEO_WEB_USERS (neobot web token NAME adds one)\n", cfg.WebAddr, len(users))
	}
	if cfg.SlackBotToken == "" && !cfg.slackDistributed() && cfg.DiscordBotToken == "" && cfg.WebAddr == "" {
		fmt.Fprintln(m.Stdout, "platforms: neither SLACK_BOT_TOKEN nor DISCORD_BOT_TOKEN nor NEO_WEB_ADDR is set; neobot will talk in the terminal")
	}
	if cfg.DaemonURL == "" {
		fmt.Fprintln(m.Stdout, "daemon: NEO_DAEMON_URL is not set; spends run in neobot's own executor, with the manifest's spend tools (below)")
	} else {
		fmt.Fprintf(m.Stdout, "daemon: %s\n", cfg.DaemonURL)
	}

	manifest, err := loadManifest(cfg.Manifest)
	if err != nil {
		return errors.Join(append(problems, err)...)
	}
	skills, err := cfg.loadSkills(manifest)
	if err != nil {
		problems = append(problems, err)
	}
	surface, err := tools.Spawn(ctx, tools.Options{
		Manifest:  manifest,
		Skills:    skills,
		LookupEnv: m.lookupEnv,
		Logger:    log.With().Str("component", "tools").Logger(),
		// Declared as the bot declares it: a server may offer some tools
		// only to clients that take questions, and check must see the
		// tools the bot will.
		Questions: true,
	})
	if err != nil {
		return errors.Join(append(problems, fmt.Errorf("start tools: %w", err))...)
	}
	m.onClose(surface.Close)
	if err := cfg.spendAuthority(cfg.DaemonURL != "" || surface.HasSpendTools()); err != nil {
		problems = append(problems, fmt.Errorf("spend authority: %w", err))
	}
	fmt.Fprintf(m.Stdout, "manifest: %s (%s)\n", cfg.Manifest, manifest.DID)
	if err := surface.Describe(m.Stdout); err != nil {
		problems = append(problems, err)
	}
	if err := surface.DescribeSkills(m.Stdout); err != nil {
		problems = append(problems, err)
	}
	describeUndeclared(m.Stdout, cfg.Manifest, manifest)
	describeToolless(m.Stdout, manifest)
	if w := surface.Warnings(); len(w) > 0 {
		problems = append(problems, fmt.Errorf("%d tool server warning(s) above: fix the manifest or the server, then run neobot check again", len(w)))
	}
	if live {
		problems = append(problems, m.checkLive(ctx, cfg, log)...)
	}
	if err := errors.Join(problems...); err != nil {
		return err
	}
	return nil
}

// lookupEnv resolves a manifest's $env: references from the process
// environment (m.Getenv, so tests stay hermetic). Every value it hands to
// a tool server is a credential as far as the logs are concerned.
func (m *Main) lookupEnv(name string) (string, bool) {
	v := m.Getenv(name)
	if v != "" && m.scrub != nil {
		m.scrub.add(Secret(v))
	}
	return v, v != ""
}

// describeUndeclared lists each server that declares no side effects for
// some of its tools, with the manifest line that declares the server:
// those tools' class is unknown, so every call of one is asked first
// (docs/manifest.md), and one line beside the alias declares them.
func describeUndeclared(w io.Writer, path string, m *mcp.Manifest) {
	type server struct{ alias, at, tools string }
	var out []server
	for i, spec := range m.Servers {
		if tools := undeclaredTools(spec); len(tools) > 0 {
			out = append(out, server{spec.Alias, declaredAt(path, i, spec.Alias), strings.Join(tools, ", ")})
		}
	}
	if len(out) == 0 {
		return
	}
	fmt.Fprintf(w, "undeclared side effects: %d server(s); each call of these tools is asked first, and a name that spends stays spend:\n", len(out))
	for _, s := range out {
		fmt.Fprintf(w, "  %s, declared at %s: %s\n    declare them there with \"side_effects\": \"none\", \"read\", \"write\" or \"external\" (and tool_side_effects where a tool differs)\n", s.alias, s.at, s.tools)
	}
}

// describeToolless lists the servers declared with no tools ("tools":
// []): they serve prompts or resources only, so the model calls nothing
// of theirs, and a server listed here by mistake would say so.
func describeToolless(w io.Writer, m *mcp.Manifest) {
	var aliases []string
	for _, spec := range m.Servers {
		if len(spec.Tools) == 0 {
			aliases = append(aliases, spec.Alias)
		}
	}
	if len(aliases) > 0 {
		fmt.Fprintf(w, "servers with no tools (prompts and resources only): %s\n", strings.Join(aliases, ", "))
	}
}

// declaredAt names the manifest line that declares the server with alias,
// the i-th of the manifest: "<file>:<line>", or "<file>, servers[i]" when
// the line cannot be found (the built-in default manifest).
func declaredAt(path string, i int, alias string) string {
	data, err := os.ReadFile(path)
	if err == nil {
		re := regexp.MustCompile(`"alias"\s*:\s*"` + regexp.QuoteMeta(alias) + `"`)
		if j := slices.IndexFunc(strings.Split(string(data), "\n"), re.MatchString); j >= 0 {
			return fmt.Sprintf("%s:%d", path, j+1)
		}
	}
	return fmt.Sprintf("%s, servers[%d]", path, i)
}
