package tools

import (
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
)

// Names of the synthetic functions.
const (
	// MemoryRecall searches Neo's durable memory on purpose.
	MemoryRecall = "memory_recall"
	// MemoryForget deletes what Neo remembers about the user, at their
	// request.
	MemoryForget = "memory_forget"
	// HistorySearch searches the earlier part of the conversation that
	// compaction archived (compact.HistorySearch).
	HistorySearch = compact.HistorySearch
)

func coreExecuteSchema() llm.Tool {
	return llm.NewFunctionTool(core.CoreExecute,
		"Delegate a rigorous or money-moving task to the secure execution pipeline: anything that sends, "+
			"transfers, swaps, approves, deploys, settles, funds, mints, withdraws, stakes, invokes or bridges, "+
			"or needs a wallet signature. The pipeline plans and executes it, asks the user to approve any spend "+
			"inline, and returns the verifiable outcome. Never call money-moving tools any other way.",
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"intent": map[string]any{
					"type": "string",
					"description": "A clear, self-contained description of the task: what to do, with which " +
						"assets, amounts, addresses and networks, and any limits the user set.",
				},
			},
			"required": []string{"intent"},
		})
}

func memoryRecallSchema() llm.Tool {
	return queryTool(MemoryRecall,
		"Search your own durable memory for what you know about this user, this conversation's workspace, "+
			"and past tasks. Use it when the user asks what you remember, or when earlier context would help "+
			"and was not already given to you.",
		"What to look for, in a few words; empty for a general digest.")
}

func memoryForgetSchema() llm.Tool {
	return queryTool(MemoryForget,
		"Delete what you remember about the user, when they ask you to forget something. Only their own "+
			"memories are touched; report back what was forgotten.",
		"What to forget, in a few words; empty forgets everything remembered about the user here.")
}

func historySearchSchema() llm.Tool {
	return queryTool(HistorySearch,
		"Search the earlier part of this conversation, which was archived when it grew long: the summary "+
			"you were given keeps the most recent and most used identifiers, and this finds the rest "+
			"(addresses, hashes, IDs, exact numbers, what a tool returned). Words and identifiers match whole, "+
			"best matches first; a header you remember (AUDIT BATCH 17) or a \"quoted phrase\" matches as a phrase. "+
			"Each hit shows the lines around its matches.",
		"Words, a phrase or an identifier to find, such as an address, an order ID, a file name or a result's header.")
}

// queryTool is a function taking one optional "query" string.
func queryTool(name, description, query string) llm.Tool {
	return llm.NewFunctionTool(name, description, map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": query},
		},
	})
}
