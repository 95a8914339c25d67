// Package delegate is neobot's core_execute: it hands a prose intent to the
// execution daemon's async HTTP API, services the daemon's approval gates
// through the thread's core.Approver, and returns the outcome as a sentence
// the model can act on. Nothing that moves funds is called any other way.
//
// # HTTP contract
//
//	POST /messages/async                 {"prose": "...", "skill": "...", "caller_did": "...", "caller_wallet": "..."}
//	                                     -> {"intent_id": "i1"}
//	GET  /intents/{id}/gates             -> {"pending": [{"node_id": "n1", "question": "...", "options": ["yes", "no"]}]}
//	POST /intents/{id}/gates/{nid}/answer {"approved": true, "answer": "yes"}
//	GET  /messages/async/{id}            -> {"status": "completed", "result": {"answer": "settled"}}
//	                                        {"status": "failed", "error": "insufficient balance"}
//	                                        {"status": "cancelled"}
//	                                        {"status": "clarify", "clarify": {"question": "which wallet?"}}
//
// "clarify" may also be a plain string; any status other than completed,
// failed, cancelled or clarify means the intent is still running.
//
// # Credentials and identity
//
// Every request carries:
//
//	Authorization: Bearer <Options.Token>   (NEO_DAEMON_TOKEN; omitted when empty)
//	X-Caller-DID: <Options.CallerDID>       (omitted when empty)
//	X-Caller-Wallet: <Options.CallerWallet> (omitted when empty)
//
// The submit body repeats caller_did and caller_wallet (and skill, when set)
// so a daemon that reads identity from the intent itself sees the same
// values. The token is never logged and never sent in a body.
//
// # Idempotency
//
// A gate answer carries "Idempotency-Key: <intent>/<node>" and is resent on
// network errors and 5xx until the daemon acknowledges it, so the daemon
// applies it once. A submit made inside a tool call carries
// "Idempotency-Key: neobot:<thread key>:<call id>", so a daemon that honours
// the header never starts the same tool call twice.
//
// # Durability
//
// When ctx carries a core.Turn and a tool call ID (core.WithToolCall), the
// delegation is saved in the Ledger under (thread, call ID) before polling
// starts. A Run with the same key, after a restart, resumes that intent
// instead of submitting again, and its pending gates are offered again (an
// approver built on core.Gates finds the gate it posted before). The record
// is finished when Run returns an outcome; it is kept when Run returns
// because ctx ended, which is the restart path.
package delegate
