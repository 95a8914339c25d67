package conversation

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// The crash test: a child process (this test binary, re-executed) runs a
// hub over a durable file journal while 50 threads talk to it, and is
// SIGKILLed at random points, several times; a last run goes to the end.
// Afterwards every journaled message must have exactly one answer (or an
// honest notice) and be completed.
//
// Delivery window: the child's reporter writes each answer to a file and
// fsyncs it before Say returns, and its runner treats a message with an
// answer in that file as answered (core.ErrAnswered), as the agent does
// with its transcript. Saying and recording are one durable write, so a
// kill leaves an answer either given and known, or neither: answers are
// exactly once. The hub completes a message only after Run returns, so a
// kill between the answer and the completion resumes the message, and the
// runner's ErrAnswered completes it silently. A real adapter cannot make a
// Slack post and a bbolt write atomic; the agent records the final answer
// in its transcript before it says it, which makes the window at-most-once
// for a turn killed between the two (see the package documentation).
const (
	crashDirEnv    = "NEOBOT_CONVERSATION_CRASH_DIR"
	crashSeedEnv   = "NEOBOT_CONVERSATION_CRASH_SEED"
	crashThreads   = 50
	crashMessages  = 4 // per thread
	crashKills     = 6
	crashMaxTurns  = 8
	crashMaxLines  = 150 // progress lines before a kill, at most
	crashDoneLine  = "child: all done"
	crashProgress  = "progress "
	crashResumedAt = "resumed "
	// crashAnsweredAt marks a resumed message whose answer was given
	// before the kill: the window between Say and CompleteInbound.
	crashAnsweredAt = "already answered "
)

func crashEvent(th, m int) string { return fmt.Sprintf("t%02d-m%d", th, m) }

// TestCrashChild is the child process; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("the child of TestCrashRecovery")
	}
	j, err := openFileJournal(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := openOutputLog(filepath.Join(dir, "output.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := j.PendingInbound(t.Context())
	fmt.Printf("%s%d\n", crashResumedAt, len(pending))

	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		id := turn.Inbound.EventID
		if out.isAnswered(id) {
			fmt.Printf("%s%s\n", crashAnsweredAt, id)
			return core.ErrAnswered
		}
		runtime.Gosched() // let other turns and submits interleave
		if err := turn.Reporter.Say(ctx, "answer "+id); err != nil {
			return err
		}
		fmt.Printf("%ssaid %s\n", crashProgress, id)
		return nil
	})
	h := New(Options{Runner: runner, Journal: j, MaxConcurrent: crashMaxTurns})
	h.Attach("test", out)
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Every run submits every message again, like a platform redelivering
	// events after a restart: the journal drops the ones it has.
	var wg sync.WaitGroup
	for th := range crashThreads {
		wg.Go(func() {
			for m := range crashMessages {
				in := msg(fmt.Sprintf("t%02d", th), crashEvent(th, m), "question "+strconv.Itoa(m))
				in.At = time.Now()
				ok, err := h.Submit(t.Context(), in)
				if err != nil {
					t.Errorf("Submit(%s) = %v", in.EventID, err)
					return
				}
				if ok {
					fmt.Printf("%sjournaled %s\n", crashProgress, in.EventID)
				}
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := j.waitDone(ctx, crashThreads*crashMessages); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Println(crashDoneLine)
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (rerun with %s=%d)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	resumed := 0
	for i := range crashKills {
		r := runCrashChild(t, exe, dir, 1+rng.IntN(crashMaxLines))
		resumed += r.resumed
		t.Logf("run %d: resumed %d pending messages, %d of them answered before the kill; killed %v",
			i+1, r.resumed, r.answered, !r.finished)
	}
	r := runCrashChild(t, exe, dir, 0)
	resumed += r.resumed
	t.Logf("final run: resumed %d pending messages, %d of them answered before the kill", r.resumed, r.answered)
	if !r.finished {
		t.Fatal("final run did not finish")
	}
	if resumed == 0 {
		t.Error("no run found pending messages: the kills never interrupted work")
	}
	verifyCrashOutput(t, dir)
}

// runCrashChild runs the child until it prints killAfter progress lines,
// then SIGKILLs it; killAfter 0 lets it finish.
func runCrashChild(t *testing.T, exe, dir string, killAfter int) (r childRun) {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	progress, killed := 0, false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		switch {
		case strings.HasPrefix(line, crashResumedAt):
			r.resumed, _ = strconv.Atoi(strings.TrimPrefix(line, crashResumedAt))
		case strings.HasPrefix(line, crashAnsweredAt):
			r.answered++
		case line == crashDoneLine:
			r.finished = true
		case strings.HasPrefix(line, crashProgress):
			progress++
			if progress == killAfter && !killed {
				killed = true
				if err := cmd.Process.Kill(); err != nil {
					t.Fatalf("kill child: %v", err)
				}
			}
		}
	}
	err = cmd.Wait()
	if killed {
		r.finished = false
		return r
	}
	if err != nil || !r.finished {
		t.Fatalf("child exited with %v, finished %v\nstdout:\n%s\nstderr:\n%s",
			err, r.finished, strings.Join(lines, "\n"), stderr.String())
	}
	return r
}

// childRun is what one child process reported.
type childRun struct {
	resumed  int  // pending messages found at start
	answered int  // resumed messages answered before the kill
	finished bool // ran to the end, not killed
}

// verifyCrashOutput checks that every journaled message was completed and
// got exactly one answer or an honest notice, in order per thread.
func verifyCrashOutput(t *testing.T, dir string) {
	t.Helper()
	j, err := openFileJournal(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.log.Close()
	data, err := os.ReadFile(filepath.Join(dir, "output.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := parseOutput(bytes.Split(bytes.TrimSpace(data), []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	says, notices := map[string]int{}, map[string]int{}
	lastSaid := map[string]int{} // thread -> message index of its last answer
	for _, r := range recs {
		switch {
		case r.Kind == "say":
			says[r.Event]++
			var th, m int
			if _, err := fmt.Sscanf(r.Event, "t%02d-m%d", &th, &m); err != nil {
				t.Fatalf("answer for unknown event %q", r.Event)
			}
			if prev, ok := lastSaid[r.Thread]; ok && m <= prev {
				t.Errorf("in %s, answer to m%d came after m%d's: want arrival order", r.Thread, m, prev)
			}
			lastSaid[r.Thread] = m
		case r.Text != textQueued:
			notices[r.Event]++
		}
	}

	if len(j.order) != crashThreads*crashMessages {
		t.Errorf("journaled %d messages, want %d", len(j.order), crashThreads*crashMessages)
	}
	for _, in := range j.order {
		id := in.EventID
		if !j.done[eventKey(in)] {
			t.Errorf("%s: journaled, never completed", id)
		}
		switch {
		case says[id] == 1 && notices[id] == 0:
		case says[id] == 0 && notices[id] == 1:
		default:
			t.Errorf("%s: %d answers and %d notices, want exactly one answer or one notice", id, says[id], notices[id])
		}
	}
	if t.Failed() {
		t.Log(errors.New("see the seed above to reproduce"))
	}
}
