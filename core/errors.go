package core

import "errors"

// Sentinel errors that callers test with errors.Is.
var (
	// ErrNotFound reports that a stored record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAnswered reports that a turn resumed after a restart had already
	// been answered: nothing more is said.
	ErrAnswered = errors.New("turn already answered")
	// ErrShutdown is the cancellation cause of a turn interrupted because
	// the process is stopping: its pending gates stay open for the resumed
	// turn to find (context.Cause tells it apart from a user's stop).
	ErrShutdown = errors.New("neobot is shutting down")
	// ErrStopped is the cancellation cause of a turn a user stopped: its
	// pending gates are denied.
	ErrStopped = errors.New("stopped by the user")
	// ErrGateUnknown reports a button whose token matches no gate: forged, or
	// from another deployment.
	ErrGateUnknown = errors.New("gate: unknown token")
	// ErrGateForbidden reports a click from someone who may not answer the gate.
	ErrGateForbidden = errors.New("gate: user may not answer")
	// ErrGateClosed reports an answer to a gate that was already decided.
	ErrGateClosed = errors.New("gate: already decided")
	// ErrGateExpired reports an answer to a gate past its expiry.
	ErrGateExpired = errors.New("gate: expired")
	// ErrGateOption reports an answer that is not one of the gate's options.
	ErrGateOption = errors.New("gate: not one of the options")
	// ErrDiskFull reports a write refused because the disk holding the
	// store is full: nothing new can be kept until space is freed.
	ErrDiskFull = errors.New("the disk holding the store is full")
	// ErrQueueFull reports a message set aside, not journaled, because
	// its thread already has as many messages waiting as it may hold; its
	// author was told.
	ErrQueueFull = errors.New("the thread's queue is full")
)

// CoreExecute is the one tool that moves money or needs a wallet
// signature: the model describes the task, the execution daemon does it,
// and a person approves every spend. It is never retried automatically.
const CoreExecute = "core_execute"
