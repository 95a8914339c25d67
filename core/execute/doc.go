// Package execute is neobot's built-in executor: core_execute without an
// execution daemon, for a team whose MCP servers can move money (a
// payments or wallet server's transfer, refund or create_invoice).
//
// It keeps the wall the daemon keeps. The conversational model never sees
// a spend-class tool; it hands core_execute a prose intent, and the
// executor takes it through the daemon's contract in-process:
//
//		intent -> plan -> gates -> execution -> outcome
//
//	  - Plan: one call to the main model (never the cheap one), shown only
//	    the spend-class tools the place's skill may use and the intent. Its
//	    calls are validated against each tool's JSON input schema and the
//	    skill's spend limits before anyone is asked. An intent that needs
//	    no spend tool, or cannot be turned into valid calls, comes back as
//	    clarify, and nothing is asked or run.
//	  - Gates: one approval per call through the turn's core.Approver, so
//	    who may approve, the four-eyes rule, durability and restarts are the
//	    gates' own. The question shows the tool, every argument and a
//	    one-line summary. Deny, timeout or a stopped turn: nothing runs.
//	  - Execution, at most once: each call is recorded "calling" in the
//	    spend ledger before it is made, and only the Run that recorded it
//	    makes it: of two overlapping Runs of one turn that saw one click,
//	    the other makes nothing. A call found "calling" after a crash is
//	    never made again: its outcome is unknown, and the thread is told.
//	    Every call carries the idempotency key neobot:<intent>:<n> in its
//	    _meta, and as its idempotency_key argument when its schema has one.
//	  - Outcome: the same statuses the daemon reports (completed, failed,
//	    cancelled, clarify, timeout), plus unknown, as a sentence the model
//	    relays.
//
// The spend ledger (core.SpendLedger) holds every planned call: who asked,
// where, who decided, the tool and its arguments, the outcome and the
// times. Day limits count approved and unknown calls per workspace and
// UTC day, checked in the ledger's own transaction, so they hold across
// instances sharing PostgreSQL.
package execute
