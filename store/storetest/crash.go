package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/neobot/neobot/core"
)

// CrashEnv names the environment variable that makes a test binary the
// child of [Crash]: it holds the target (a file path, a database URL) the
// child writes to.
const CrashEnv = "NEOBOT_STORE_CRASH_CHILD"

// Appender is what the crash child writes with.
type Appender interface {
	AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error)
}

const crashWriters = 8

// crashPayload is the deterministic content of entry seq of writer w: a
// torn or misplaced entry cannot match it.
func crashPayload(w int, seq uint64) []byte {
	return fmt.Appendf(nil, "writer %d entry %d %s", w, seq, strings.Repeat(strconv.Itoa(int(seq%10)), 200))
}

func crashThread(w int) core.Thread {
	return core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: fmt.Sprintf("w%d", w)}
}

// CrashChild is the body of the child test [Crash] runs: with CrashEnv
// set it opens the target and appends from eight writers forever,
// printing each acknowledged entry; without it the test is skipped.
func CrashChild(t *testing.T, open func(target string) (Appender, error)) {
	target := os.Getenv(CrashEnv)
	if target == "" {
		t.Skip("run as the child of a crash test")
	}
	db, err := open(target)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for w := range crashWriters {
		wg.Go(func() {
			for seq := uint64(1); ; seq++ {
				got, err := db.AppendEntries(context.Background(), crashThread(w), crashPayload(w, seq))
				if err != nil || got != seq {
					fmt.Printf("append: %d, %v\n", got, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %d %d\n", w, seq)
				out.Flush() // acknowledged only once the parent can see it
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// Crash runs childTest (which calls [CrashChild]) in a child process
// against a fresh target per round, SIGKILLs it at a different point each
// round, reopens the target, and checks that every acknowledged entry is
// there, whole and in place.
func Crash(t *testing.T, childTest string, target func(t *testing.T) string, open func(t *testing.T, target string) Backend) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round, n := range []int{100, 250, 400} {
		tgt := target(t)
		acked := runAndKill(t, childTest, tgt, n)
		db := open(t, tgt)
		for w := range crashWriters {
			_, entries, err := db.LoadTranscript(context.Background(), crashThread(w))
			if err != nil {
				t.Fatalf("round %d: LoadTranscript = %v", round, err)
			}
			if uint64(len(entries)) < acked[w] {
				t.Errorf("round %d: writer %d has %d entries, but %d were acknowledged", round, w, len(entries), acked[w])
			}
			for i, e := range entries {
				seq := uint64(i + 1)
				if e.Seq != seq || string(e.Data) != string(crashPayload(w, seq)) {
					t.Fatalf("round %d: writer %d entry %d is torn or misplaced: Seq %d, %.40q", round, w, seq, e.Seq, e.Data)
				}
			}
		}
	}
}

// runAndKill starts the child on target, SIGKILLs it once it has
// acknowledged n entries, and returns the highest acknowledged sequence
// number of each writer.
func runAndKill(t *testing.T, childTest, target string, n int) map[int]uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+childTest+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), CrashEnv+"="+target)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[int]uint64{}
	sc := bufio.NewScanner(stdout)
	count, killed := 0, false
	for sc.Scan() {
		var w int
		var seq uint64
		if _, err := fmt.Sscanf(sc.Text(), "ack %d %d", &w, &seq); err != nil {
			t.Errorf("child: %s", sc.Text())
			continue
		}
		acked[w] = max(acked[w], seq)
		count++
		if count == n && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true // keep reading: lines already written were acknowledged
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited before %d acks: %v", n, err)
	}
	return acked
}
