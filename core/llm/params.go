package llm

import "strings"

// Names of the request parameter that caps a completion's length.
const (
	// ParamMaxTokens is the classic chat-completions cap, which every
	// OpenAI-compatible server takes.
	ParamMaxTokens = "max_tokens"
	// ParamMaxCompletionTokens is the cap OpenAI's reasoning models (the
	// o-series and gpt-5) take instead: they refuse max_tokens with HTTP
	// 400 unsupported_parameter, because their cap also counts the hidden
	// reasoning tokens.
	ParamMaxCompletionTokens = "max_completion_tokens"
)

// completionCapFamilies lists the normalized model-name prefixes (see
// ContextWindow) that take max_completion_tokens. A prefix must be followed
// by the end of the name or a dash, so "o1" matches o1 and o1-mini but not
// a local model called o1x.
func completionCapFamilies() []string {
	return []string{"o1", "o3", "o4", "gpt-5"}
}

// TokenLimitParam names the parameter a model takes for the completion
// cap: ParamMaxCompletionTokens for OpenAI's o-series (o1, o3, o4-mini...)
// and gpt-5 models, whoever serves them, else ParamMaxTokens.
func TokenLimitParam(model string) string {
	m := normalizeModel(model)
	for _, p := range completionCapFamilies() {
		if rest, ok := strings.CutPrefix(m, p); ok && (rest == "" || rest[0] == '-' || rest[0] == '.' && p == "gpt-5") {
			return ParamMaxCompletionTokens
		}
	}
	return ParamMaxTokens
}

// normalizeModel is the registry's form of a model name: lower case,
// without a provider path (accounts/fireworks/models/, Org/, opencode/).
func normalizeModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return m
}
