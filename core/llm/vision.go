package llm

import "strings"

// visionRow is one registry row: models whose normalized name starts with
// prefix see images, or do not.
type visionRow struct {
	prefix string
	sees   bool
}

// knownVision lists which model families take image content, by
// normalized name prefix (as knownWindows), longest match wins. A model
// the registry does not know is taken not to see images: a picture it
// cannot read is named to it in words, where sending one would have the
// whole request refused.
func knownVision() []visionRow {
	return []visionRow{
		{"gpt-5", true},
		{"gpt-4.1", true},
		{"gpt-4o", true},
		{"gpt-4-turbo", true},
		{"gpt-4", false},
		{"gpt-3.5-turbo", false},
		{"gpt-oss", false},
		{"o1-mini", false},
		{"o1", true},
		{"o3-mini", false},
		{"o3", true},
		{"o4-mini", true},
		{"claude", true},
		{"gemini", true},
		{"llama-4", true},
		{"llama4", true},
		{"qwen3", false},
		{"qwen2.5", false},
		{"deepseek", false},
		{"kimi-k2", false},
		{"glm-4.6", false},
		{"glm-4.5", false},
		{"llama-3", false},
		{"meta-llama-3", false},
		{"llama-3.2-11b-vision", true},
		{"llama-3.2-90b-vision", true},
		{"llama-v3p1", false},
		{"llama-v3p3", false},
		{"mixtral", false},
		{"qwen2.5-vl", true},
		{"qwen2-vl", true},
		{"qwen-vl", true},
		{"qwen3-vl", true},
		{"llama-v3p2-11b-vision", true},
		{"llama-v3p2-90b-vision", true},
		{"llava", true},
		{"pixtral", true},
		{"glm-4.5v", true},
		{"kimi-vl", true},
	}
}

// Vision reports whether a model sees images, by the registry, and
// whether the registry knows the model. Unknown models do not.
func Vision(model string) (sees, known bool) {
	m := normalizeModel(model)
	best := 0
	for _, r := range knownVision() {
		if len(r.prefix) > best && strings.HasPrefix(m, r.prefix) {
			best, sees = len(r.prefix), r.sees
		}
	}
	return sees, best > 0
}

// SeesImages reports whether the client's model is sent images:
// Config.Vision when set, else the registry (see Vision).
func (c *Client) SeesImages() bool {
	if c.cfg.Vision != nil {
		return *c.cfg.Vision
	}
	sees, _ := Vision(c.cfg.Model)
	return sees
}
