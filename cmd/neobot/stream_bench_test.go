package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// firstWordsAnswer is what the benchmarks' model streams.
const firstWordsAnswer = "Rotating the deploy key takes three steps, each one checked before the next."

// streamingStack builds the product as neobot does with the platform
// settings in kv and a model that streams every answer at about 40
// tokens/s (4 characters every 25 ms); began reports when the model began
// the latest answer.
func streamingStack(b *testing.B, ctx context.Context, kv map[string]string) (stack *bot, began func() time.Time) {
	var mu sync.Mutex
	var at time.Time
	stack, _ = newStack(b, ctx, kv, func(r llmtest.Request) llmtest.Reply {
		if !r.Stream {
			return llmtest.Text(`{"facts":[]}`) // memory write-back
		}
		mu.Lock()
		at = time.Now()
		mu.Unlock()
		return llmtest.Text(firstWordsAnswer).Streamed(4, 25*time.Millisecond)
	})
	return stack, func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
}

// runFirstWords runs the platform, warms the model client up (it streams
// once an answer showed its model does not open reasoning in the prompt),
// then times ask over b.N new threads and reports p50 and p99.
func runFirstWords(b *testing.B, ctx context.Context, stack *bot, connected func(context.Context) error,
	ask func(i int) (time.Duration, error)) {
	runCtx, stop := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- stack.platforms[0].run(runCtx) }()
	defer func() {
		stop()
		<-runDone
		stack.hub.Close(context.Background())
	}()
	if err := stack.hub.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if err := connected(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := ask(9999); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		d, err := ask(i)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "first-words-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "first-words-p99-ms")
}

// BenchmarkStreamFirstWordsSlack measures, through the whole product (the
// Slack fake over Socket Mode, hub, agent, bbolt, the streaming LLM
// client), how long after the model's first token of an answer its first
// words are visible in Slack; each op is one mention in a new thread. The
// figure includes the agent's hold-back: nothing shows until a step has
// written 24 characters, so a step that turns into tool calls shows
// nothing.
func BenchmarkStreamFirstWordsSlack(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := slacktest.New(b)
	stack, began := streamingStack(b, ctx, map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-load", "SLACK_APP_TOKEN": "xapp-load", "SLACK_API_URL": fake.APIURL(),
	})
	runFirstWords(b, ctx, stack, fake.WaitConnected, func(i int) (time.Duration, error) {
		ch := fmt.Sprintf("C%04d", i)
		d := fake.Mention(slacktest.Msg{User: "U1", Channel: ch, Text: "rotate?"})
		if _, err := fake.WaitMessage(ctx, func(m slacktest.Message) bool {
			return m.Channel == ch && m.ThreadTS == d.TS && m.Rendered() == firstWordsAnswer && !m.Streaming
		}); err != nil {
			return 0, err
		}
		// The first call that showed the words: chat.startStream when the
		// answer streams, chat.update of the status message when it is
		// said whole (the first answer, before the client streams).
		var shown slacktest.Call
		for _, c := range fake.Calls("") {
			words := c.Params.Get("markdown_text") + c.Params.Get("text")
			if c.Params.Get("channel") == ch && strings.Contains(words, "Rotating the deploy key") && (shown.At.IsZero() || c.At.Before(shown.At)) {
				shown = c
			}
		}
		return shown.At.Sub(began()), nil
	})
}

// BenchmarkStreamFirstWordsDiscord is BenchmarkStreamFirstWordsSlack on
// the Discord fake: each op is one mention, answered in the thread it
// starts.
func BenchmarkStreamFirstWordsDiscord(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := discordtest.New(b)
	stack, began := streamingStack(b, ctx, map[string]string{
		"DISCORD_BOT_TOKEN": "bench-token", "DISCORD_API_URL": fake.URL(),
	})
	runFirstWords(b, ctx, stack, fake.WaitConnected, func(i int) (time.Duration, error) {
		d := fake.Mention(discordtest.Msg{User: "111", Text: "rotate?"})
		shown, err := fake.WaitCall(ctx, "PATCH /channels/{channel}/messages/{message}", func(c discordtest.Call) bool {
			return strings.Contains(c.Path, "/channels/"+d.ID+"/") && strings.Contains(string(c.Body), `"content":"Rotating the deploy key`)
		})
		if err != nil {
			return 0, err
		}
		if _, err := fake.WaitMessage(ctx, func(m discordtest.Message) bool {
			return m.ChannelID == d.ID && m.Content == firstWordsAnswer
		}); err != nil {
			return 0, err
		}
		return shown.At.Sub(began()), nil
	})
}
