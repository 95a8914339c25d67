package delegate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/delegate"
	"github.com/neobot/neobot/core/delegate/delegatetest"
)

func ExampleClient_Run() {
	d := delegatetest.NewServer() // the execution daemon, faked on loopback
	defer d.Close()
	d.RequireToken("secret")
	d.Script(delegatetest.Intent{
		Gates:  []delegatetest.Gate{{NodeID: "n1", Question: "Approve spend of 5 PAX?"}},
		Answer: "settled",
	})

	c, err := delegate.New(delegate.Options{
		BaseURL:      d.URL(),
		Token:        "secret",
		CallerDID:    "did:key:z6MkExample",
		CallerWallet: "0xabc",
		PollInterval: 10 * time.Millisecond,
		// Outside a turn this approver decides; a nil one denies every gate.
		Approver: func(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
			fmt.Println("asked:", req.Question)
			return core.GateAnswer{Approved: true, Answer: "yes", By: "U1"}, nil
		},
		Notify: func(ctx context.Context, text string) { fmt.Println("notice:", text) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	answer, err := c.Run(context.Background(), "send 5 PAX to bob")
	fmt.Println(answer, err)
	// Output:
	// notice: Sent for execution (request i1). I will post here when it needs an approval or finishes.
	// asked: Approve spend of 5 PAX?
	// notice: The delegated task completed (intent i1).
	// settled <nil>
}
