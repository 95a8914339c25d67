package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/mcp/oauth"
	"github.com/neobot/neobot/core/skill"
	acct "github.com/neobot/neobot/core/usage"
)

// Config is every setting neobot reads. Environment first, flags override;
// secrets come only from the environment.
type Config struct {
	Model      string
	CheapModel string
	// Models are the other main models a place's stored settings may
	// choose (NEO_MODELS).
	Models      []string
	LLMBaseURL  string
	LLMProvider string
	LLMAPIKey   Secret
	// The cheap model's own endpoint; see Config.cheapEndpoint.
	CheapLLMBaseURL  string
	CheapLLMProvider string
	CheapLLMAPIKey   Secret
	FireworksKey     Secret
	TogetherKey      Secret
	OpenCodeKey      Secret
	OpenAIKey        Secret
	GatewayURL       string
	GatewayToken     Secret
	ActorDID         string
	ContextWindow    int
	ModelVision      string
	ModelPosture     string
	CompactSoft      float64
	CompactHard      float64
	StepBudget       int
	ToolTimeout      time.Duration
	QuestionTimeout  time.Duration
	ToolResultCap    int
	StoredCap        int

	DBPath        string
	DatabaseURL   Secret
	RetentionDays int
	Manifest      string
	// Skills come only from the settings file's "skills" object.
	Skills map[string]skill.Spec

	DailyTokenBudget int
	ModelPrices      string

	DaemonURL    string
	DaemonToken  Secret
	CallerWallet string
	DaemonPoll   time.Duration
	DaemonWait   time.Duration
	SelfApprove  bool

	MaxConcurrentTurns int
	MaxTurnsPerUser    int
	MaxQueuedPerThread int
	ShutdownGrace      time.Duration

	UserMessagesPerMinute int
	UserBytesPerDay       int
	WebStreamsPerUser     int
	WebFeedBytes          int
	WebFeedConvBytes      int

	SlackBotToken      Secret
	SlackAppToken      Secret
	SlackSigningSecret Secret
	SlackAPIURL        string
	SlackMode          string
	SlackListenAddr    string
	SlackApprovers     []string
	SlackSpendUsers    []string
	SlackSpendChannels []string
	SlackAllowChannels []string
	SlackAllowUsers    []string
	SlackMaxFileBytes  int
	// SlackClientID and SlackClientSecret are the Slack app's credentials:
	// Sign in with Slack (who opens an MCP connect link) and "Add to Slack"
	// both use them. SlackRedirectURL turns distribution on: any workspace
	// installs Neo (adapters/slack Workspaces); SlackAuthorizeURL is
	// Slack's authorize page.
	SlackClientID     string
	SlackClientSecret Secret
	SlackRedirectURL  string
	SlackAuthorizeURL string

	CPUProfile  string
	HeapProfile string

	WebAddr        string
	WebUsers       []string
	WebApprovers   []string
	WebAdmins      []string
	WebSpendUsers  []string
	WebCORSOrigins []string

	DiscordBotToken      Secret
	DiscordAPIURL        string
	DiscordApprovers     []string
	DiscordSpendUsers    []string
	DiscordSpendRoles    []string
	DiscordSpendChannels []string
	DiscordAllowChannels []string
	DiscordAllowUsers    []string
	DiscordMaxFileBytes  int
	// Discord's OAuth2 (identify), which proves who opens an MCP connect
	// link.
	DiscordClientID     string
	DiscordClientSecret Secret

	ConfigFile  string
	HealthAddr  string
	AdminToken  Secret
	AdminURL    string
	AdminRemote bool
	// SecretKey seals MCP servers' OAuth grants in the store; PublicURL is
	// where browsers reach the ops listener (the OAuth callback).
	SecretKey Secret
	PublicURL string
	// ClientDocURL is where neobot's OAuth client ID metadata document is
	// hosted, when not at <PublicURL>/mcp/oauth/client.json.
	ClientDocURL string
	LogLevel     string
	LogFormat    string
}

// setting describes one configuration variable: where it is read, its
// default, and how it lands in Config. The table is the single source for
// parsing, `neobot help config`, and the README's table (a test keeps them
// in step).
type setting struct {
	env    string
	flag   string // "" for secrets: environment only
	def    string
	usage  string
	secret bool
	set    setter
}

// setter parses a setting's value into Config; kind names what it takes
// (bool, int, duration, list, string), as its flag's usage shows it.
type setter struct {
	kind  string
	apply func(c *Config, v string) error
}

func str(p func(*Config) *string) setter {
	return setter{"string", func(c *Config, v string) error { *p(c) = strings.TrimSpace(v); return nil }}
}

func secret(p func(*Config) *Secret) setter {
	return setter{"string", func(c *Config, v string) error { *p(c) = Secret(strings.TrimSpace(v)); return nil }}
}

func list(p func(*Config) *[]string) setter {
	return setter{"list", func(c *Config, v string) error {
		var out []string
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			out = append(out, f)
		}
		*p(c) = out
		return nil
	}}
}

func boolean(p func(*Config) *bool) setter {
	return setter{"bool", func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		*p(c) = b
		return nil
	}}
}

func count(p func(*Config) *int) setter {
	return setter{"int", func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return fmt.Errorf("want a whole number >= 0, got %q", v)
		}
		*p(c) = n
		return nil
	}}
}

func fraction(p func(*Config) *float64) setter {
	return setter{"fraction", func(c *Config, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f <= 0 || f >= 1 {
			return fmt.Errorf("want a fraction of the window between 0 and 1, such as 0.80, got %q", v)
		}
		*p(c) = f
		return nil
	}}
}

func duration(p func(*Config) *time.Duration) setter {
	return setter{"duration", func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive duration such as 1.5s or 500ms, got %q", v)
		}
		*p(c) = d
		return nil
	}}
}

// settingFlag is a setting's flag: its value is kept as written, parsed
// with the environment's, and its kind shows in the usage. A bool flag
// may be given alone (--self-approve), as Go's own are.
type settingFlag struct {
	kind  string
	value string
}

func (f *settingFlag) String() string     { return f.value }
func (f *settingFlag) Set(v string) error { f.value = v; return nil }
func (f *settingFlag) IsBoolFlag() bool   { return f.kind == "bool" }

// printDefaults is flag's PrintDefaults, showing each setting's kind
// where the flag package would say "value".
func printDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if sf, ok := f.Value.(*settingFlag); ok {
			kind = sf.kind
			if kind == "bool" {
				kind = ""
			}
		}
		fmt.Fprintf(w, "  -%s", f.Name)
		if kind != "" {
			fmt.Fprintf(w, " %s", kind)
		}
		fmt.Fprintf(w, "\n    \t%s\n", strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}

