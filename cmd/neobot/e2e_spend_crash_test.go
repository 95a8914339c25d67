package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// spendModel answers by what is asked, so a turn resumed after a crash
// finds its answer wherever it stopped: the planner (offered the transfer
// alone) plans one transfer of the intent's first number in USDC to
// alice; a request whose last message is a tool result is answered with
// that result on one line; anything else calls tool with the user's
// words (core_execute's intent, or write_note's text). planned receives a
// value each time the planner is asked.
func spendModel(t *testing.T, srv *llmtest.Server, tool string) (planned <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 16)
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		last := r.Messages[len(r.Messages)-1]
		switch {
		case onlyTool(r, "wallet__transfer"):
			select {
			case ch <- struct{}{}:
			default:
			}
			amount := firstNumber.FindString(last.Content)
			return llmtest.Calls(llmtest.Call("p1", "wallet__transfer", `{"amount":`+amount+`,"currency":"USDC","recipient":"alice"}`))
		case last.Role == "tool":
			return llmtest.Text("Outcome: " + strings.Join(strings.Fields(last.Content), " "))
		case tool == "core_execute":
			args, _ := json.Marshal(map[string]string{"intent": last.Content})
			return llmtest.Calls(llmtest.Call("c1", tool, string(args)))
		}
		args, _ := json.Marshal(map[string]string{"text": last.Content})
		return llmtest.Calls(llmtest.Call("w1", tool, string(args)))
	})
	return ch
}

var firstNumber = regexp.MustCompile(`\d+(\.\d+)?`)

// Where a crash trial kills neobot.
const (
	killPlanning    = iota // the planner has been asked
	killAsked              // the approval is posted
	killClicked            // the approver clicked, maybe not yet recorded
	killInTransfer         // inside the wallet's transfer
	killTransferred        // the transfer returned, its outcome maybe not recorded
	killAnswered           // the answer is in the thread
	killPoints
)

var killNames = [killPoints]string{"planning", "asked", "clicked", "in transfer", "transferred", "answered"}

// TestSlackSpendCrash kills neobot with SIGKILL at every point between the
// plan and the answer, 20 trials in all, some denied. Over all trials: no
// transfer without an approval, none made twice, and every trial ends with
// the spend completed once, denied, or reported unknown in the thread and
// in neobot spends.
func TestSlackSpendCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("20 crash trials")
	}
	for trial := range 20 {
		point, deny := trial%killPoints, trial%5 == 4
		t.Run(fmt.Sprintf("%02d_%s_deny=%v", trial, strings.ReplaceAll(killNames[point], " ", "_"), deny), func(t *testing.T) {
			crashTrial(t, point, deny)
		})
	}
}

