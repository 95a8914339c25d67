package llmtest_test

import (
	"context"
	"fmt"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// A test scripts the model's turns, runs the code under test against
// BaseURL, then inspects what the model was sent.
func Example() {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Enqueue(
		llmtest.Calls(llmtest.Call("call_1", "paxeer__price", `{"symbol":"PAX"}`)),
		llmtest.Thinking("the tool said 0.42", "PAX is trading around $0.42."),
	)

	c, err := llm.New(llm.Config{Model: "test-model", BaseURL: srv.BaseURL()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	msgs := []llm.Message{llm.UserMessage("what is the PAX price")}
	first, _ := c.Chat(ctx, llm.ChatRequest{Messages: msgs})
	call := first.Message.ToolCalls[0]
	msgs = append(msgs, first.Message, llm.ToolResult(call.ID, call.Function.Name, `{"pax":"0.42"}`))
	second, _ := c.Chat(ctx, llm.ChatRequest{Messages: msgs})

	fmt.Println(first.FinishReason, call.Function.Name)
	fmt.Println(second.Message.Content, "|", second.Message.Reasoning)
	fmt.Println(len(srv.Requests()), srv.Requests()[1].Messages[2].Role)
	// Output:
	// tool_calls paxeer__price
	// PAX is trading around $0.42. | the tool said 0.42
	// 2 tool
}