func settings() []setting {
	return []setting{
		{env: "NEO_MODEL", flag: "model", usage: "main model, e.g. accounts/fireworks/models/qwen3-235b-a22b, gpt-4.1, or a local model name with NEO_LLM_BASE_URL (required to talk)", set: str(func(c *Config) *string { return &c.Model })},
		{env: "NEO_MODELS", flag: "models", usage: "other main models a place may choose with neobot config set PLACE model=NAME (comma-separated), served by NEO_MODEL's endpoint and key; a name not here or NEO_MODEL is refused (docs/governance.md)", set: list(func(c *Config) *[]string { return &c.Models })},
		{env: "NEO_CHEAP_MODEL", flag: "cheap-model", usage: "model for compaction, validation and memory write-back; NEO_MODEL does the work when it is unset or fails", set: str(func(c *Config) *string { return &c.CheapModel })},
		{env: "NEO_LLM_BASE_URL", flag: "llm-base-url", usage: "any OpenAI-compatible base URL including /v1 (Ollama, vLLM, LM Studio, a gateway)", set: str(func(c *Config) *string { return &c.LLMBaseURL })},
		{env: "NEO_LLM_PROVIDER", flag: "llm-provider", usage: "override provider detection: fireworks, together, opencode, openai, openai-compatible", set: str(func(c *Config) *string { return &c.LLMProvider })},
		{env: "NEO_LLM_API_KEY", secret: true, usage: "API key for NEO_LLM_BASE_URL, when it needs one", set: secret(func(c *Config) *Secret { return &c.LLMAPIKey })},
		{env: "NEO_CHEAP_LLM_BASE_URL", flag: "cheap-llm-base-url", usage: "OpenAI-compatible base URL for NEO_CHEAP_MODEL alone (e.g. a local server while the main model runs at a provider); unset, the cheap model shares NEO_LLM_BASE_URL, NEO_LLM_PROVIDER and NEO_LLM_API_KEY", set: str(func(c *Config) *string { return &c.CheapLLMBaseURL })},
		{env: "NEO_CHEAP_LLM_PROVIDER", flag: "cheap-llm-provider", usage: "provider of NEO_CHEAP_MODEL, as NEO_LLM_PROVIDER; defaults to NEO_LLM_PROVIDER unless NEO_CHEAP_LLM_BASE_URL is set", set: str(func(c *Config) *string { return &c.CheapLLMProvider })},
		{env: "NEO_CHEAP_LLM_API_KEY", secret: true, usage: "API key for NEO_CHEAP_MODEL; defaults to NEO_LLM_API_KEY unless NEO_CHEAP_LLM_BASE_URL is set (the main key is never sent to another endpoint)", set: secret(func(c *Config) *Secret { return &c.CheapLLMAPIKey })},
		{env: "FIREWORKS_API_KEY", secret: true, usage: "Fireworks API key (models accounts/fireworks/...)", set: secret(func(c *Config) *Secret { return &c.FireworksKey })},
		{env: "TOGETHER_API_KEY", secret: true, usage: "Together API key (models Org/Model)", set: secret(func(c *Config) *Secret { return &c.TogetherKey })},
		{env: "OPENCODE_API_KEY", secret: true, usage: "OpenCode API key", set: secret(func(c *Config) *Secret { return &c.OpenCodeKey })},
		{env: "OPENAI_API_KEY", secret: true, usage: "OpenAI API key (models gpt-*, o*)", set: secret(func(c *Config) *Secret { return &c.OpenAIKey })},
		{env: "MATRIX_GATEWAY_URL", flag: "gateway-url", usage: "metering gateway; model calls go to <url>/v1/chat/completions", set: str(func(c *Config) *string { return &c.GatewayURL })},
		{env: "MATRIX_GATEWAY_TOKEN", secret: true, usage: "bearer token for MATRIX_GATEWAY_URL", set: secret(func(c *Config) *Secret { return &c.GatewayToken })},
		{env: "NEO_ACTOR_DID", flag: "actor-did", usage: "Neo's DID, pinned in the system block and sent to the gateway; defaults to the manifest's", set: str(func(c *Config) *string { return &c.ActorDID })},
		{env: "NEO_MODEL_OPENS_IN_REASONING", flag: "model-opens-in-reasoning", def: "auto", usage: "whether NEO_MODEL's chat template opens <think> in the prompt, so answers start inside reasoning: yes holds streamed text back until </think>, no streams at once; auto learns it from the first answer (held back only until its first words) and keeps it in the store across restarts", set: str(func(c *Config) *string { return &c.ModelPosture })},
		{env: "NEO_CONTEXT_WINDOW", flag: "context-window", def: "0", usage: "context window in tokens; 0 uses the model registry, or guesses 128000 for a model it does not know (set it for a local model; neobot check says which)", set: count(func(c *Config) *int { return &c.ContextWindow })},
		{env: "NEO_MODEL_VISION", flag: "model-vision", def: "auto", usage: "whether NEO_MODEL sees images: auto (the model registry knows; a model it does not know does not), yes or no. Pictures people attach go to a model that sees them; others are told the picture was not shown, and so is the user", set: str(func(c *Config) *string { return &c.ModelVision })},
		{env: "NEO_COMPACT_SOFT", flag: "compact-soft", def: "0.80", usage: "share of the context window at which a conversation is compacted at the next clean boundary; below NEO_COMPACT_HARD", set: fraction(func(c *Config) *float64 { return &c.CompactSoft })},
		{env: "NEO_COMPACT_HARD", flag: "compact-hard", def: "0.92", usage: "share of the context window at which a conversation is compacted before the next model call, wherever a clean cut exists; below 1", set: fraction(func(c *Config) *float64 { return &c.CompactHard })},
		{env: "NEO_STEP_BUDGET", flag: "step-budget", def: "24", usage: "most model calls in one turn", set: count(func(c *Config) *int { return &c.StepBudget })},
		{env: "NEO_TOOL_RESULT_CAP", flag: "tool-result-cap", def: "16384", usage: "bytes of one tool result shown to the model (the transcript keeps up to NEO_STORED_RESULT_CAP)", set: count(func(c *Config) *int { return &c.ToolResultCap })},
		{env: "NEO_STORED_RESULT_CAP", flag: "stored-result-cap", def: "262144", usage: "bytes of one tool result kept in the transcript; the rest is dropped, so one tool cannot fill the disk", set: count(func(c *Config) *int { return &c.StoredCap })},
		{env: "NEO_QUESTION_TIMEOUT", flag: "question-timeout", def: "10m", usage: "how long a question a tool's server asks (MCP elicitation) waits for the answer of the person whose turn it is; then it is cancelled. The tool's own timeout is paused meanwhile", set: duration(func(c *Config) *time.Duration { return &c.QuestionTimeout })},
		{env: "NEO_TOOL_TIMEOUT", flag: "tool-timeout", def: "60s", usage: "longest one MCP tool call may take; past it the model is told the call timed out", set: duration(func(c *Config) *time.Duration { return &c.ToolTimeout })},
		{env: "NEO_DB_PATH", flag: "db", def: "./neobot.db", usage: "bbolt file holding transcripts, gates and memory (unused with NEO_DATABASE_URL)", set: str(func(c *Config) *string { return &c.DBPath })},
		{env: "NEO_DATABASE_URL", secret: true, usage: "PostgreSQL instead of the bbolt file, for several instances: postgres://user:password@host:5432/dbname", set: secret(func(c *Config) *Secret { return &c.DatabaseURL })},
		{env: "NEO_RETENTION_DAYS", flag: "retention-days", def: "90", usage: "drop threads idle this many days, with their transcripts; 0 keeps them forever", set: count(func(c *Config) *int { return &c.RetentionDays })},
		{env: "NEO_MANIFEST", flag: "manifest", def: "manifests/default.json", usage: "agent manifest: the MCP servers and tools Neo may use (the default is built in when the file is absent)", set: str(func(c *Config) *string { return &c.Manifest })},
		{env: "NEO_DAEMON_URL", flag: "daemon-url", usage: "execution daemon for core_execute; unset, neobot's own executor runs the manifest's spend tools (each call approved in the thread), and with none core_execute is not offered", set: str(func(c *Config) *string { return &c.DaemonURL })},
		{env: "NEO_DAEMON_TOKEN", secret: true, usage: "bearer token for NEO_DAEMON_URL", set: secret(func(c *Config) *Secret { return &c.DaemonToken })},
		{env: "NEO_CALLER_WALLET", flag: "caller-wallet", usage: "wallet address the daemon charges for delegated tasks", set: str(func(c *Config) *string { return &c.CallerWallet })},
		{env: "NEO_SELF_APPROVE", flag: "self-approve", def: "false", usage: "let the person who asked for a spend approve it themselves; off, only the *_APPROVERS can (the terminal always asks its one operator)", set: boolean(func(c *Config) *bool { return &c.SelfApprove })},
		{env: "NEO_DAEMON_POLL", flag: "daemon-poll", def: "1.5s", usage: "how often a delegated task's status and gates are polled", set: duration(func(c *Config) *time.Duration { return &c.DaemonPoll })},
		{env: "NEO_DAEMON_MAX_WAIT", flag: "daemon-max-wait", def: "30m", usage: "longest a turn follows one delegated task (its approvals included); past it Neo says the task may still finish at the daemon", set: duration(func(c *Config) *time.Duration { return &c.DaemonWait })},
		{env: "NEO_MAX_CONCURRENT_TURNS", flag: "max-concurrent-turns", def: "64", usage: "turns running at once across all threads (a turn waiting on an approval does not count)", set: count(func(c *Config) *int { return &c.MaxConcurrentTurns })},
		{env: "NEO_MAX_TURNS_PER_USER", flag: "max-turns-per-user", def: "0", usage: "turns one person's messages run at once; 0 means a quarter of NEO_MAX_CONCURRENT_TURNS (at least 1)", set: count(func(c *Config) *int { return &c.MaxTurnsPerUser })},
		{env: "NEO_DAILY_TOKEN_BUDGET", flag: "daily-token-budget", def: "0", usage: "most model tokens one workspace may use per UTC day; past it Neo declines politely until midnight UTC; 0 is no budget", set: count(func(c *Config) *int { return &c.DailyTokenBudget })},
		{env: "NEO_MODEL_PRICES", flag: "model-prices", usage: "dollars per million prompt/completion tokens, per model, for neobot usage: gpt-4.1=2/8,gpt-4.1-mini=0.4/1.6", set: str(func(c *Config) *string { return &c.ModelPrices })},
		{env: "NEO_MAX_QUEUED_PER_THREAD", flag: "max-queued-per-thread", def: "20", usage: "messages that may wait in one thread; past it a message is set aside and its author told", set: count(func(c *Config) *int { return &c.MaxQueuedPerThread })},
		{env: "NEO_USER_MESSAGES_PER_MINUTE", flag: "user-messages-per-minute", def: "20", usage: "messages one person may send a minute, in Slack, Discord and the web alike; past it Neo asks them once to slow down and takes nothing more until they may (the web answers 429 with Retry-After); 0 is no limit", set: count(func(c *Config) *int { return &c.UserMessagesPerMinute })},
		{env: "NEO_USER_BYTES_PER_DAY", flag: "user-bytes-per-day", def: "4194304", usage: "bytes of message text one person may send a UTC day; past it Neo declines until midnight UTC; 0 is no limit", set: count(func(c *Config) *int { return &c.UserBytesPerDay })},
		{env: "NEO_SHUTDOWN_GRACE", flag: "shutdown-grace", def: "10s", usage: "on SIGTERM, how long running turns get to finish before they are stopped (they resume after the restart); keep it under the platform's kill timeout", set: duration(func(c *Config) *time.Duration { return &c.ShutdownGrace })},
		{env: "SLACK_BOT_TOKEN", secret: true, usage: "Slack bot token (xoxb-...); set to run in Slack", set: secret(func(c *Config) *Secret { return &c.SlackBotToken })},
		{env: "SLACK_APP_TOKEN", secret: true, usage: "Slack app-level token (xapp-...) for Socket Mode", set: secret(func(c *Config) *Secret { return &c.SlackAppToken })},
		{env: "SLACK_SIGNING_SECRET", secret: true, usage: "Slack signing secret, for SLACK_MODE=http", set: secret(func(c *Config) *Secret { return &c.SlackSigningSecret })},
		{env: "SLACK_API_URL", flag: "slack-api-url", def: "https://slack.com/api/", usage: "Slack Web API base URL (GovSlack, a proxy, tests)", set: str(func(c *Config) *string { return &c.SlackAPIURL })},
		{env: "SLACK_MODE", flag: "slack-mode", def: "socket", usage: "socket (Socket Mode) or http (Events API)", set: str(func(c *Config) *string { return &c.SlackMode })},
		{env: "SLACK_LISTEN_ADDR", flag: "slack-listen", def: ":3000", usage: "address for SLACK_MODE=http (events at /slack/events, buttons at /slack/interactive)", set: str(func(c *Config) *string { return &c.SlackListenAddr })},
		{env: "SLACK_APPROVERS", flag: "slack-approvers", usage: "Slack user IDs who may approve spends (comma-separated); required when Neo can spend (NEO_DAEMON_URL, or spend tools in the manifest) unless NEO_SELF_APPROVE", set: list(func(c *Config) *[]string { return &c.SlackApprovers })},
		{env: "SLACK_SPEND_USERS", flag: "slack-spend-users", usage: "Slack user IDs who may ask Neo for spends (comma-separated); when Neo can spend, this or SLACK_SPEND_CHANNELS is required", set: list(func(c *Config) *[]string { return &c.SlackSpendUsers })},
		{env: "SLACK_SPEND_CHANNELS", flag: "slack-spend-channels", usage: "channel IDs where spends may be asked for (comma-separated); with SLACK_SPEND_USERS, both must match", set: list(func(c *Config) *[]string { return &c.SlackSpendChannels })},
		{env: "SLACK_ALLOW_CHANNELS", flag: "slack-allow-channels", usage: "only answer in these channel IDs (comma-separated; empty = all)", set: list(func(c *Config) *[]string { return &c.SlackAllowChannels })},
		{env: "SLACK_ALLOW_USERS", flag: "slack-allow-users", usage: "only answer these user IDs (comma-separated; empty = all)", set: list(func(c *Config) *[]string { return &c.SlackAllowUsers })},
		{env: "SLACK_CLIENT_ID", flag: "slack-client-id", usage: "the Slack app's Client ID (Basic Information > App Credentials), with SLACK_CLIENT_SECRET: Sign in with Slack, which proves who opens a link to connect their own account to a per_user MCP server (add <NEO_PUBLIC_URL>/mcp/signin as a redirect URL; without it no such link is made for Slack users), and, with SLACK_REDIRECT_URL, \"Add to Slack\"", set: str(func(c *Config) *string { return &c.SlackClientID })},
		{env: "SLACK_CLIENT_SECRET", secret: true, usage: "the Slack app's Client Secret (with SLACK_CLIENT_ID): it exchanges a sign-in's or an install's code", set: secret(func(c *Config) *Secret { return &c.SlackClientSecret })},
		{env: "SLACK_REDIRECT_URL", flag: "slack-redirect-url", usage: "public https address of the install callback, such as https://neo.example.com/slack/oauth/callback (the same URL goes under OAuth & Permissions > Redirect URLs); set, with SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_SIGNING_SECRET and NEO_SECRET_KEY and without SLACK_BOT_TOKEN, to let any workspace add Neo from /slack/install on SLACK_LISTEN_ADDR (events over HTTP; docs/slack.md)", set: str(func(c *Config) *string { return &c.SlackRedirectURL })},
		{env: "SLACK_AUTHORIZE_URL", flag: "slack-authorize-url", def: "https://slack.com/oauth/v2/authorize", usage: "Slack's authorize page the Add to Slack button opens (GovSlack, tests)", set: str(func(c *Config) *string { return &c.SlackAuthorizeURL })},
		{env: "SLACK_MAX_FILE_BYTES", flag: "slack-max-file-bytes", def: "262144", usage: "largest text attachment offered to Neo", set: count(func(c *Config) *int { return &c.SlackMaxFileBytes })},
		{env: "DISCORD_BOT_TOKEN", secret: true, usage: "Discord bot token (Developer Portal > Bot); set to run in Discord (with or without Slack)", set: secret(func(c *Config) *Secret { return &c.DiscordBotToken })},
		{env: "DISCORD_API_URL", flag: "discord-api-url", def: "https://discord.com", usage: "Discord base URL for REST and gateway discovery (a proxy, tests)", set: str(func(c *Config) *string { return &c.DiscordAPIURL })},
		{env: "DISCORD_APPROVERS", flag: "discord-approvers", usage: "Discord user IDs, and role IDs written role:ID, who may approve spends (comma-separated); required when Neo can spend (NEO_DAEMON_URL, or spend tools in the manifest) unless NEO_SELF_APPROVE", set: list(func(c *Config) *[]string { return &c.DiscordApprovers })},
		{env: "DISCORD_SPEND_USERS", flag: "discord-spend-users", usage: "Discord user IDs who may ask Neo for spends (comma-separated); when Neo can spend, this, DISCORD_SPEND_ROLES or DISCORD_SPEND_CHANNELS is required", set: list(func(c *Config) *[]string { return &c.DiscordSpendUsers })},
		{env: "DISCORD_SPEND_ROLES", flag: "discord-spend-roles", usage: "Discord role IDs whose members may ask Neo for spends (comma-separated)", set: list(func(c *Config) *[]string { return &c.DiscordSpendRoles })},
		{env: "DISCORD_SPEND_CHANNELS", flag: "discord-spend-channels", usage: "Discord channel or thread IDs where spends may be asked for, threads of a listed channel included (comma-separated); with users or roles, both must match", set: list(func(c *Config) *[]string { return &c.DiscordSpendChannels })},
		{env: "DISCORD_ALLOW_CHANNELS", flag: "discord-allow-channels", usage: "only answer in these channel IDs, threads included (comma-separated; empty = all)", set: list(func(c *Config) *[]string { return &c.DiscordAllowChannels })},
		{env: "DISCORD_ALLOW_USERS", flag: "discord-allow-users", usage: "only answer these Discord user IDs (comma-separated; empty = all)", set: list(func(c *Config) *[]string { return &c.DiscordAllowUsers })},
		{env: "DISCORD_MAX_FILE_BYTES", flag: "discord-max-file-bytes", def: "262144", usage: "largest text attachment offered to Neo from Discord", set: count(func(c *Config) *int { return &c.DiscordMaxFileBytes })},
		{env: "DISCORD_CLIENT_ID", flag: "discord-client-id", usage: "the Discord application's client ID (OAuth2 page), for its identify sign-in: a Discord user's link to connect their own account to a per_user MCP server first proves who opens it; without it and DISCORD_CLIENT_SECRET no such link is made for Discord users. Add <NEO_PUBLIC_URL>/mcp/signin as a redirect. With DISCORD_BOT_TOKEN and NEO_WEB_ADDR, also Sign in with Discord on the admin page for the servers' managers (add <web page>/admin/signin/discord/callback as a redirect)", set: str(func(c *Config) *string { return &c.DiscordClientID })},
		{env: "DISCORD_CLIENT_SECRET", secret: true, usage: "the Discord application's client secret, with DISCORD_CLIENT_ID", set: secret(func(c *Config) *Secret { return &c.DiscordClientSecret })},
		{env: "NEO_CPU_PROFILE", flag: "cpu-profile", usage: "write a Go CPU profile of the whole run to this file, for go tool pprof (development)", set: str(func(c *Config) *string { return &c.CPUProfile })},
		{env: "NEO_HEAP_PROFILE", flag: "heap-profile", usage: "write a Go heap profile to this file when the bot starts shutting down, for go tool pprof (development)", set: str(func(c *Config) *string { return &c.HeapProfile })},
		{env: "NEO_WEB_ADDR", flag: "web-addr", usage: "serve the web API and chat page here, such as 127.0.0.1:8080 (neobot web defaults to that); empty disables", set: str(func(c *Config) *string { return &c.WebAddr })},
		{env: "NEO_WEB_USERS", flag: "web-users", usage: "web users and the SHA-256 of their tokens, name=<hash> (comma-separated); neobot web token NAME makes a pair", set: list(func(c *Config) *[]string { return &c.WebUsers })},
		{env: "NEO_WEB_SPEND_USERS", flag: "web-spend-users", usage: "web users who may ask Neo for spends (comma-separated); empty, nobody on the web may", set: list(func(c *Config) *[]string { return &c.WebSpendUsers })},
		{env: "NEO_WEB_APPROVERS", flag: "web-approvers", usage: "web users who may answer approvals besides the requester (comma-separated)", set: list(func(c *Config) *[]string { return &c.WebApprovers })},
		{env: "NEO_WEB_ADMINS", flag: "web-admins", usage: "who may use the web chat's admin page (/admin) for every place's settings: web user names and Slack people as slack:T0123/U0456 (comma-separated); empty, nobody but Slack workspace admins signed in with Slack (SLACK_CLIENT_ID) for their own workspace, and Discord server managers signed in with Discord (DISCORD_CLIENT_ID) for their own servers. Add <the web page>/admin/signin/slack/callback as a redirect of the Slack app", set: list(func(c *Config) *[]string { return &c.WebAdmins })},
		{env: "NEO_WEB_CORS_ORIGINS", flag: "web-cors-origins", usage: "origins whose pages may call the web API (comma-separated); empty sends no CORS headers", set: list(func(c *Config) *[]string { return &c.WebCORSOrigins })},
		{env: "NEO_WEB_STREAMS_PER_USER", flag: "web-streams-per-user", def: "4", usage: "live event streams one web user may hold open; past it the next is answered 429 with Retry-After; 0 is no limit", set: count(func(c *Config) *int { return &c.WebStreamsPerUser })},
		{env: "NEO_WEB_FEED_BYTES", flag: "web-feed-bytes", def: "33554432", usage: "bytes of events kept in memory for web pages that reconnect, all conversations together; past it the conversations idle longest are forgotten (their pages reload)", set: count(func(c *Config) *int { return &c.WebFeedBytes })},
		{env: "NEO_WEB_FEED_CONVERSATION_BYTES", flag: "web-feed-conversation-bytes", def: "1048576", usage: "bytes of events one web conversation keeps in memory for pages that reconnect; past it its oldest go", set: count(func(c *Config) *int { return &c.WebFeedConvBytes })},
		{env: "NEO_CONFIG", flag: "config", usage: "JSON file of settings keyed by variable name, lists as arrays (e.g. SLACK_APPROVERS); the environment and flags override it; secrets are refused", set: str(func(c *Config) *string { return &c.ConfigFile })},
		{env: "NEO_HEALTH_ADDR", flag: "health-addr", usage: "serve /healthz, /readyz and /metrics here (fly.io checks, Prometheus); empty disables", set: str(func(c *Config) *string { return &c.HealthAddr })},
		{env: "NEO_ADMIN_TOKEN", secret: true, usage: "bearer token of the admin API on NEO_HEALTH_ADDR (/admin/v1/), which neobot memory, usage and threads use while the bot runs; at least 32 characters (openssl rand -hex 32); unset, the API is off", set: secret(func(c *Config) *Secret { return &c.AdminToken })},
		{env: "NEO_ADMIN_URL", flag: "admin-url", usage: "where the memory, usage and threads commands reach a running bot's admin API (default http://127.0.0.1 on NEO_HEALTH_ADDR's port)", set: str(func(c *Config) *string { return &c.AdminURL })},
		{env: "NEO_ADMIN_REMOTE", flag: "admin-remote", def: "false", usage: "serve the admin API to other machines too; off, only loopback callers are served (behind a reverse proxy on the same host every caller is loopback: see docs/deploy.md)", set: boolean(func(c *Config) *bool { return &c.AdminRemote })},
		{env: "NEO_SECRET_KEY", secret: true, usage: "key that encrypts MCP servers' OAuth tokens in the store (AES-256-GCM): 32 random bytes as 64 hex digits (openssl rand -hex 32) or base64; required for manifest servers with auth; a new key logs every server out", set: secret(func(c *Config) *Secret { return &c.SecretKey })},
		{env: "NEO_PUBLIC_URL", flag: "public-url", usage: "where people's browsers reach NEO_HEALTH_ADDR, such as https://neo.example.com; MCP OAuth logins come back to <url>/mcp/oauth/callback, and people's connect links are <url>/mcp/connect/... with their sign-in back at <url>/mcp/signin (default http://127.0.0.1 on NEO_HEALTH_ADDR's port)", set: str(func(c *Config) *string { return &c.PublicURL })},
		{env: "NEO_CLIENT_METADATA_URL", flag: "client-metadata-url", usage: "the https URL of neobot's OAuth client ID metadata document when an operator hosts it elsewhere (a copy of <NEO_PUBLIC_URL>/mcp/oauth/client.json whose client_id is this URL); it is neobot's client ID at MCP authorization servers that support such documents (client_id_metadata_document_supported). Default <NEO_PUBLIC_URL>/mcp/oauth/client.json when NEO_PUBLIC_URL is https, else none (neobot registers itself)", set: str(func(c *Config) *string { return &c.ClientDocURL })},
		{env: "NEO_LOG_LEVEL", flag: "log-level", def: "info", usage: "trace, debug, info, warn or error", set: str(func(c *Config) *string { return &c.LogLevel })},
		{env: "NEO_LOG_FORMAT", flag: "log-format", def: "auto", usage: "json, console, or auto (console on a terminal, else JSON)", set: str(func(c *Config) *string { return &c.LogFormat })},
	}
}

