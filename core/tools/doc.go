// Package tools is Neo's tool surface: it starts the agent's MCP servers
// (through core/mcp), advertises each reversible ("Natural") tool to the
// model as a function named alias__tool, hides every tool that moves funds
// or needs a wallet signature ("Escalate"), and adds the synthetic
// core_execute and memory_recall functions. [Surface.Dispatch] routes a
// model's call and renders the result as text.
package tools
