package llm

import (
	"net/url"
	"strings"
)

// Provider names accepted in Config.Provider and reported in errors.
const (
	ProviderFireworks  = "fireworks"
	ProviderTogether   = "together"
	ProviderOpenCode   = "opencode"
	ProviderOpenAI     = "openai"
	ProviderCompatible = "openai-compatible"
)

// provider is what the client knows about one hosted provider.
type provider struct {
	name    string
	baseURL string
	keyEnv  string // "" = no key required
	// echoReasoning sends an assistant tool-call turn's reasoning back as
	// reasoning_content, for providers whose thinking models reject a
	// tool-call turn without it (Moonshot's Kimi, DeepSeek, as served by
	// OpenCode).
	echoReasoning bool
}

// providerNamed returns the provider table entry for name.
func providerNamed(name string) (provider, bool) {
	switch name {
	case ProviderFireworks:
		return provider{name: name, baseURL: "https://api.fireworks.ai/inference/v1", keyEnv: "FIREWORKS_API_KEY"}, true
	case ProviderTogether:
		return provider{name: name, baseURL: "https://api.together.xyz/v1", keyEnv: "TOGETHER_API_KEY"}, true
	case ProviderOpenCode:
		return provider{name: name, baseURL: "https://opencode.ai/zen/v1", keyEnv: "OPENCODE_API_KEY", echoReasoning: true}, true
	case ProviderOpenAI:
		return provider{name: name, baseURL: "https://api.openai.com/v1", keyEnv: "OPENAI_API_KEY"}, true
	case ProviderCompatible:
		return provider{name: name}, true
	}
	return provider{}, false
}

// DetectProvider names the provider a model string belongs to, or "" when it
// matches none:
//
//	accounts/fireworks/models/...  fireworks (any "accounts/..." path)
//	opencode/...                   opencode (the prefix is not sent)
//	gpt-*, chatgpt-*, o1, o3, o4…  openai
//	Org/Model                      together
//
// Models outside this table need a base URL (NEO_LLM_BASE_URL).
func DetectProvider(model string) string {
	m := strings.TrimSpace(model)
	lower := strings.ToLower(m)
	switch {
	case strings.HasPrefix(lower, "accounts/"):
		return ProviderFireworks
	case strings.HasPrefix(lower, "opencode/"):
		return ProviderOpenCode
	case strings.HasPrefix(lower, "gpt-"), strings.HasPrefix(lower, "chatgpt-"), isOpenAIReasoning(lower):
		return ProviderOpenAI
	}
	if org, name, ok := strings.Cut(m, "/"); ok && org != "" && name != "" && !strings.Contains(name, "/") {
		return ProviderTogether
	}
	return ""
}

// isOpenAIReasoning matches o1, o3-mini, o4-mini-high...: "o", digits, then
// the end or a dash.
func isOpenAIReasoning(m string) bool {
	if len(m) < 2 || m[0] != 'o' {
		return false
	}
	i := 1
	for i < len(m) && m[i] >= '0' && m[i] <= '9' {
		i++
	}
	return i > 1 && (i == len(m) || m[i] == '-')
}

// providerForURL recognises a hosted provider from its base URL, so a base
// URL pointing at Fireworks still reads its key from FIREWORKS_API_KEY.
func providerForURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	switch h := strings.ToLower(u.Hostname()); {
	case h == "api.fireworks.ai":
		return ProviderFireworks
	case h == "api.together.xyz", h == "api.together.ai":
		return ProviderTogether
	case h == "api.openai.com":
		return ProviderOpenAI
	case h == "opencode.ai":
		return ProviderOpenCode
	}
	return ""
}

// echoFamily reports model families whose thinking mode rejects a tool-call
// turn sent back without its reasoning, whoever serves them.
func echoFamily(model string) bool {
	m := strings.ToLower(model)
	return strings.Contains(m, "kimi-k2") && strings.Contains(m, "thinking") ||
		strings.Contains(m, "kimi-k2.5") || strings.Contains(m, "kimi-k2.6") ||
		strings.Contains(m, "deepseek-v3.2") || strings.Contains(m, "deepseek-v4")
}

// wireModel is the model name as the provider expects it.
func wireModel(providerName, model string) string {
	if providerName == ProviderOpenCode && len(model) > len("opencode/") && strings.EqualFold(model[:len("opencode/")], "opencode/") {
		return model[len("opencode/"):]
	}
	return model
}