// loadConfig reads, from weakest to strongest: defaults, the optional
// settings file (NEO_CONFIG or --config), the environment (via getenv),
// then the flags in args; extra, when set, declares a command's own flags.
// It returns the remaining arguments. Errors name the variable and say how
// to fix it.
func loadConfig(name string, args []string, getenv func(string) string, stderr io.Writer, extra func(*flag.FlagSet)) (*Config, []string, error) {
	table := settings()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(stderr, name, fs) }
	if extra != nil {
		extra(fs)
	}
	flags := map[string]*settingFlag{}
	for _, s := range table {
		if s.flag != "" {
			help := fmt.Sprintf("%s (env %s)", s.usage, s.env)
			if s.def != "" {
				help = fmt.Sprintf("%s (env %s, default %s)", s.usage, s.env, s.def)
			}
			flags[s.flag] = &settingFlag{kind: s.set.kind}
			fs.Var(flags[s.flag], s.flag, help)
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	values := map[string]string{} // variable -> value, strongest source last
	for _, s := range table {
		values[s.env] = s.def
	}
	path := getenv("NEO_CONFIG")
	if set["config"] {
		path = flags["config"].value
	}
	var errs []error
	var skills map[string]skill.Spec
	if path != "" {
		file, specs, err := readSettingsFile(path, table)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(values, file)
		skills = specs
	}
	for _, s := range table {
		if e := getenv(s.env); e != "" {
			values[s.env] = e
		}
	}
	c := &Config{Skills: skills}
	for _, s := range table {
		source := s.env
		v := values[s.env]
		if s.flag != "" && set[s.flag] {
			source, v = "--"+s.flag, flags[s.flag].value
		}
		if err := s.set.apply(c, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", source, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return c, fs.Args(), c.validate()
}

// readSettingsFile reads a JSON object of settings keyed by variable name:
// strings, numbers, or lists of strings (the lists are why the file
// exists), and the "skills" object (docs/skills.md). Secrets and unknown
// names are refused.
func readSettingsFile(path string, table []setting) (map[string]string, map[string]skill.Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("NEO_CONFIG=%s: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, fmt.Errorf("NEO_CONFIG=%s: not a JSON object of settings (%v); write it like {\"SLACK_APPROVERS\": [\"U123\"]}", path, err)
	}
	var skills map[string]skill.Spec
	if r, ok := raw[skillsKey]; ok {
		delete(raw, skillsKey)
		if skills, err = skill.Parse(r); err != nil {
			return nil, nil, fmt.Errorf("NEO_CONFIG=%s: %w", path, err)
		}
	}
	known := map[string]setting{}
	for _, s := range table {
		known[s.env] = s
	}
	out := map[string]string{}
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		s, ok := known[key]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("NEO_CONFIG=%s: %s is not a setting; run neobot help config for the list", path, key))
			continue
		case s.secret:
			errs = append(errs, fmt.Errorf("NEO_CONFIG=%s: %s is a secret; set it in the environment, never in a file", path, key))
			continue
		case key == "NEO_CONFIG":
			errs = append(errs, fmt.Errorf("NEO_CONFIG=%s: a settings file cannot name another one", path))
			continue
		}
		var str string
		var list []string
		var num json.Number
		switch {
		case json.Unmarshal(raw[key], &str) == nil:
			out[key] = str
		case json.Unmarshal(raw[key], &list) == nil:
			out[key] = strings.Join(list, ",")
		case json.Unmarshal(raw[key], &num) == nil:
			out[key] = num.String()
		default:
			errs = append(errs, fmt.Errorf("NEO_CONFIG=%s: %s must be a string, a number or a list of strings", path, key))
		}
	}
	return out, skills, errors.Join(errs...)
}

