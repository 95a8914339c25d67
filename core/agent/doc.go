// Package agent is Neo's runtime: the recursive tool-calling loop in which
// the conversation transcript is the state.
//
// Each step faults memory in (once per turn, again every few steps), builds
// the system block afresh, checks the context budget and compacts when it
// must (setting the turn's oldest tool results aside when compacting frees
// no more), calls the main model with the tool schemas, dispatches the tool
// calls it asks for concurrently, persists the step, and loops until the
// model answers. Failures climb a recovery ladder (retry with backoff, adapt
// with the error as signal, escalate through core_execute, honest partial);
// a batch repeated without progress ends the turn honestly. Neo speaks only
// through the turn's core.Reporter.
//
// A Run is idempotent per Inbound.EventID, so a turn interrupted by a
// restart resumes where its transcript ends.
package agent
