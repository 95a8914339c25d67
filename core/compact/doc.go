// Package compact keeps a conversation inside its model's context window.
//
// It measures the window ([Budget], [Heuristic], [NewTokenizer]), picks a
// clean place to cut the working transcript ([Split], never between a tool
// call and its result), asks the cheap model for a consolidated summary
// ([Compactor.Summarize]: GOAL / DECISIONS / ARTIFACTS / OPEN / LAST_RESULTS /
// NEXT plus a ledger of side effects already done), and holds that summary
// to the trust contract ([ValidateSummary]): every high-entropy token of the
// compacted history survives verbatim. When no summary can be written the
// caller degrades to [SafeTail]. [Goal] reads a summary's GOAL back, so the
// agent can pin it as the active goal.
//
// compact never touches storage: core/agent archives what it compacts.
package compact