// skillsKey is the settings file's object of skills, the one entry that
// is not a variable.
const skillsKey = "skills"

// validate checks the settings that do not depend on the command: shapes
// of tokens and URLs, and enumerations.
// minAdminToken is the shortest NEO_ADMIN_TOKEN accepted: long enough that
// guessing it over the network is hopeless.
const minAdminToken = 32

func (c *Config) validate() error {
	var errs []error
	bad := func(env, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{env}, a...)...))
	}
	if _, err := c.prices(); err != nil {
		bad("NEO_MODEL_PRICES", "%v", err)
	}
	if _, err := llm.ParsePosture("NEO_MODEL_OPENS_IN_REASONING", c.ModelPosture); err != nil {
		errs = append(errs, err)
	}
	if c.QuestionTimeout != 0 && (c.QuestionTimeout < time.Second || c.QuestionTimeout > 24*time.Hour) {
		bad("NEO_QUESTION_TIMEOUT", "%s is out of range: a tool call should not wait more than 24h for a person, nor give them under a second; set it between 1s and 24h (10m suits most teams)", c.QuestionTimeout)
	}
	for _, u := range []struct{ env, v string }{
		{"NEO_LLM_BASE_URL", c.LLMBaseURL}, {"NEO_CHEAP_LLM_BASE_URL", c.CheapLLMBaseURL}, {"MATRIX_GATEWAY_URL", c.GatewayURL},
		{"NEO_DAEMON_URL", c.DaemonURL}, {"SLACK_API_URL", c.SlackAPIURL},
		{"DISCORD_API_URL", c.DiscordAPIURL}, {"NEO_PUBLIC_URL", c.PublicURL},
		{"SLACK_REDIRECT_URL", c.SlackRedirectURL}, {"SLACK_AUTHORIZE_URL", c.SlackAuthorizeURL},
	} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			bad(u.env, "%q is not an http(s) URL; set it like https://host/path", u.v)
		}
	}
	// The daemon's bearer token and every spend travel to NEO_DAEMON_URL.
	if p, err := url.Parse(c.DaemonURL); err == nil && p.Scheme == "http" && !mcp.Loopback(p.Hostname()) {
		bad("NEO_DAEMON_URL", "%q sends the daemon token and every spend over plain http to another machine; use https, or http only on loopback (127.0.0.1, ::1, localhost)", c.DaemonURL)
	}
	if _, err := c.vision(); err != nil {
		bad("NEO_MODEL_VISION", "%v", err)
	}
	if c.CheapModel == "" && (c.CheapLLMBaseURL != "" || c.CheapLLMProvider != "" || c.CheapLLMAPIKey != "") {
		bad("NEO_CHEAP_MODEL", "is empty but NEO_CHEAP_LLM_BASE_URL, NEO_CHEAP_LLM_PROVIDER or NEO_CHEAP_LLM_API_KEY is set; name the model to call there, or unset them")
	}
	if c.GatewayURL != "" && c.GatewayToken == "" {
		bad("MATRIX_GATEWAY_TOKEN", "is empty but MATRIX_GATEWAY_URL is set; export the gateway's bearer token")
	}
	if c.SlackBotToken != "" && !strings.HasPrefix(string(c.SlackBotToken), "xoxb-") {
		bad("SLACK_BOT_TOKEN", "must start with xoxb- (the Bot User OAuth Token from OAuth & Permissions)")
	}
	if (c.DiscordClientID == "") != (c.DiscordClientSecret == "") {
		bad("DISCORD_CLIENT_ID", "and DISCORD_CLIENT_SECRET go together (Discord's sign-in needs both, from the application's OAuth2 page); set both or neither")
	}
	c.checkSlackDistribution(bad)
	if c.SlackBotToken == "" && !c.slackDistributed() && (c.SlackAppToken != "" || c.SlackSigningSecret != "") {
		bad("SLACK_BOT_TOKEN", "is not set, but SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is: Slack is half configured. Set the Bot User OAuth Token (xoxb-..., OAuth & Permissions) for one workspace, or SLACK_REDIRECT_URL (the install callback, https://<host>/slack/oauth/callback) to let any workspace add Neo, or unset the others to run without Slack")
	}
	switch c.SlackMode {
	case "socket":
		if c.SlackBotToken != "" && !strings.HasPrefix(string(c.SlackAppToken), "xapp-") {
			bad("SLACK_APP_TOKEN", "must be an app-level token starting with xapp- for Socket Mode (Basic Information > App-Level Tokens, scope connections:write); or set SLACK_MODE=http")
		}
	case "http":
		if c.SlackBotToken != "" && c.SlackSigningSecret == "" {
			bad("SLACK_SIGNING_SECRET", "is required with SLACK_MODE=http (Basic Information > Signing Secret)")
		}
	default:
		bad("SLACK_MODE", "%q: want socket or http", c.SlackMode)
	}
	if t := string(c.DiscordBotToken); strings.HasPrefix(t, "xox") || strings.ContainsAny(t, " \t") && !strings.HasPrefix(t, "Bot ") {
		bad("DISCORD_BOT_TOKEN", "does not look like a Discord bot token; copy it from the Developer Portal (your app > Bot > Reset Token)")
	}
	if n := utf8.RuneCountInString(c.AdminToken.Reveal()); n > 0 && n < minAdminToken {
		bad("NEO_ADMIN_TOKEN", "is %d characters; it guards the admin API (transcripts, memory), so use at least %d, such as the output of `openssl rand -hex 32`, and set the same value for the bot and the memory, usage and threads commands", n, minAdminToken)
	}
	if p, err := url.Parse(c.ClientDocURL); c.ClientDocURL != "" && (err != nil || p.Scheme != "https" || p.Host == "" || strings.Trim(p.Path, "/") == "") {
		bad("NEO_CLIENT_METADATA_URL", "%q is not an https URL with a path; an authorization server fetches the document there, and a client ID must be such a URL (like https://neo.example.com/oauth/client.json)", c.ClientDocURL)
	}
	if c.SecretKey != "" {
		if _, err := oauth.ParseKey(c.SecretKey.Reveal()); err != nil {
			bad("NEO_SECRET_KEY", "%v", err)
		}
	}
	if c.MaxConcurrentTurns == 0 {
		bad("NEO_MAX_CONCURRENT_TURNS", "must be at least 1")
	}
	if c.StepBudget == 0 {
		bad("NEO_STEP_BUDGET", "must be at least 1")
	}
	if c.CompactSoft >= c.CompactHard {
		bad("NEO_COMPACT_SOFT", "%.2f must be below NEO_COMPACT_HARD (%.2f): the soft threshold compacts at a clean boundary before the hard one forces it", c.CompactSoft, c.CompactHard)
	}
	if c.DBPath == "" && c.DatabaseURL == "" {
		bad("NEO_DB_PATH", "is empty; set a file path such as ./neobot.db")
	}
	if u := c.DatabaseURL.Reveal(); u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		bad("NEO_DATABASE_URL", "is not a PostgreSQL URL; want postgres://user:password@host:5432/dbname")
	}
	return errors.Join(errs...)
}

