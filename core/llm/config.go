package llm

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// DefaultTimeout bounds one Chat call when Config.Timeout is zero.
const DefaultTimeout = 120 * time.Second

// DefaultSlot is the gateway slot spend is attributed to.
const DefaultSlot = "neo"

// ErrUnsupportedShape is returned by New for an API that is not
// chat-completions (Anthropic Messages, OpenAI Responses): their tool schemas
// differ and would break the agent loop.
var ErrUnsupportedShape = errors.New("llm: only the OpenAI chat-completions API is supported")

// Config configures a Client. Only Model is required; the rest is detected or
// defaulted.
type Config struct {
	// Model is the model string (NEO_MODEL); it also selects the provider.
	Model string
	// Provider overrides detection: fireworks, together, opencode, openai or
	// openai-compatible.
	Provider string
	// BaseURL is an OpenAI-style base that already includes /v1
	// (NEO_LLM_BASE_URL); the client POSTs to BaseURL + "/chat/completions".
	// Empty means the provider's canonical endpoint.
	BaseURL string
	// APIKey overrides the provider's key variable (FIREWORKS_API_KEY...).
	APIKey string
	// BaseURLSetting names the setting BaseURL comes from, for the errors
	// that ask to fix it (default "NEO_LLM_BASE_URL"; the cheap model's is
	// NEO_CHEAP_LLM_BASE_URL).
	BaseURLSetting string

	// GatewayURL routes every call through the metering gateway
	// (MATRIX_GATEWAY_URL) at GatewayURL + "/v1/chat/completions".
	GatewayURL string
	// GatewayToken is the gateway bearer token (MATRIX_GATEWAY_TOKEN).
	GatewayToken string
	// ActorDID, IntentID and SlotLabel are sent to the gateway as
	// X-Matrix-Actor-DID, X-Matrix-Intent-ID and X-Matrix-Slot (default
	// "neo"). A call's context overrides IntentID ([WithIntentID]).
	ActorDID  string
	IntentID  string
	SlotLabel string

	// Temperature is the sampling temperature; zero leaves it to the provider.
	Temperature float64
	// MaxTokens caps the completion; zero leaves it to the provider. It is
	// sent as max_tokens, or as max_completion_tokens to the models that
	// take only that (TokenLimitParam).
	MaxTokens int
	// Seed asks for reproducible sampling; zero sends none.
	Seed int64
	// Timeout bounds one Chat call (default DefaultTimeout).
	Timeout time.Duration

	// EchoReasoning overrides whether an assistant tool-call turn's
	// Reasoning is sent back as reasoning_content; nil uses the provider's
	// and model family's setting.
	EchoReasoning *bool
	// ContextWindow overrides the model registry (see ContextWindow).
	ContextWindow int
	// Vision overrides the registry on whether the model sees images
	// (NEO_MODEL_VISION yes or no); nil asks the registry (see Vision).
	Vision *bool
	// Posture declares whether the model's answers start inside a
	// reasoning block the prompt opened (NEO_MODEL_OPENS_IN_REASONING).
	// Empty or PostureAuto learns it (see Recall); a declared posture
	// streams the first answer as every later one.
	Posture Posture

	// HTTPClient sends the requests; nil uses a client on
	// http.DefaultTransport.
	HTTPClient *http.Client
	// Env reads environment variables; nil uses os.Getenv. Tests pass a map
	// lookup instead of touching the process environment.
	Env func(string) string
	// Now is the clock used to turn an HTTP-date Retry-After into a delay
	// when the response has no Date header; nil uses time.Now.
	Now func() time.Time
	// Logger receives one debug line per call; the zero value is silent.
	Logger zerolog.Logger
}

// settings is a validated Config.
type settings struct {
	provider provider
	endpoint string
	apiKey   string
	gateway  bool
	echo     bool
	model    string // as sent on the wire
	baseVar  string // Config.BaseURLSetting
	// completionCap sends Config.MaxTokens as max_completion_tokens.
	completionCap bool
}

