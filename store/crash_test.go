package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

const crashEnv = "NEOBOT_STORE_CRASH_CHILD"

// crashPayload is the deterministic content of entry seq of writer w: a
// torn or misplaced entry cannot match it.
func crashPayload(w int, seq uint64) []byte {
	return fmt.Appendf(nil, "writer %d entry %d %s", w, seq, strings.Repeat(strconv.Itoa(int(seq%10)), 200))
}

func crashThread(w int) core.Thread {
	return core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: fmt.Sprintf("w%d", w)}
}

const crashWriters = 8

// TestCrashChild is the child of TestCrashKeepsAcknowledgedEntries: it
// appends forever and prints each acknowledged sequence number.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run as the child of TestCrashKeepsAcknowledgedEntries")
	}
	db, err := store.Open(path, store.Options{Writers: crashWriters})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for w := range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	wg.Wait()
}

func TestCrashKeepsAcknowledgedEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	// Each round kills the child at a different point, on a fresh file.
	for round, n := range []int{100, 250, 400} {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("crash%d.db", round))
		acked := runAndKill(t, path, n)
		db, err := store.Open(path, store.Options{})
		if err != nil {
			t.Fatalf("round %d: Open after SIGKILL = %v", round, err)
		}
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
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// runAndKill starts the child on path, SIGKILLs it once it has
// acknowledged n entries, and returns the highest acknowledged sequence
// number of each writer.
func runAndKill(t *testing.T, path string, n int) map[int]uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
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
		if seq > acked[w] {
			acked[w] = seq
		}
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
