package core

import "time"

// Clock tells the time and times waits. Options that take one use the
// real clock when it is nil; tests pass coretest.Clock, whose time moves
// only when the test says.
type Clock interface {
	Now() time.Time
	// NewTimer returns a channel that receives once d has passed, and a
	// stop function that cancels the timer and reports whether it did.
	NewTimer(d time.Duration) (<-chan time.Time, func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}
