package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// TestSlackToolServerKilled: the wallet, a tool server, is killed with
// SIGKILL during a call that writes, and its restart is held. The call it
// died in is reported sent with its outcome unknown; every call made
// while it is down is reported not run, because it never reached the
// server; nobody hears that neobot stopped, for it never did; each mention
// gets exactly one answer; and once the wallet serves again, the tool
// works at the next call.
func TestSlackToolServerKilled(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) { slackToolServerKilled(t, db.use) })
	}
}

// slackToolServerKilled is TestSlackToolServerKilled on the store useDB sets up.
func slackToolServerKilled(t *testing.T, useDB func(*testing.T, map[string]string)) {
	w, wal := newSpendWorld(t)
	useDB(t, w.env)
	spendModel(t, w.model, "wallet__write_note")
	if err := os.WriteFile(wal.hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := w.start(t, 1)
	pid := wal.started(t, waitCtx(t), 1)

	// Killed during the call.
	during := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "note that the vault is open"})
	wal.wait(t, waitCtx(t), "write_note", "begin", 1)
	if err := os.WriteFile(wal.down, nil, 0o644); err != nil { // hold its restart
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	os.Remove(wal.hold)
	answer := w.finishedAnswer(t, "C0GENERAL", during.TS, "Outcome:")
	if want := `was sent, but its server "wallet" stopped during the call, so its outcome is unknown`; !strings.Contains(answer.Rendered(), want) {
		t.Errorf("answer for the call the server died in = %q, want %q", answer.Rendered(), want)
	}

	// Calls while it is down, in new threads.
	var window []slacktest.Delivery
	for _, text := range []string{"note that the door is shut", "note that the lights are off"} {
		window = append(window, w.slack.Mention(slacktest.Msg{User: "UALICE", Text: text}))
	}
	for _, m := range window {
		answer := w.finishedAnswer(t, "C0GENERAL", m.TS, "Outcome:")
		if want := `was not run: its server "wallet" is restarting, and the call never reached it`; !strings.Contains(answer.Rendered(), want) {
			t.Errorf("answer while the server is down = %q, want %q", answer.Rendered(), want)
		}
	}
	if began, _ := wal.calls(t, "write_note"); began != 1 {
		t.Errorf("write_note began %d times, want once: the calls while it was down never reached it", began)
	}

	// Serving again: the next call works.
	os.Remove(wal.down)
	ctx := waitCtx(t)
	for !strings.Contains(p.output.String(), "mcp server restarted") {
		select {
		case <-ctx.Done():
			t.Fatalf("the wallet never served again\n%s", p.output.String())
		case <-time.After(5 * time.Millisecond): // polling the log, not timing the bot
		}
	}
	serving := time.Now()
	after := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "note that the wallet is back"})
	w.finishedAnswer(t, "C0GENERAL", after.TS, "Outcome: noted")
	if d := time.Since(serving); d > 10*time.Second {
		t.Errorf("the tool worked %s after its server served again, want at once", d)
	}

	for _, m := range append([]slacktest.Delivery{during, after}, window...) {
		answers := 0
		for _, msg := range w.slack.Thread("C0GENERAL", m.TS) {
			if !msg.FromBot() || msg.Ephemeral {
				continue
			}
			if strings.Contains(msg.Rendered(), "neobot stopped") {
				t.Errorf("thread %s says %q: neobot never stopped", m.TS, msg.Rendered())
			}
			if strings.Contains(msg.Rendered(), "Outcome:") {
				answers++
			}
		}
		if answers != 1 {
			t.Errorf("thread %s has %d answers, want exactly one", m.TS, answers)
		}
	}
	p.stop(t)
}
