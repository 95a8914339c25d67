package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"
)

// jsonLog is what a test's MCP server (the wallet, the asker, the shop)
// records: one JSON line per entry, synced before write returns, so an
// entry written survives a kill of the server or of neobot.
type jsonLog struct {
	mu sync.Mutex
	f  *os.File
}

// openJSONLog opens the log at path for appending.
func openJSONLog(path string) (*jsonLog, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &jsonLog{f: f}, nil
}

// write appends v as one line and syncs it.
func (l *jsonLog) write(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return err
	}
	return l.f.Sync()
}

// Close closes the log.
func (l *jsonLog) Close() error { return l.f.Close() }

// readJSONLog reads the entries of the log at path: none when the file
// does not exist yet, and a line cut by a kill skipped.
func readJSONLog[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e T
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}
