package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/store"
)

// wordModel answers "remember the word W" with "Noted W." and "which
// word?" with the word the thread's earlier messages hold, so an answer
// proves the model was sent the thread's context; anything else gets "ok".
func wordModel(srv *llmtest.Server) {
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		last := r.Messages[len(r.Messages)-1].Content
		word := func(s string) string {
			_, rest, ok := strings.Cut(s, "remember the word ")
			if !ok {
				return ""
			}
			return strings.Fields(rest)[0]
		}
		switch {
		case word(last) != "":
			return llmtest.Text("Noted " + word(last) + ".")
		case strings.Contains(last, "which word?"):
			for _, m := range r.Messages {
				if w := word(m.Content); w != "" && m.Role == "user" {
					return llmtest.Text("The word was " + w + ".")
				}
			}
			return llmtest.Text("I was never told a word.")
		}
		return llmtest.Text("ok")
	})
}

// TestStoreBackupUnderLoad: 50 conversations answered, then a backup
// taken through the running bot while more keep arriving; a restore over
// the running bot's file is refused; restored into a fresh directory, a
// new neobot continues every one of the 50 conversations from its context.
func TestStoreBackupUnderLoad(t *testing.T) {
	const threads, noise = 50, 100
	w := newSlackWorld(t)
	w.env["NEO_HEALTH_ADDR"] = freeAddr(t)
	w.env["NEO_ADMIN_TOKEN"] = "admin-backup-token-0123456789abcdef"
	// One person talks in 150 threads at once: lift their share of the bot.
	w.env["NEO_USER_MESSAGES_PER_MINUTE"], w.env["NEO_USER_BYTES_PER_DAY"] = "0", "0"
	wordModel(w.model)
	p := w.start(t, 1)

	ts := make([]string, threads)
	for i := range threads {
		ts[i] = w.slack.Mention(slacktest.Msg{User: "UALICE", Text: fmt.Sprintf("please remember the word word-%02d", i)}).TS
	}
	for i := range threads {
		w.answerIn(t, "C0GENERAL", ts[i], fmt.Sprintf("Noted word-%02d.", i))
	}

	// The load: new conversations keep arriving while the backup runs.
	backup := filepath.Join(t.TempDir(), "neobot-backup.db")
	stop := make(chan struct{})
	var load sync.WaitGroup
	load.Go(func() {
		for i := range noise {
			select {
			case <-stop:
				return
			default:
			}
			w.slack.Mention(slacktest.Msg{User: "UBOB", Text: fmt.Sprintf("noise %d", i)})
		}
	})
	out, stderr, err := run(t, w.env, "", "store", "backup", backup)
	close(stop)
	load.Wait()
	if err != nil || !strings.Contains(out, "through the running bot's admin API") || !strings.Contains(out, fmt.Sprintf("schema %d", store.SchemaVersion)) {
		t.Fatalf("store backup while the bot runs = %v\n%s\n%s", err, out, stderr)
	}
	if _, err := os.Stat(backup + ".partial"); !os.IsNotExist(err) {
		t.Errorf("store backup left %s.partial behind", backup)
	}
	if strings.Contains(out+stderr, "admin-backup-token") {
		t.Errorf("store backup prints the admin token:\n%s%s", out, stderr)
	}

	uploaded := runBackupScript(t, w.env)
	if c, err := store.Verify(t.Context(), uploaded, time.Second); err != nil || c.Keys["threads"] == 0 {
		t.Errorf("the scheduled backup uploaded %s: %+v, %v; want a checked database", uploaded, c, err)
	}

	if _, stderr, err := run(t, w.env, "", "store", "restore", backup); err == nil || !strings.Contains(stderr, "held by a running neobot") || !strings.Contains(stderr, "stop it first") {
		t.Errorf("store restore over the running bot's file = %v, %q; want it refused", err, stderr)
	}
	p.stop(t)

	fresh := maps.Clone(w.env)
	fresh["NEO_DB_PATH"] = filepath.Join(t.TempDir(), "data", "neobot.db")
	out, stderr, err = run(t, fresh, "", "store", "restore", backup)
	if err != nil || !strings.Contains(out, "Restored "+backup) {
		t.Fatalf("store restore into a fresh directory = %v\n%s\n%s", err, out, stderr)
	}
	w.env = fresh
	p = w.start(t, 2)
	for i := range threads {
		w.slack.Message(slacktest.Msg{User: "UALICE", Text: "which word?", ThreadTS: ts[i]})
	}
	for i := range threads {
		w.answerIn(t, "C0GENERAL", ts[i], fmt.Sprintf("The word was word-%02d.", i))
	}
	p.stop(t)

	// With no bot running the backup reads the file itself.
	out, stderr, err = run(t, fresh, "", "store", "backup", filepath.Join(t.TempDir(), "again.db"))
	if err != nil || !strings.Contains(out, "directly, no bot running") {
		t.Errorf("store backup with no bot = %v\n%s\n%s", err, out, stderr)
	}
}

// runBackupScript runs deploy/backup/backup.sh, the scheduled backup
// Machine's job, against the running bot's admin API, with an rclone that
// uploads into a directory, and returns the uploaded file.
func runBackupScript(t *testing.T, bot map[string]string) string {
	t.Helper()
	bin, bucket := t.TempDir(), t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "neobot")); err != nil {
		t.Fatal(err)
	}
	rclone := "#!/bin/sh\n[ \"$1\" = copyto ] || exit 2\necho \"$3\" > \"$FAKE_BUCKET/dest\"\ncp \"$2\" \"$FAKE_BUCKET/uploaded.db\"\n"
	if err := os.WriteFile(filepath.Join(bin, "rclone"), []byte(rclone), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", filepath.Join(repoRoot(t), "deploy", "backup", "backup.sh"))
	cmd.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "FAKE_BUCKET=" + bucket,
		"NEO_ADMIN_URL=http://" + bot["NEO_HEALTH_ADDR"], "NEO_ADMIN_TOKEN=" + bot["NEO_ADMIN_TOKEN"],
		"BUCKET_NAME=neobot-backups", "AWS_ENDPOINT_URL_S3=https://fly.storage.tigris.dev"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("backup.sh = %v\n%s", err, out)
	}
	dest, _ := os.ReadFile(filepath.Join(bucket, "dest"))
	if !strings.HasPrefix(string(dest), ":s3:neobot-backups/neobot/neobot-") || !strings.Contains(string(out), "uploaded neobot-") {
		t.Errorf("backup.sh uploaded to %q:\n%s", dest, out)
	}
	return filepath.Join(bucket, "uploaded.db")
}
