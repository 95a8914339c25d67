// Package core is neobot's vocabulary: the types every other package speaks.
//
// A conversation is identified by a [Thread]; a user's message arrives as an
// [Inbound]; Neo speaks back through a [Reporter]; a spend waits on a human
// through an [Approver] and the durable [Gate] behind each approval button.
//
// core depends on the standard library and one Unicode normalizer
// (golang.org/x/text/unicode/norm, which reads approval labels in one
// form); core/layering_test.go holds it to that. Packages under core/
// build on it; adapters and the store translate to and from it.
package core
