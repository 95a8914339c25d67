package core

import "errors"

// Sentinel errors that callers test with errors.Is.
var (
	// ErrNotFound reports that a stored record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAnswered reports that a turn resumed after a restart had already
	// been answered: nothing more is said.
	ErrAnswered = errors.New("turn already answered")
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
)
