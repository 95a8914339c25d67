package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/skill"
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
			"A hit in a short message shows all of it; in a long one, its first line and the lines around its matches. "+
			"Each hit names its reference (msg:1234): that reference as the query shows the whole message "+
			"(msg:1234/2 its second page, when it is long).",
		"Words, a phrase or an identifier to find, such as an address, an order ID, a file name or a result's header; or a reference, msg:1234, to show that message whole.")
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

// Synthetic is a synthetic function's implementation (memory_recall,
// memory_forget, history_search, core_execute): it runs call with its one
// argument, the query or the intent. The call's turn says whose call it
// is: the memory's scope, the searched thread, the delegation's
// idempotency key and who approves a spend come from it.
type Synthetic func(ctx context.Context, call core.ToolCall, arg string) (string, error)

// FromContext adapts an implementation that learns whose call it is from
// its context (core.TurnFrom, core.ToolCallFrom): the call's turn and ID
// are put there.
func FromContext(fn func(ctx context.Context, arg string) (string, error)) Synthetic {
	return func(ctx context.Context, call core.ToolCall, arg string) (string, error) {
		return fn(core.WithToolCall(core.WithTurn(ctx, call.Turn()), call.ID()), arg)
	}
}

// synthetic runs a synthetic function (route found it wired).
func (s *Surface) synthetic(ctx context.Context, call core.ToolCall, sk *skill.Skill) (string, bool, error) {
	args := call.Args()
	switch name := call.Name(); name {
	case core.CoreExecute:
		if v := s.spendVerdict(sk); v.Rule != skill.Allow {
			return s.refuse(call, sk, name, v), true, nil
		}
		return s.coreExecute(ctx, call, sk)
	case MemoryRecall:
		return s.memory(ctx, call, s.recall, "nothing found in memory")
	case MemoryForget:
		return s.memory(ctx, call, s.forget, "nothing was remembered about that, so nothing was forgotten")
	case ReadResource:
		return s.readResource(ctx, call, sk)
	case HistorySearch:
		if query, _ := args["query"].(string); strings.TrimSpace(query) == "" {
			return HistorySearch + ` needs "query": the words or identifier to find.`, true, nil
		}
		return s.memory(ctx, call, s.history, "nothing in the archived part of this conversation matches that")
	}
	return unknownTool(call.Name()), true, nil
}

// coreExecute delegates the intent to the execution daemon, or to
// neobot's own executor where the place may use a spend tool.
func (s *Surface) coreExecute(ctx context.Context, call core.ToolCall, sk *skill.Skill) (string, bool, error) {
	intent, _ := call.Args()["intent"].(string)
	if strings.TrimSpace(intent) == "" {
		return core.CoreExecute + ` needs "intent": a clear, self-contained description of the task.`, true, nil
	}
	run := s.delegate
	if run == nil && s.offersExecute(sk) {
		run = s.execute
	}
	if run == nil {
		return "spending is not set up for this bot, so nothing that moves funds or needs a signature can be done here. " +
			"Tell the user it is not set up.", true, nil
	}
	out, err := run(ctx, call, intent)
	if err != nil {
		// In-band, whatever the error: a money-moving call is never
		// retried automatically.
		return fmt.Sprintf("%s did not complete: %v", core.CoreExecute, err), true, nil
	}
	return out, false, nil
}

// memory runs memory_recall, memory_forget or history_search with the
// call's query.
func (s *Surface) memory(ctx context.Context, call core.ToolCall, fn Synthetic, empty string) (string, bool, error) {
	query, _ := call.Args()["query"].(string)
	out, err := fn(ctx, call, strings.TrimSpace(query))
	if err != nil {
		return "", false, fmt.Errorf("tools: %s: %w", call.Name(), err)
	}
	if out == "" {
		out = empty
	}
	return out, false, nil
}
