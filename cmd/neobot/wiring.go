package main

import (
	"github.com/neobot/neobot/adapters/discord"
	"github.com/neobot/neobot/adapters/slack"
	"github.com/neobot/neobot/adapters/terminal"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/conversation"
	"github.com/neobot/neobot/core/delegate"
	"github.com/neobot/neobot/core/governance"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/tools"
	acct "github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/postgres"
)

// The composition root is where every consumer-side interface meets its
// implementation; these assertions keep the pairs honest at compile time.
var (
	_ agent.Model                = (*llm.Client)(nil)
	_ agent.StreamModel          = (*llm.Client)(nil)
	_ agent.StreamModel          = (*meteredModel)(nil)
	_ agent.Toolbox              = (*tools.Surface)(nil)
	_ agent.Transcript           = database(nil)
	_ agent.Memory               = (*memory.Cortex)(nil)
	_ agent.Budget               = (*acct.Meter)(nil)
	_ memory.Model               = (*llm.Client)(nil)
	_ memory.Store               = database(nil)
	_ llm.Postures               = database(nil)
	_ core.GateStore             = database(nil)
	_ delegate.Ledger            = database(nil)
	_ conversation.Runner        = (*agent.Agent)(nil)
	_ conversation.Journal       = database(nil)
	_ conversation.LazyCompleter = database(nil)
	_ conversation.Platform      = (*slack.Adapter)(nil)
	_ core.Preparer              = (*slack.Adapter)(nil)
	_ conversation.Tidier        = (*slack.Adapter)(nil)
	_ conversation.Platform      = (*slack.Workspaces)(nil)
	_ core.Preparer              = (*slack.Workspaces)(nil)
	_ conversation.Tidier        = (*slack.Workspaces)(nil)
	_ conversation.Redeliverer   = (*slack.Workspaces)(nil)
	_ conversation.Tidier        = (*discord.Adapter)(nil)
	_ conversation.Platform      = (*discord.Adapter)(nil)
	_ conversation.Platform      = (*web.Adapter)(nil)
	_ core.Preparer              = (*web.Adapter)(nil)
	_ web.StoppedKeeper          = (*webHistory)(nil)
	_ core.Preparer              = (*discord.Adapter)(nil)
	_ terminal.Runner            = (*agent.Agent)(nil)
)

// The adapters' shared intake takes the hub and the store; a person's
// page (Slack's Home tab, Discord's /neo) the tool surface and the ledger.
var (
	_ = slack.Options{Hub: (*conversation.Hub)(nil), Threads: database(nil), Home: slack.Home{Accounts: (*tools.Surface)(nil), Spends: database(nil)}}
	_ = discord.Options{Hub: (*conversation.Hub)(nil), Threads: database(nil), Home: discord.Home{Accounts: (*tools.Surface)(nil), Spends: database(nil)}}
)

// Both stores keep MCP servers' sealed OAuth grants.
var (
	_ mcp.TokenStore = (*store.DB)(nil)
	_ mcp.TokenStore = (*postgres.DB)(nil)
	_ logins         = (*tools.Surface)(nil)
)

// Both stores keep Slack installations, sealed, and every version of
// each place's settings.
var (
	_ slack.Installs   = (*store.DB)(nil)
	_ slack.Installs   = (*postgres.DB)(nil)
	_ governance.Store = (*store.DB)(nil)
	_ governance.Store = (*postgres.DB)(nil)
)