// modelEndpoint is where one of the two models is called, with the names
// of the settings an operator fixes when the call fails.
type modelEndpoint struct {
	role     string // "main" or "cheap"
	model    string
	baseURL  string
	provider string
	key      Secret
	// modelVar, baseVar and keyVar name the settings the values came from.
	modelVar, baseVar, keyVar string
}

// mainEndpoint is the main model's endpoint.
func (c *Config) mainEndpoint() modelEndpoint {
	return modelEndpoint{role: "main", model: c.Model, baseURL: c.LLMBaseURL, provider: c.LLMProvider, key: c.LLMAPIKey,
		modelVar: "NEO_MODEL", baseVar: "NEO_LLM_BASE_URL", keyVar: "NEO_LLM_API_KEY"}
}

// placeModels are the main models a place's stored settings may choose:
// NEO_MODEL and NEO_MODELS, each once.
func (c *Config) placeModels() []string {
	var out []string
	for _, m := range append([]string{c.Model}, c.Models...) {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// checkPlaceModel says why a place may not choose model: it is not one
// of placeModels. An empty model (the configured one) is always fine.
func (c *Config) checkPlaceModel(model string) error {
	known := c.placeModels()
	if model == "" || slices.Contains(known, model) {
		return nil
	}
	if len(known) == 0 {
		return fmt.Errorf("model %q: no model is configured (NEO_MODEL), so a place cannot choose one", model)
	}
	return fmt.Errorf("model %q is not one this bot serves; choose one of %s (NEO_MODEL and NEO_MODELS), or add it to NEO_MODELS", model, strings.Join(known, ", "))
}

// cheapEndpoint is the cheap model's endpoint: the main model's, unless
// NEO_CHEAP_LLM_BASE_URL names its own. Then neither the main provider
// override nor the main key follows it, so a key is never sent to a server
// it was not issued for.
func (c *Config) cheapEndpoint() modelEndpoint {
	ep := modelEndpoint{role: "cheap", model: c.CheapModel, modelVar: "NEO_CHEAP_MODEL"}
	if c.CheapLLMBaseURL == "" {
		ep.baseURL, ep.baseVar = c.LLMBaseURL, "NEO_LLM_BASE_URL"
		ep.provider = cmp.Or(c.CheapLLMProvider, c.LLMProvider)
		ep.key, ep.keyVar = c.LLMAPIKey, "NEO_LLM_API_KEY"
		if c.CheapLLMAPIKey != "" {
			ep.key, ep.keyVar = c.CheapLLMAPIKey, "NEO_CHEAP_LLM_API_KEY"
		}
		return ep
	}
	ep.baseURL, ep.baseVar = c.CheapLLMBaseURL, "NEO_CHEAP_LLM_BASE_URL"
	ep.provider = c.CheapLLMProvider
	ep.key, ep.keyVar = c.CheapLLMAPIKey, "NEO_CHEAP_LLM_API_KEY"
	return ep
}

// checkSlackDistribution checks the Slack app's credentials (both or
// neither) and the settings of "Add to Slack": all of them, or none.
func (c *Config) checkSlackDistribution(bad func(env, format string, a ...any)) {
	if (c.SlackClientID == "") != (c.SlackClientSecret == "") {
		bad("SLACK_CLIENT_ID", "and SLACK_CLIENT_SECRET go together (Basic Information > App Credentials; Sign in with Slack and Add to Slack both need both); set both or neither")
	}
	if !c.slackDistributed() {
		return
	}
	switch {
	case c.SlackBotToken != "":
		bad("SLACK_BOT_TOKEN", "is set with SLACK_REDIRECT_URL: a bot token serves one workspace, while SLACK_REDIRECT_URL lets workspaces add Neo and keeps each one's token in the store; unset one of them")
	case c.SlackClientID == "":
		bad("SLACK_CLIENT_ID", "is required with SLACK_REDIRECT_URL, with SLACK_CLIENT_SECRET (Basic Information > App Credentials): they exchange an install's code for the workspace's token")
	case c.SlackSigningSecret == "":
		bad("SLACK_SIGNING_SECRET", "is required with SLACK_REDIRECT_URL: installed workspaces send events over HTTP, signed with it (Basic Information > Signing Secret)")
	case c.SecretKey == "":
		bad("NEO_SECRET_KEY", "is required with SLACK_REDIRECT_URL: it seals each workspace's bot token in the store (openssl rand -hex 32)")
	}
}

// slackDistributed reports whether any workspace may add Neo ("Add to
// Slack"), each answered with its own token from the store.
func (c *Config) slackDistributed() bool { return c.SlackRedirectURL != "" }

// requireModel is the check for commands that talk to a model.
func (c *Config) requireModel() error {
	if c.Model == "" {
		return errors.New("NEO_MODEL: is empty; set the model to talk to, e.g. NEO_MODEL=gpt-4.1 with OPENAI_API_KEY, or NEO_MODEL=llama3.1 with NEO_LLM_BASE_URL=http://localhost:11434/v1")
	}
	return nil
}

// secrets returns every credential, for the log scrubber.
func (c *Config) secrets() []Secret {
	return []Secret{c.LLMAPIKey, c.CheapLLMAPIKey, c.FireworksKey, c.TogetherKey, c.OpenCodeKey, c.OpenAIKey,
		c.GatewayToken, c.DaemonToken, c.SlackBotToken, c.SlackAppToken, c.SlackSigningSecret, c.SlackClientSecret, c.DiscordBotToken, c.AdminToken, c.SecretKey}
}

// printSettings writes the settings table, for `neobot help config`; with
// markdown set, as the README's table.
func printSettings(w io.Writer, markdown bool) {
	if markdown {
		fmt.Fprintln(w, "| Variable | Flag | Default | Meaning |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, s := range settings() {
			f, d := "env only", s.def
			if s.flag != "" {
				f = "`--" + s.flag + "`"
			}
			if d != "" {
				d = "`" + d + "`"
			}
			fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", s.env, f, d, s.usage)
		}
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIABLE\tFLAG\tDEFAULT\tMEANING")
	for _, s := range settings() {
		f := "-"
		if s.flag != "" {
			f = "--" + s.flag
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.env, f, s.def, s.usage)
	}
	tw.Flush()
}

func usage(w io.Writer, name string, fs *flag.FlagSet) {
	help := commandHelp()
	if words := strings.Fields(name); len(words) > 1 {
		c := help[words[1]]
		if c.synopsis == "" {
			c.synopsis, c.what = strings.Join(words[1:], " ")+" [flags]", "Runs Neo."
		}
		fmt.Fprintf(w, "usage: neobot %s\n\n%s\n\nflags (defaults shown; neobot help config lists every setting):\n", c.synopsis, c.what)
		printDefaults(w, fs)
		return
	}
	fmt.Fprintf(w, "usage: neobot %-41s %s\n", "[flags]", "run Neo in Slack (SLACK_BOT_TOKEN) and/or Discord (DISCORD_BOT_TOKEN), else in this terminal")
	for _, c := range []string{"chat", "check", "web", "web token", "memory", "usage", "spends", "feedback", "threads", "store", "mcp", "config"} {
		fmt.Fprintf(w, "       neobot %-41s %s\n", help[c].synopsis, help[c].short)
	}
	fmt.Fprintf(w, "       neobot %-41s %s\n", "version", "print the version (also --version)")
	fmt.Fprintf(w, "       neobot %-41s %s\n", "help [COMMAND|config]", "a command's usage, or every setting")
	fmt.Fprintln(w, "\nflags:")
	printDefaults(w, fs)
}

// commandHelp returns each command's usage: its synopsis, a one-line
// summary for the overview, and what it does.
func commandHelp() map[string]struct{ synopsis, short, what string } {
	return map[string]struct{ synopsis, short, what string }{
		"chat": {"chat [--thread NAME] [--dry-run] [flags]", "a conversation in this terminal",
			"A conversation with Neo in this terminal. --thread continues a stored conversation by name; --dry-run prints the system block and tool schemas it would send, without a model.\nType stop to stop the running turn; Ctrl-C stops it too, and a second Ctrl-C (or Ctrl-C while idle, or Ctrl-D) leaves."},
		"check": {"check [--live] [flags]", "validate settings and manifest, start every MCP server, print the tools",
			"Validates the settings and the manifest, starts every MCP server, and prints the tool surface. With --live it also calls every service once: a one-token call to the main and the cheap model (each at its own endpoint), Slack auth.test (or, with SLACK_CLIENT_ID, the app's credentials), Discord users/@me and the execution daemon; each line names what was called and what came back. Exits non-zero, naming the fix, when something is wrong."},
		"usage": {"usage [--since 7d] [--by workspace|channel|user|thread|model|day]", "model tokens used, grouped, and what they cost",
			"Prints the model tokens Neo used since a day (--since 7d, 24h or 2026-11-01; days are UTC), grouped by workspace, channel, user, thread, model or day, with their cost at NEO_MODEL_PRICES. Reads NEO_DB_PATH, or the running bot's admin API when the bot holds the file (set NEO_ADMIN_TOKEN for both)."},
		"threads": {"threads list|show KEY|export KEY [--format json|markdown]", "list stored conversations, show or export one",
			"Lists the stored conversations, most recent first (list), prints one transcript as Markdown (show KEY), or exports it as JSON or Markdown (export KEY --format json). Works while the bot runs through its admin API (NEO_ADMIN_TOKEN)."},
		"store": {"store backup FILE | restore FILE | copy [flags]", "back up or restore the bbolt file (NEO_DB_PATH), or copy it into PostgreSQL",
			"backup FILE writes a consistent copy of the bbolt file at NEO_DB_PATH, while the bot runs too (through its admin API: set NEO_ADMIN_TOKEN), checks it and renames it into place. restore FILE checks a backup (bbolt's consistency check, the schema version, every bucket read) and puts it in place of NEO_DB_PATH; it refuses while a bot holds the file, and keeps the file it replaces. copy copies everything in the bbolt file at NEO_DB_PATH (transcripts, the message journal, approvals, delegations, memory, usage, ratings of answers, model reasoning postures, and MCP OAuth tokens and Slack installations, still encrypted) into the empty PostgreSQL database at NEO_DATABASE_URL, then checks that both hold as many records of each kind: stop the bot first and start it again with NEO_DATABASE_URL set (docs/scaling.md). Backups: docs/deploy.md."},
		"mcp": {"mcp login|logout ALIAS [--user ID] [flags]", "log the bot in to a remote MCP server behind OAuth, or remove a stored token",
			"login ALIAS prints the authorization URL of the manifest's server ALIAS (\"auth\": \"oauth\"); opening it completes the login through the running bot's callback on NEO_HEALTH_ADDR (the bot needs NEO_SECRET_KEY, and this command NEO_ADMIN_TOKEN to reach it). logout ALIAS revokes and deletes the operator's token, or with --user PLATFORM.WORKSPACE.USER one person's token for a \"per_user\" server. docs/mcp-auth.md."},
		"web": {"web [--user NAME] [flags]", "Neo with the web API and chat page on, and a one-time sign-in link",
			"Runs Neo with the web API and chat page on NEO_WEB_ADDR (default 127.0.0.1:8080), beside Slack and Discord when their tokens are set, and prints a one-time link that signs NAME in (default me)."},
		"web token": {"web token NAME", "make a bearer token for web user NAME",
			"Prints a new bearer token for web user NAME, and the NEO_WEB_USERS entry (the token's SHA-256) that admits it."},
		"spends": {"spends [verify|approvals] [--since 7d] [--format table|csv|json]", "the spend ledger: every planned call and how it ended; verify checks its hash chain",
			"Prints every call neobot's own executor planned since a day (--since 7d, 24h or 2026-11-01; days are UTC): who asked, in which thread, the tool and its arguments, who approved or denied, how it ended (completed, failed, refused, denied, cancelled, unknown) and its receipt; --format json adds each call's chain entries, hashes and records included. verify walks the ledger's hash chain and names the first entry that was edited, removed or inserted, exiting non-zero (--receipt also checks a receipt from a thread). approvals lists every approval asked: who could decide, and who decided what, when and on which platform. Reads NEO_DB_PATH or NEO_DATABASE_URL, or the running bot's admin API when the bot holds the file (NEO_ADMIN_TOKEN). docs/spending.md says what each outcome means and how the chain is built."},
		"feedback": {"feedback [--since 7d] [--format csv|json]", "what people thought of Neo's answers",
			"Prints every rating of an answer made since a day (--since 7d, 24h or 2026-11-01; days are UTC), from the chats' feedback buttons and the web API: when, the thread and turn, who, up or down, the reason given for a down, the skill and model, and the question and the answer. Reads NEO_DB_PATH, or the running bot's admin API when the bot holds the file (NEO_ADMIN_TOKEN)."},
		"config": {"config export | diff FILE | set [--by NAME] PLACE FIELD=VALUE... | history PLACE", "each place's governance, stored and versioned",
			"export prints every place's stored settings (skill, instructions, model, daily_tokens, spend, approvers), each with its version and who changed it when, as JSON for review as code; diff FILE compares an earlier export with the store and fails when they differ; set records a new version of a place's settings (an empty VALUE returns the field to the settings file's; --by names who made the change); history PLACE lists its versions with what each changed. Places are written as in skills (slack:T0123/C0456). Reads NEO_DB_PATH or NEO_DATABASE_URL, or the running bot's admin API when the bot holds the file (NEO_ADMIN_TOKEN). docs/governance.md."},
		"memory": {"memory list|search|forget [flags]", "show, search or delete what Neo remembers",
			"Shows (list), searches (search QUERY) or deletes (forget [ID...]) what Neo remembers, scoped by --workspace, --user and --channel. Works while the bot runs through its admin API (NEO_ADMIN_TOKEN)."},
	}
}

// prices parses NEO_MODEL_PRICES: model=prompt/completion, comma-separated,
// in dollars per million tokens.
func (c *Config) prices() (map[string]acct.Price, error) {
	out := map[string]acct.Price{}
	for _, item := range strings.Split(c.ModelPrices, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		model, rates, ok := strings.Cut(item, "=")
		in, outRate, ok2 := strings.Cut(rates, "/")
		p, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
		q, err2 := strconv.ParseFloat(strings.TrimSpace(outRate), 64)
		if !ok || !ok2 || err1 != nil || err2 != nil || p < 0 || q < 0 || strings.TrimSpace(model) == "" {
			return nil, fmt.Errorf("%q: write model=PROMPT/COMPLETION in dollars per million tokens, e.g. gpt-4.1=2/8", item)
		}
		out[strings.TrimSpace(model)] = acct.Price{Prompt: p, Completion: q}
	}
	return out, nil
}

// vision reads NEO_MODEL_VISION: nil for auto (the registry decides),
// else whether the main model sees images.
func (c *Config) vision() (*bool, error) {
	switch strings.ToLower(strings.TrimSpace(c.ModelVision)) {
	case "", "auto":
		return nil, nil
	case "yes", "true", "on":
		v := true
		return &v, nil
	case "no", "false", "off":
		v := false
		return &v, nil
	}
	return nil, fmt.Errorf("%q is not auto, yes or no; set yes for a model that takes image content, no for one that does not, or auto to ask the model registry", c.ModelVision)
}
