// Package coretest provides in-memory fakes of core's storage contracts and
// a recording core.Reporter, and a manual [Clock], for tests of the packages built on core.
//
// The fakes honour the same contracts as the bbolt store (UpdateGate is
// atomic and writes nothing when its function fails; lookups return
// core.ErrNotFound or core.ErrGateUnknown) so a test written against them
// also holds against the real store. Every type is safe for concurrent use.
package coretest
