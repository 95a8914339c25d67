package conversation

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// queueFullText tells a user their message was set aside: the thread
// already has max messages waiting.
func queueFullText(max int) string {
	return fmt.Sprintf("I already have %d messages waiting in this thread, so I set this one aside. Send it again once I've answered the others, or say \"stop\" to clear the queue.", max)
}

// textStopRefused and textStopUnchecked answer a stop, received by
// another process, that the process running the turn refused.
const (
	textStopRefused = "Sorry, I can't stop this: it's waiting on an approval or running a long task, and only the person who asked (or, for an approval, an approver or an admin) can stop it. " +
		"Nothing was stopped."
	textStopUnchecked = "Sorry, I couldn't check who may stop this turn (my database did not answer), so nothing was stopped. " +
		"Please try again in a moment."
)

// textQueued tells a user their message waits behind the running turn.
const textQueued = "Got it, I'll get to this as soon as I finish what I'm working on here."

// stopText is the notice answering a stop: whether a turn was cancelled and
// how many queued messages were set aside.
func stopText(cancelled bool, dropped int) string {
	switch {
	case !cancelled && dropped == 0:
		return "There was nothing running to stop."
	case dropped == 0:
		return "Stopped."
	case dropped == 1:
		return "Stopped. I also set aside the message waiting in this thread; send it again if you still need it."
	default:
		return fmt.Sprintf("Stopped. I also set aside the %d messages waiting in this thread; send again anything you still need.", dropped)
	}
}

// failureText is the notice for a turn that failed: honest, and free of
// internals (the error itself goes to the log).
func failureText(err error) string {
	const prefix = "I hit a problem and couldn't finish: "
	if errors.Is(err, context.DeadlineExceeded) {
		return prefix + "this took longer than I'm allowed to spend on one message. Please try again, perhaps with a smaller request."
	}
	return prefix + "something went wrong on my side. Please try again in a moment."
}

// expiredText is the notice for a message found pending after a restart,
// too old to resume.
func expiredText(at time.Time) string {
	return fmt.Sprintf("I was restarted and couldn't get to your message from %s in time. Please ask again if you still need it.",
		at.UTC().Format("Jan 2 15:04 UTC"))
}
