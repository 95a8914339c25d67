// Package conversation is the hub that turns inbound messages into turns.
//
// Adapters translate platform events into [core.Inbound] and call
// [Hub.Submit]; the hub journals each message durably before it accepts it,
// drops duplicates, and runs one turn at a time per thread, in arrival
// order, through a [Runner] (the agent). Threads run in parallel under a
// global limit with round-robin fairness: a thread runs one turn, then goes
// to the back of the line behind every thread that is waiting, so one busy
// thread cannot starve the others. An idle thread holds no goroutine and no
// memory: its mailbox exists only while it has a turn queued or running.
//
// # Messages during a turn
//
// A message that arrives while its thread is busy joins the thread's queue
// and the user gets a brief notice that it was received. A message that is
// exactly "stop" or "cancel" (any case, trailing "." or "!" ignored) is a
// command, not a turn: it cancels the running turn (the model call, its tool
// calls and any delegation, whose approval gates are then denied because the
// approver's context ends) and also sets aside the messages queued behind it
// in that thread, which are completed without a turn. In a thread where Neo
// can move money, "stop" must mean stop: a user who types it while two more
// requests wait does not expect those to start a moment later. The notice
// says how many messages were set aside, so the user can send again what
// still matters. Messages that arrive after the "stop" run normally.
// Because stopping a turn that waits on an approval denies the spend, the
// adapters let only that turn's requester, its approvers and (Slack)
// workspace admins stop it (core.Gates.MayStop, in adapters/internal/intake);
// anyone else's "stop" is refused privately and never reaches the hub.
//
// A turn's context is cancelled with a cause: core.ErrStopped when the user
// stopped it (an approver then denies its pending gate), core.ErrShutdown
// when the process is stopping (the gate stays pending for the resumed
// turn). context.Cause tells them apart.
//
// # Restart
//
// [Hub.Start] resumes every message that was journaled but never completed,
// in journal order per thread, through the same Runner: the Runner's resume
// contract (idempotent per EventID; core.ErrAnswered when the answer was
// already given) makes a second run safe. A message older than
// Options.MaxAge (default 24 hours) is not resumed: the user gets an honest
// notice that Neo was restarted and could not get to it, because an answer
// to a day-old request, or a spend it asked for, is more likely to surprise
// than to help. A pending "stop" sets aside the pending messages before it.
//
// # Delivery windows
//
// A message is completed in the journal only after its outcome was
// delivered: the answer said (by the Runner), or a notice posted by the hub.
// A crash between the two repeats the step on restart. For answers the
// Runner's resume contract turns the repeat into core.ErrAnswered, so an
// answer is never given twice: core/agent stores the final answer before it
// says it, which leaves one narrow at-most-once window (a crash between the
// two loses that answer). Notices from the hub (failure, too old, stopped)
// are at least once: a crash between the notice and the completion repeats
// the notice, which is better than a user left with silence. One known gap:
// a message answered but not yet completed when the process died, and
// restarted only after MaxAge, gets the "too old" notice after its answer.
//
// # Several processes
//
// With Options.Cluster, hubs in several processes share one journal (neobot
// instances on one PostgreSQL database). A thread's turns run in the
// process that claims the thread, one at a time, in journal order: before
// a turn the claiming hub lines its queue up with the thread's journal,
// unless it has held the thread since before the message was journaled
// (a thread nobody here holds is claimed before its message is) and the
// journal write found nothing pending ahead that it does not know
// ([AheadJournal]). A process that receives a message (or a "stop") for a thread another
// process holds journals it and hands it over ([Cluster.Hand]); the holder
// takes it ([Hub.Handed]). A claim is kept for Options.Linger after the
// thread goes idle, then released, after which the journal is read once
// more so no hand-over is lost. [Hub.Adopt] takes up the threads of a
// process that died, whose claims ended with it.
//
// # Shutdown
//
// [Hub.Close] refuses new messages, lets running turns finish within
// Options.Grace, then cancels them; a turn cancelled by shutdown is not
// completed, so it resumes after the restart from its last persisted step.
// Queued turns stay journaled and resume the same way. Pending approval
// gates are durable in the gate store and are found again by the resumed
// turn.
package conversation
