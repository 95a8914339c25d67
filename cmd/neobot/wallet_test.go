package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/neobot/neobot/core/mcp"
)

// The wallet is an MCP server written for the spend tests: the test
// binary serves it over stdio when NEOBOT_WALLET_LOG names its log (see
// TestMain). Every call is appended to the log, synced, as a JSON line:
// "begin" before a transfer moves anything, "end" after. While the file
// NEOBOT_WALLET_HOLD names exists, a transfer waits inside the call, for
// a test to kill neobot mid-transfer.

// walletEntry is one line of the wallet's log.
type walletEntry struct {
	Event string         `json:"event"` // start, begin, end, balance
	Tool  string         `json:"tool"`
	Args  map[string]any `json:"args,omitempty"`
	// Key is the call's _meta idempotency_key.
	Key string `json:"key,omitempty"`
	// PID is the wallet's process ID, on its start line.
	PID int `json:"pid,omitempty"`
}

// serveWallet serves the wallet on stdin/stdout until stdin ends; while
// the file down names exists, it exits at once, as a server that cannot
// start.
func serveWallet(logPath, hold, down string) int {
	if _, err := os.Stat(down); down != "" && err == nil {
		fmt.Fprintln(os.Stderr, "wallet: down for maintenance")
		return 2
	}
	log, err := openJSONLog(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	write := func(e walletEntry) error { return log.write(e) }
	if err := write(walletEntry{Event: "start", PID: os.Getpid()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// pause holds a call inside the tool while the hold file exists.
	pause := func() {
		for hold != "" {
			if _, err := os.Stat(hold); errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(5 * time.Millisecond) // the wallet's own pause, not a test's wait
		}
	}
	srv := mcp.NewServer("wallet", "1.0.0",
		mcp.ServerTool{Name: "write_note", Description: "Write a note in the wallet's notebook.", InputSchema: map[string]any{
			"type": "object", "required": []string{"text"}, "properties": map[string]any{"text": map[string]any{"type": "string"}},
		}, Handle: func(_ context.Context, args map[string]any) (mcp.Result, error) {
			if err := write(walletEntry{Event: "begin", Tool: "write_note", Args: args}); err != nil {
				return mcp.Result{}, err
			}
			pause()
			return mcp.TextResult("noted"), write(walletEntry{Event: "end", Tool: "write_note", Args: args})
		}},
		mcp.ServerTool{Name: "balance", Description: "The wallet's balance.", Handle: func(context.Context, map[string]any) (mcp.Result, error) {
			return mcp.TextResult("balance: 1000 USDC"), write(walletEntry{Event: "balance", Tool: "balance"})
		}},
		mcp.ServerTool{Name: "transfer", Description: "Send money from the wallet to a recipient.", InputSchema: map[string]any{
			"type": "object", "required": []string{"amount", "currency", "recipient"},
			"properties": map[string]any{
				"amount":          map[string]any{"type": "number", "exclusiveMinimum": 0},
				"currency":        map[string]any{"type": "string", "enum": []string{"USDC"}},
				"recipient":       map[string]any{"type": "string", "minLength": 1},
				"idempotency_key": map[string]any{"type": "string", "description": "Makes a retried transfer happen once."},
			},
		}, Handle: func(ctx context.Context, args map[string]any) (mcp.Result, error) {
			key, _ := mcp.MetaFrom(ctx)["idempotency_key"].(string)
			if err := write(walletEntry{Event: "begin", Tool: "transfer", Args: args, Key: key}); err != nil {
				return mcp.Result{}, err
			}
			pause()
			if err := write(walletEntry{Event: "end", Tool: "transfer", Args: args, Key: key}); err != nil {
				return mcp.Result{}, err
			}
			return mcp.TextResult(fmt.Sprintf("sent %v %v to %v, tx 0x%x", args["amount"], args["currency"], args["recipient"], len(key)*7919)), nil
		}},
	)
	if err := srv.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
		return 1
	}
	return 0
}

// wallet is a test's handle on the wallet's log.
type wallet struct {
	log, hold, down string
}

func newWallet(t testing.TB) *wallet {
	dir := t.TempDir()
	return &wallet{log: filepath.Join(dir, "wallet.log"), hold: filepath.Join(dir, "hold"), down: filepath.Join(dir, "down")}
}

// spec is the wallet's manifest entry: the server declares every tool
// read, and transfer is spend by its name.
func (w *wallet) spec() map[string]any {
	exe, _ := os.Executable()
	return map[string]any{
		"alias": "wallet", "transport": "stdio", "command": exe, "version": "1.0.0",
		"env": []string{"NEOBOT_WALLET_LOG=$env:NEOBOT_WALLET_LOG", "NEOBOT_WALLET_HOLD=$env:NEOBOT_WALLET_HOLD",
			"NEOBOT_WALLET_DOWN=$env:NEOBOT_WALLET_DOWN"},
		"tools": []string{"balance", "transfer", "write_note"}, "side_effects": "read",
		"tool_side_effects": map[string]string{"write_note": "write"},
	}
}

// setEnv adds what the wallet's manifest entry reads to neobot's
// environment.
func (w *wallet) setEnv(env map[string]string) {
	env["NEOBOT_WALLET_LOG"], env["NEOBOT_WALLET_HOLD"], env["NEOBOT_WALLET_DOWN"] = w.log, w.hold, w.down
}

// manifest writes a manifest with the wallet alone.
func (w *wallet) manifest(t *testing.T) string {
	return writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{w.spec()}})
}

// entries reads the log.
func (w *wallet) entries(t testing.TB) []walletEntry { return readJSONLog[walletEntry](t, w.log) }

// transfers returns the transfers begun, by idempotency key.
func (w *wallet) transfers(t testing.TB) map[string]int {
	out := map[string]int{}
	for _, e := range w.entries(t) {
		if e.Event == "begin" && e.Tool == "transfer" {
			out[e.Key]++
		}
	}
	return out
}

// calls counts the calls of tool that began and ended.
func (w *wallet) calls(t testing.TB, tool string) (began, ended int) {
	for _, e := range w.entries(t) {
		switch {
		case e.Tool != tool:
		case e.Event == "begin":
			began++
		case e.Event == "end":
			ended++
		}
	}
	return began, ended
}

// wait waits until n calls of tool have reached event (begin or end).
func (w *wallet) wait(t testing.TB, ctx context.Context, tool, event string, n int) {
	t.Helper()
	for {
		began, ended := w.calls(t, tool)
		got := began
		if event == "end" {
			got = ended
		}
		if got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d calls of %s reached %s, want %d", got, tool, event, n)
		case <-time.After(5 * time.Millisecond): // polling a file, not timing the bot
		}
	}
}

// total is how many transfers began.
func total(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// started waits until the wallet has started n times and returns the
// process ID of its n-th start.
func (w *wallet) started(t testing.TB, ctx context.Context, n int) int {
	t.Helper()
	for {
		var pids []int
		for _, e := range w.entries(t) {
			if e.Event == "start" {
				pids = append(pids, e.PID)
			}
		}
		if len(pids) >= n {
			return pids[n-1]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the wallet started %d times, want %d", len(pids), n)
		case <-time.After(5 * time.Millisecond): // polling a file, not timing the bot
		}
	}
}
