package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// BenchmarkBootBinary starts the built neobot with two npm MCP servers
// in the manifest (filesystem and everything) and times, per start, how
// long until it is connected to Slack, and how long its slowest MCP
// server took to come up (from the bot's own "mcp server up" log line).
// The goal is boot within the slowest server + 50 ms: everything else
// (the store, the model client, Slack's connection) happens meanwhile.
func BenchmarkBootBinary(b *testing.B) {
	fs, every := repoBinB(b, "mcp-server-filesystem"), repoBinB(b, "mcp-server-everything")
	fake := slacktest.New(b)
	model := llmtest.New(b)
	dir := b.TempDir()
	spec := fmt.Sprintf(`{"did":"did:web:neobot.test:agents:bench","servers":[
		{"alias":"fs","transport":"stdio","command":%q,"args":[%q],"version":"2026.8.31","side_effects":"read","tool_side_effects":{"write_file":"write","edit_file":"write","create_directory":"write","move_file":"write"},"tools":["create_directory","directory_tree","edit_file","get_file_info","list_allowed_directories","list_directory","list_directory_with_sizes","move_file","read_file","read_media_file","read_multiple_files","read_text_file","search_files","write_file"]},
		{"alias":"every","transport":"stdio","command":%q,"args":["stdio"],"version":"2026.8.31","side_effects":"read","tools":["echo","get-annotated-message","get-env","get-resource-links","get-resource-reference","get-structured-content","get-sum","get-tiny-image","gzip-file-as-resource","toggle-simulated-logging","toggle-subscriber-updates","trigger-long-running-operation","simulate-research-query","trigger-elicitation-request","trigger-url-elicitation"]}]}`, fs, dir, every)
	manifest := filepath.Join(b.TempDir(), "manifest.json")
	if err := os.WriteFile(manifest, []byte(spec), 0o644); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{
		"NEO_MODEL": "bench", "NEO_LLM_BASE_URL": model.BaseURL(),
		"NEO_DB_PATH": filepath.Join(b.TempDir(), "neobot.db"), "NEO_MANIFEST": manifest,
		"SLACK_BOT_TOKEN": "xoxb-bench", "SLACK_APP_TOKEN": "xapp-bench", "SLACK_API_URL": fake.APIURL(),
		"NEO_LOG_LEVEL": "info", "NEO_LOG_FORMAT": "json",
	}
	var boots, slowest, over []time.Duration
	for i := 0; b.Loop(); i++ {
		sent := time.Now()
		p := start(b, env)
		for fake.Connections() <= i { // the i+1-th connection is this start's
			if err := fake.WaitConnected(waitCtx(b)); err != nil {
				b.Fatalf("neobot never connected: %v\n%s", err, p.output.String())
			}
		}
		boot := time.Since(sent)
		b.StopTimer()
		var s time.Duration
		for _, line := range strings.Split(p.output.String(), "\n") {
			var l struct {
				Message string  `json:"message"`
				Took    float64 `json:"took_ms"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Message == "mcp server up" {
				s = max(s, time.Duration(l.Took*float64(time.Millisecond)))
			}
		}
		if s == 0 {
			b.Fatalf("no MCP server came up:\n%s", p.output.String())
		}
		boots, slowest, over = append(boots, boot), append(slowest, s), append(over, boot-s)
		p.cmd.Process.Signal(os.Interrupt)
		<-p.done
		b.StartTimer()
	}
	ms := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	b.ReportMetric(ms(boots), "boot-p50-ms")
	b.ReportMetric(ms(slowest), "slowest-server-p50-ms")
	b.ReportMetric(ms(over), "boot-minus-slowest-p50-ms")
}

// repoBinB is the path of an npm server installed by make test.
func repoBinB(b *testing.B, name string) string {
	path, err := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin", name))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		b.Skipf("%s is missing: run make test first (it installs the pinned MCP servers)", path)
	}
	return path
}
