package conversation_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/conversation"
)

// journal is a minimal in-memory conversation.Journal.
type journal struct {
	mu   sync.Mutex
	seen map[string]bool
	done chan string
}

func (j *journal) JournalInbound(ctx context.Context, in core.Inbound) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.seen[in.EventID] {
		return false, nil
	}
	j.seen[in.EventID] = true
	return true, nil
}

func (j *journal) CompleteInbound(ctx context.Context, t core.Thread, eventID string) error {
	j.done <- eventID
	return nil
}

func (j *journal) PendingInbound(ctx context.Context) ([]core.Inbound, error) { return nil, nil }

// terminal is a Platform that prints what Neo says.
type terminal struct{}

func (terminal) Reporter(t core.Thread) core.Reporter              { return printer{} }
func (terminal) Approver(t core.Thread, user string) core.Approver { return nil }

type printer struct{}

func (printer) Say(ctx context.Context, text string) error    { fmt.Println("neo:", text); return nil }
func (printer) Status(ctx context.Context, text string) error { return nil }
func (printer) Notice(ctx context.Context, text string) error { fmt.Println("note:", text); return nil }

// echo is a Runner that answers with the message it was given.
type echo struct{}

func (echo) Run(ctx context.Context, t core.Turn) error {
	return t.Reporter.Say(ctx, "you said "+t.Inbound.Text)
}

func Example() {
	ctx := context.Background()
	j := &journal{seen: map[string]bool{}, done: make(chan string, 1)}
	hub := conversation.New(conversation.Options{Runner: echo{}, Journal: j})
	hub.Attach("terminal", terminal{})
	if err := hub.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer hub.Close(ctx)

	in := core.Inbound{
		Thread:  core.Thread{Platform: "terminal", Workspace: "local", Channel: "tty", ID: "1"},
		User:    "me",
		Text:    "hello",
		EventID: "ev-1",
	}
	accepted, err := hub.Submit(ctx, in) // returns once journaled
	<-j.done                             // the turn is complete
	fmt.Println("accepted:", accepted, err)
	accepted, err = hub.Submit(ctx, in) // a platform's redelivery
	fmt.Println("redelivered:", accepted, err)
	// Output:
	// neo: you said hello
	// accepted: true <nil>
	// redelivered: false <nil>
}