func crashTrial(t *testing.T, point int, deny bool) {
	w, wal := newSpendWorld(t)
	planned := spendModel(t, w.model, "core_execute")
	button := 0
	if deny {
		button = 1
	}
	if point == killInTransfer && !deny {
		if err := os.WriteFile(wal.hold, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 5 USDC to alice"})
	ctx := waitCtx(t)

	switch point {
	case killPlanning:
		select {
		case <-planned:
		case <-ctx.Done():
			t.Fatalf("the planner was never asked\n%s", p.output.String())
		}
	default:
		gate := w.waitGate(t, p, mention.TS, "wallet/transfer")
		if point == killAsked {
			break
		}
		w.slack.Click("UCAROL", gate, button)
		switch {
		case point == killClicked || deny:
		case point == killInTransfer:
			wal.wait(t, ctx, "transfer", "begin", 1)
		case point == killTransferred:
			wal.wait(t, ctx, "transfer", "end", 1)
		case point == killAnswered:
			w.answerIn(t, "C0GENERAL", mention.TS, "Outcome:")
		}
	}
	p.kill()
	os.Remove(wal.hold)

	p = w.start(t, 2)
	answer := driveToAnswer(t, w, p, mention.TS, button)
	p.stop(t)

	out, _, err := run(t, w.env, "", "spends", "--format", "json")
	if err != nil {
		t.Fatalf("neobot spends: %v\n%s", err, out)
	}
	var rows []spendRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("neobot spends = %s (%v), want one planned call", out, err)
	}
	row, sent := rows[0], wal.transfers(t)
	for key, n := range sent {
		if n > 1 {
			t.Errorf("transfer %s made %d times", key, n)
		}
	}
	if total(sent) > 0 && row.DecidedBy != "UCAROL" {
		t.Errorf("a transfer was made without Carol's approval: %+v", row)
	}
	switch row.State {
	case "completed":
		if total(sent) != 1 || deny {
			t.Errorf("completed with %d transfers (deny %v)", total(sent), deny)
		}
	case "denied":
		if total(sent) != 0 || !deny {
			t.Errorf("denied with %d transfers (deny %v)", total(sent), deny)
		}
	case "unknown":
		if !strings.Contains(answer, "unknown") {
			t.Errorf("the outcome is unknown, but the thread says %q", answer)
		}
	default:
		t.Errorf("spend ended %s (%s), want completed, denied or unknown", row.State, row.Reason)
	}
	t.Logf("killed %s: %s, %d transfers", killNames[point], row.State, total(sent))
}

// driveToAnswer clicks every approval posted in the thread (once each)
// until the turn's answer shows, and returns it.
func driveToAnswer(t *testing.T, w *slackWorld, p *process, threadTS string, button int) string {
	t.Helper()
	clicked := map[string]bool{}
	for {
		var gate *slacktest.Message
		var answer string
		_, err := w.slack.WaitMessages(waitCtx(t), func(all []slacktest.Message) bool {
			for _, m := range all {
				if !m.FromBot() || m.Ephemeral || (m.ThreadTS != threadTS && m.TS != threadTS) {
					continue
				}
				if strings.Contains(m.Rendered(), "Outcome:") && !strings.Contains(m.Rendered(), "writing…") && !m.Streaming {
					answer = m.Rendered()
					return true
				}
				if len(m.Buttons()) > 0 && !clicked[m.TS] {
					gate = &m
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatalf("no answer after the restart: %v\n%s", err, p.output.String())
		}
		if answer != "" {
			return answer
		}
		clicked[gate.TS] = true
		w.slack.Click("UCAROL", *gate, button)
	}
}

// TestSlackAllowOnceCrash: an asked write-class call approved with "Allow
// once", neobot killed while the tool runs (or right after the click):
// after the restart it is never run a second time unasked. Either it ran
// once and its outcome is reported unknown, or it had not started and is
// asked again.
func TestSlackAllowOnceCrash(t *testing.T) {
	for _, inTool := range []bool{true, false} {
		t.Run(fmt.Sprintf("in_tool=%v", inTool), func(t *testing.T) {
			w, wal := newSpendWorld(t)
			w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
				"notes": map[string]any{"side_effects": map[string]string{"read": "allow", "write": "ask"}, "places": []string{"slack"}},
			}})
			spendModel(t, w.model, "wallet__write_note")
			if inTool {
				if err := os.WriteFile(wal.hold, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := w.start(t, 1)
			mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "note that it is pay day"})
			gate := w.waitGate(t, p, mention.TS, "wallet/write_note")
			w.slack.Click("UCAROL", gate, 0) // Allow once
			if inTool {
				wal.wait(t, waitCtx(t), "write_note", "begin", 1)
			}
			p.kill()
			os.Remove(wal.hold)

			p = w.start(t, 2)
			answer := driveToAnswer(t, w, p, mention.TS, 0)
			p.stop(t)
			began, _ := wal.calls(t, "write_note")
			if began > 1 {
				t.Fatalf("write_note ran %d times under one \"Allow once\"", began)
			}
			if inTool && (began != 1 || !strings.Contains(answer, "unknown")) {
				t.Errorf("killed in the tool: %d runs, answer %q; want one run reported unknown", began, answer)
			}
			t.Logf("in tool %v: %d runs; %s", inTool, began, answer)
		})
	}
}
