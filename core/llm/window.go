package llm

import "strings"

// DefaultContextWindow is assumed for models the registry does not know.
const DefaultContextWindow = 128_000

// window is one registry row: models whose normalized name starts with
// prefix have a context window of tokens.
type window struct {
	prefix string
	tokens int
}

// knownWindows lists context windows by model-name prefix, longest match
// wins. Names are normalized first: lower case, without a provider path
// (accounts/fireworks/models/, Org/, opencode/).
func knownWindows() []window {
	return []window{
		{"gpt-5", 400_000},
		{"gpt-4.1", 1_047_576},
		{"gpt-4o", 128_000},
		{"gpt-4-turbo", 128_000},
		{"gpt-4", 8_192},
		{"gpt-3.5-turbo", 16_385},
		{"gpt-oss", 131_072},
		{"o1-mini", 128_000},
		{"o1", 200_000},
		{"o3", 200_000},
		{"o4-mini", 200_000},
		{"claude", 200_000},
		{"qwen3-coder", 262_144},
		{"qwen3", 131_072},
		{"qwen2.5", 32_768},
		{"deepseek-v3", 163_840},
		{"deepseek-r1", 163_840},
		{"kimi-k2-instruct-0905", 262_144},
		{"kimi-k2-thinking", 262_144},
		{"kimi-k2", 131_072},
		{"glm-4.6", 202_752},
		{"glm-4.5", 131_072},
		{"llama-3.3", 131_072},
		{"llama-3.1", 131_072},
		{"meta-llama-3.1", 131_072},
		{"llama-v3p1", 131_072},
		{"llama-v3p3", 131_072},
		{"mixtral-8x22b", 65_536},
		{"mixtral-8x7b", 32_768},
	}
}

// WindowSource says where a context window figure came from.
type WindowSource int

// Where a context window comes from.
const (
	// WindowGuessed: the registry does not know the model, so
	// DefaultContextWindow is assumed. It may be far larger than the
	// window the model is served with (a local model often has 4k-32k).
	WindowGuessed WindowSource = iota
	// WindowRegistry: the registry's figure for the model.
	WindowRegistry
	// WindowConfigured: Config.ContextWindow, set by the operator.
	WindowConfigured
)

// String names the source, for logs.
func (s WindowSource) String() string {
	switch s {
	case WindowRegistry:
		return "registry"
	case WindowConfigured:
		return "configured"
	}
	return "guess"
}

// ContextWindow returns the context window in tokens of a known model, or
// DefaultContextWindow. Client.ContextWindow applies Config.ContextWindow
// on top.
func ContextWindow(model string) int {
	n, _ := LookupContextWindow(model)
	return n
}

// LookupContextWindow returns the context window in tokens of a model the
// registry knows and true, or DefaultContextWindow and false.
func LookupContextWindow(model string) (int, bool) {
	m := normalizeModel(model)
	best, tokens := 0, DefaultContextWindow
	for _, w := range knownWindows() {
		if len(w.prefix) > best && strings.HasPrefix(m, w.prefix) {
			best, tokens = len(w.prefix), w.tokens
		}
	}
	return tokens, best > 0
}