// resolve validates cfg and works out the provider, endpoint and key.
func resolve(cfg Config) (settings, error) {
	var s settings
	if strings.TrimSpace(cfg.Model) == "" {
		return s, errors.New("llm: no model configured: set NEO_MODEL (e.g. accounts/fireworks/models/qwen3-235b-a22b)")
	}
	if cfg.Temperature < 0 || cfg.Temperature > 2 {
		return s, fmt.Errorf("llm: temperature %g is outside 0..2", cfg.Temperature)
	}
	if cfg.MaxTokens < 0 {
		return s, fmt.Errorf("llm: max tokens %d is negative", cfg.MaxTokens)
	}
	if cfg.Timeout < 0 {
		return s, fmt.Errorf("llm: timeout %s is negative", cfg.Timeout)
	}
	if cfg.ContextWindow < 0 {
		return s, fmt.Errorf("llm: context window %d is negative", cfg.ContextWindow)
	}
	if _, err := ParsePosture("NEO_MODEL_OPENS_IN_REASONING", string(cfg.Posture)); err != nil {
		return s, fmt.Errorf("llm: %w", err)
	}
	env := cfg.Env
	if env == nil {
		env = os.Getenv
	}
	s.baseVar = cfg.BaseURLSetting
	if s.baseVar == "" {
		s.baseVar = "NEO_LLM_BASE_URL"
	}

	base, err := checkBaseURL(cfg.BaseURL, s.baseVar)
	if err != nil {
		return s, err
	}
	gateway, err := checkBaseURL(cfg.GatewayURL, "MATRIX_GATEWAY_URL")
	if err != nil {
		return s, err
	}

	name := strings.ToLower(strings.TrimSpace(cfg.Provider))
	switch name {
	case "anthropic", "claude", "openai-responses", "responses":
		return s, fmt.Errorf("%w: provider %q speaks a different API; use an OpenAI-compatible endpoint via %s", ErrUnsupportedShape, cfg.Provider, s.baseVar)
	case "":
		name = DetectProvider(cfg.Model)
		if base != "" {
			// An explicit base URL wins over the model string.
			name = providerForURL(base)
			if name == "" {
				name = ProviderCompatible
			}
		}
		if name == "" && gateway != "" {
			name = ProviderCompatible
		}
		if name == "" {
			if strings.HasPrefix(strings.ToLower(cfg.Model), "claude") {
				return s, fmt.Errorf("%w: model %q is served by the Anthropic Messages API; set %s to an OpenAI-compatible endpoint for it", ErrUnsupportedShape, cfg.Model, s.baseVar)
			}
			return s, fmt.Errorf("llm: cannot tell which provider serves model %q: set NEO_MODEL to a known form (accounts/fireworks/models/..., Org/Model for Together, opencode/..., gpt-...) or set %s to an OpenAI-compatible endpoint", cfg.Model, s.baseVar)
		}
	}
	p, ok := providerNamed(name)
	if !ok {
		return s, fmt.Errorf("llm: unknown provider %q: use fireworks, together, opencode, openai or openai-compatible", cfg.Provider)
	}
	s.provider = p
	s.model = wireModel(p.name, strings.TrimSpace(cfg.Model))
	s.completionCap = TokenLimitParam(cfg.Model) == ParamMaxCompletionTokens

	switch {
	case gateway != "":
		s.gateway = true
		s.endpoint = gateway + "/v1/chat/completions"
		s.apiKey = cfg.GatewayToken
		if s.apiKey == "" {
			s.apiKey = env("MATRIX_GATEWAY_TOKEN")
		}
		if s.apiKey == "" {
			return s, errors.New("llm: MATRIX_GATEWAY_URL is set but MATRIX_GATEWAY_TOKEN is empty: set the gateway token or unset the gateway URL")
		}
	case base != "":
		s.endpoint = base + "/chat/completions"
	case p.baseURL != "":
		s.endpoint = p.baseURL + "/chat/completions"
	default:
		return s, fmt.Errorf("llm: provider %s needs a base URL: set %s (e.g. http://127.0.0.1:11434/v1)", p.name, s.baseVar)
	}

	if !s.gateway {
		s.apiKey = cfg.APIKey
		if s.apiKey == "" && p.keyEnv != "" {
			s.apiKey = env(p.keyEnv)
			if s.apiKey == "" {
				return s, fmt.Errorf("llm: %s needs an API key: set %s", p.name, p.keyEnv)
			}
		}
	}

	s.echo = p.echoReasoning || echoFamily(cfg.Model)
	if cfg.EchoReasoning != nil {
		s.echo = *cfg.EchoReasoning
	}
	return s, nil
}

// checkBaseURL validates an OpenAI-style base URL and returns it without a
// trailing slash or a trailing /chat/completions. Bases that point at a
// different API shape are refused.
func checkBaseURL(raw, variable string) (string, error) {
	base := strings.TrimRight(strings.TrimSpace(raw), "/")
	if base == "" {
		return "", nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("llm: %s %q is not an http(s) URL", variable, raw)
	}
	path := strings.ToLower(u.Path)
	switch {
	case strings.HasSuffix(path, "/messages"):
		return "", fmt.Errorf("%w: %s %q is an Anthropic Messages endpoint; point it at an OpenAI-compatible base such as https://host/v1", ErrUnsupportedShape, variable, raw)
	case strings.HasSuffix(path, "/responses"):
		return "", fmt.Errorf("%w: %s %q is an OpenAI Responses endpoint; use the chat-completions base such as https://api.openai.com/v1", ErrUnsupportedShape, variable, raw)
	}
	base = strings.TrimSuffix(base, "/chat/completions")
	if variable == "MATRIX_GATEWAY_URL" {
		base = strings.TrimSuffix(base, "/v1")
	}
	return base, nil
}
