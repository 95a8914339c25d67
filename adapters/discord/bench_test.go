package discord

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/adaptertest"
	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/core"
)

// BenchmarkEventToSubmit measures a MESSAGE_CREATE in a known thread from
// the fake's dispatch to the hub's Submit (the platform's "ack"): read off
// the gateway, filtered, queued, turned into an Inbound (budget: p99 <= 5 ms).
func BenchmarkEventToSubmit(b *testing.B) {
	e := start(b, nil)
	th := e.discord.AddThread(discordtest.ChannelID, "bench")
	e.threads.Add(core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID})
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	e.hub.OnTurn(func(_ context.Context, in core.Inbound) {
		mu.Lock()
		arrived[in.EventID] = time.Now()
		mu.Unlock()
	})
	sent := make(map[string]time.Time, b.N)
	b.ResetTimer()
	for i := range b.N {
		d := e.discord.Message(discordtest.Msg{User: "111", Channel: th.ID, Text: fmt.Sprint("hi ", i)})
		sent[d.ID] = d.Sent
		e.hub.Wait(e.ctx, b, i+1)
	}
	b.StopTimer()
	e.hub.WaitTurns(b)
	lat := make([]time.Duration, 0, b.N)
	mu.Lock()
	for id, at := range arrived {
		lat = append(lat, at.Sub(sent[id]))
	}
	mu.Unlock()
	adaptertest.ReportPercentiles(b, lat)
}

// BenchmarkClickToResponse measures a button click from the fake's
// dispatch to the interaction's first response (Discord allows 3 s): the
// decision is recorded and the message updated in one response.
func BenchmarkClickToResponse(b *testing.B) {
	e := start(b, nil)
	thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: discordtest.ChannelID}
	lat := make([]time.Duration, 0, b.N)
	var seenGates []string
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		done := make(chan core.GateAnswer, 1)
		req := core.GateRequest{IntentID: fmt.Sprint("bench-", i), NodeID: "n1", Question: "ok?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}}
		go func() { done <- core.Ask(e.ctx, e.a.Approver(thread, "111"), req) }()
		msg, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool {
			return m.FromBot() && len(m.Buttons()) == 2 && !slices.Contains(seenGates, m.ID)
		})
		if err != nil {
			b.Fatal(err)
		}
		seenGates = append(seenGates, msg.ID)
		b.StartTimer()
		d := e.discord.Click("111", msg, 0)
		r, err := e.discord.WaitResponse(e.ctx, d)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, r.At.Sub(r.Sent))
		b.StopTimer()
		<-done
		b.StartTimer()
	}
	b.StopTimer()
	adaptertest.ReportPercentiles(b, lat)
}

// BenchmarkSplit measures splitting a long answer under 2,000 characters.
func BenchmarkSplit(b *testing.B) {
	src := adaptertest.LongAnswer()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		_ = split(src, sayLimit)
	}
}
