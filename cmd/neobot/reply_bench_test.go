package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// BenchmarkReplyBinary measures the reply path through the built neobot
// binary, as a deployment runs it: the Slack fake over TLS (Socket Mode on
// wss://), a model answering at once, the npm filesystem MCP server in the
// manifest, info logging. Each op is one mention in a new thread, sent
// when the previous one is answered. It reports reply p50/p99 (mention to
// answer posted), first-status p50, ack p99 (mention to Socket Mode ack,
// which waits for the journal's commit), the bot's CPU per reply (from
// /proc/<pid>/stat) and its peak RSS. `make bench-reply` runs it;
// NEO_BENCH_CPU_PROFILE=path also profiles the bot.
func BenchmarkReplyBinary(b *testing.B) {
	fake, env, p := startReplyBench(b)
	ctx := waitCtx(b)
	var replies, statuses, acks []time.Duration
	reply := func(i int) {
		ch := fmt.Sprintf("C%05d", i)
		sent := time.Now()
		d := fake.Mention(slacktest.Msg{User: "UBENCH", Channel: ch, Text: "hi"})
		m, err := fake.WaitMessage(ctx, func(m slacktest.Message) bool {
			return m.Channel == ch && m.ThreadTS == d.TS && m.FromBot() && m.Rendered() == "ok"
		})
		if err != nil {
			b.Fatalf("no reply in %s: %v", ch, err)
		}
		_ = m
		a, err := fake.WaitAck(ctx, d)
		if err != nil {
			b.Fatalf("mention in %s never acked: %v", ch, err)
		}
		acks = append(acks, a.At.Sub(d.Sent))
		var first, answered time.Time
		for _, c := range fake.Calls("") {
			if c.Params.Get("channel") != ch {
				continue
			}
			if first.IsZero() && (c.Method == "chat.postMessage" || c.Method == "assistant.threads.setStatus") {
				first = c.At
			}
			if strings.Contains(c.Params.Get("text")+c.Params.Get("markdown_text"), "ok") {
				answered = c.At
			}
		}
		statuses = append(statuses, first.Sub(sent))
		replies = append(replies, answered.Sub(sent))
	}
	for i := range 20 { // warm up: the first answers are not streamed
		reply(-1 - i)
	}
	replies, statuses, acks = nil, nil, nil
	cpu0 := procCPU(b, p.cmd.Process.Pid)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		reply(i)
	}
	b.StopTimer()
	cpu := procCPU(b, p.cmd.Process.Pid) - cpu0
	slices.Sort(replies)
	slices.Sort(statuses)
	slices.Sort(acks)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(replies[len(replies)/2]), "reply-p50-ms")
	b.ReportMetric(ms(replies[len(replies)*99/100]), "reply-p99-ms")
	b.ReportMetric(ms(statuses[len(statuses)/2]), "first-status-p50-ms")
	b.ReportMetric(ms(acks[len(acks)*99/100]), "ack-p99-ms")
	b.ReportMetric(ms(cpu/time.Duration(len(replies))), "cpu-per-reply-ms")
	b.ReportMetric(float64(procHWM(b, p.cmd.Process.Pid))/1024, "peak-RSS-MB")
	if info, err := os.Stat(env["NEO_DB_PATH"]); err == nil {
		b.ReportMetric(float64(info.Size())/float64(len(replies)+20)/1024, "store-KB-per-turn")
	}
	p.cmd.Process.Signal(os.Interrupt)
	<-p.done
	if keep := os.Getenv("NEO_BENCH_DB"); keep != "" { // for a look at what a turn stores
		if raw, err := os.ReadFile(env["NEO_DB_PATH"]); err == nil {
			_ = os.WriteFile(keep, raw, 0o644)
		}
	}
	if os.Getenv("NEO_BENCH_LOG") != "" {
		_ = os.WriteFile(os.Getenv("NEO_BENCH_LOG"), []byte(p.output.String()), 0o644)
	}
}

// startReplyBench starts the built neobot the way the reply benchmarks
// measure it: the Slack fake over TLS (Socket Mode on wss://, the
// certificate trusted through SSL_CERT_FILE), a model answering "ok" at
// once, the npm filesystem MCP server in the manifest, info logging. It
// returns once neobot is connected to the fake.
func startReplyBench(b *testing.B) (*slacktest.Server, map[string]string, *process) {
	fake := slacktest.NewTLSServer()
	b.Cleanup(fake.Close)
	cert := filepath.Join(b.TempDir(), "slack.pem")
	if err := os.WriteFile(cert, fake.CertPEM(), 0o644); err != nil {
		b.Fatal(err)
	}
	model := llmtest.New(b)
	model.Unrecorded() // a sustained run sends tens of thousands
	model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		return llmtest.Text("ok")
	})
	dir := b.TempDir()
	bin := filepath.Join("..", "..", "node_modules", ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(bin); err != nil {
		b.Skipf("%s is missing: run make test first (it installs the pinned MCP servers)", bin)
	}
	abs, _ := filepath.Abs(bin)
	manifest := filepath.Join(b.TempDir(), "manifest.json")
	spec := fmt.Sprintf(`{"did":"did:web:neobot.test:agents:bench","servers":[{"alias":"fs","transport":"stdio","command":%q,"args":[%q],"version":"2026.8.31","side_effects":"read","tool_side_effects":{"write_file":"write","edit_file":"write","create_directory":"write","move_file":"write"},"tools":["create_directory","directory_tree","edit_file","get_file_info","list_allowed_directories","list_directory","list_directory_with_sizes","move_file","read_file","read_media_file","read_multiple_files","read_text_file","search_files","write_file"]}]}`, abs, dir)
	if err := os.WriteFile(manifest, []byte(spec), 0o644); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{
		"NEO_MODEL": "bench", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": model.BaseURL(),
		"NEO_DB_PATH": filepath.Join(b.TempDir(), "neobot.db"), "NEO_MANIFEST": manifest,
		"SLACK_BOT_TOKEN": "xoxb-bench", "SLACK_APP_TOKEN": "xapp-bench", "SLACK_API_URL": fake.APIURL(),
		"SSL_CERT_FILE": cert, "NEO_LOG_LEVEL": "info", "NEO_LOG_FORMAT": "json",
		// The benchmarks measure the bot, driven by a few users far past
		// one person's share.
		"NEO_USER_MESSAGES_PER_MINUTE": "0", "NEO_USER_BYTES_PER_DAY": "0",
	}
	if path := os.Getenv("NEO_BENCH_CPU_PROFILE"); path != "" {
		env["NEO_CPU_PROFILE"] = path // the bot's own profile, for go tool pprof
	}
	if path := os.Getenv("NEO_BENCH_HEAP"); path != "" {
		env["NEO_HEAP_PROFILE"] = path // the bot's live heap when it stops
	}
	p := start(b, env)
	if err := fake.WaitConnected(waitCtx(b)); err != nil {
		b.Fatalf("neobot never connected to the Slack fake: %v\n%s", err, p.output.String())
	}
	return fake, env, p
}

// procCPU is the process's user plus system CPU time so far.
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}

// procHWM is the process's peak resident set, in KiB.
func procHWM(b *testing.B, pid int) int64 { return procStatus(b, pid, "VmHWM") }

// procRSS is the process's resident set now, in KiB.
func procRSS(b *testing.B, pid int) int64 { return procStatus(b, pid, "VmRSS") }

// procStatus reads one KiB figure of /proc/<pid>/status.
func procStatus(b *testing.B, pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}
