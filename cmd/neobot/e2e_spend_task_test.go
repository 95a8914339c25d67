package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/mcp/tasktest"
)

// TestSpendTaskKill kills neobot (SIGKILL) at the three moments of an
// approved spend whose tool answers with a task (the MCP tasks
// extension), on bbolt and on PostgreSQL: after the approval is recorded
// and before the call reaches the tool's server; after the server started
// the task and before neobot learnt (and stored) its ID, the worst moment;
// and while neobot polls the stored task. After the restart the thread
// is told the truth and the tool is never called again: the outcome is
// unknown in the first two cases, and in the third the task's own result:
// the resumed turn follows the task it recorded until the task ends.
func TestSpendTaskKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kills neobot six times")
	}
	cases := []struct {
		name string
		hold tasktest.Hold
		// calls is how many calls reach the tool; want is what the
		// ledger records, and the thread's answer says.
		calls int
		state string
		want  []string
	}{
		{"before the call", tasktest.HoldBefore, 0, "unknown", []string{"unknown"}},
		{"before the task is stored", tasktest.HoldAfter, 1, "unknown", []string{"unknown"}},
		{"while the task is polled", tasktest.HoldNone, 1, "completed", []string{"completed", "sent 5 USDC, receipt r-77"}},
	}
	for _, db := range databases {
		for _, tc := range cases {
			t.Run(db.name+"/"+strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
				srv := tasktest.New(t, "transfer")
				w, _ := newSpendWorld(t)
				db.use(t, w.env)
				w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
					"alias": "wallet", "transport": "http", "url": srv.URL, "version": "1.0.0", "tools": []string{"transfer"}, "side_effects": "spend",
				}}})
				spendModel(t, w.model, "core_execute")
				srv.HoldCalls(tc.hold)
				p := w.start(t, 1)
				mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 5 USDC to alice"})
				gate := w.waitGate(t, p, mention.TS, "wallet/transfer")
				w.slack.Click("UCAROL", gate, 0)
				ctx := waitCtx(t)
				var task string
				if tc.hold == tasktest.HoldNone {
					task = <-srv.Created()
					for polled := range srv.Polled() {
						if polled == task {
							break // neobot follows the task
						}
					}
				} else {
					select {
					case <-srv.Held():
					case <-ctx.Done():
						t.Fatalf("the approved call never reached the tool's server\n%s", p.output.String())
					}
				}
				p.kill()
				srv.HoldCalls(tasktest.HoldNone)
				for len(srv.Polled()) > 0 {
					<-srv.Polled() // the killed process's polls
				}

				p = w.start(t, 2)
				if task != "" {
					for polled := range srv.Polled() {
						if polled == task {
							break // the restarted neobot follows the task it recorded
						}
					}
					srv.Complete(task, "sent 5 USDC, receipt r-77")
				}
				answer := driveToAnswer(t, w, p, mention.TS, 0)
				p.stop(t)
				for _, want := range tc.want {
					if !strings.Contains(answer, want) {
						t.Errorf("the thread was told %q, want it to say %q", answer, want)
					}
				}
				if n := srv.Calls(); n != tc.calls {
					t.Errorf("the transfer reached its server %d times, want %d: an approved spend is called at most once", n, tc.calls)
				}
				out, _, err := run(t, w.env, "", "spends", "--format", "json")
				if err != nil {
					t.Fatalf("neobot spends: %v\n%s", err, out)
				}
				var rows []spendRow
				if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
					t.Fatalf("neobot spends = %s (%v), want one planned call", out, err)
				}
				if rows[0].State != tc.state {
					t.Errorf("the ledger holds the spend %s (%s), want %s", rows[0].State, rows[0].Reason, tc.state)
				}
				if rows[0].DecidedBy != "UCAROL" || rows[0].Task != task {
					t.Errorf("the spend was decided by %q and records task %q; want Carol, and task %q", rows[0].DecidedBy, rows[0].Task, task)
				}
				if out, _, err := run(t, w.env, "", "spends", "verify"); err != nil {
					t.Errorf("neobot spends verify: %v\n%s", err, out)
				}
			})
		}
	}
}
