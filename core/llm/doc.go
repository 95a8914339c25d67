// Package llm is Neo's OpenAI-compatible chat-completions transport: tool
// calling, provider detection, gateway metering, the reasoning channel, and
// typed errors the recovery ladder can act on.
package llm
