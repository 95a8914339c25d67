package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestSlackPrivateFactsStayPrivate: what Alice says about herself in a
// private channel and in a group DM is recalled there, and never in a
// public channel: not in the profile the system block carries, not in
// memory_recall's answer, not in what she is shown. What she says in a
// public channel follows her everywhere, as before.
func TestSlackPrivateFactsStayPrivate(t *testing.T) {
	w := newSlackWorld(t)
	addr := freeAddr(t)
	token := "admin-e2e-token-" + strings.Repeat("x", 24)
	w.env["NEO_HEALTH_ADDR"], w.env["NEO_ADMIN_TOKEN"] = addr, token
	// A private channel made since 2021 has a C ID like any other: only
	// conversations.info, or a message event's channel_type, tells.
	w.slack.SetChannelType("C0LEADS", "group")
	w.slack.SetChannelType("C0TRIO", "mpim")

	facts := map[string]string{ // what Alice says -> what the cheap model finds in it
		"I work on the payments team":  "Alice works on the payments team",
		"I am interviewing at Initech": "Alice is interviewing at Initech",
		"I am moving to Lisbon":        "Alice is moving to Lisbon",
	}
	var mu sync.Mutex
	var recalls []llmtest.Request // the main model's calls that carry memory_recall's result
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if r.Model == cheapModel {
			if strings.Contains(r.Messages[0].Content, "UPDATE") { // reconcile: each fact is new
				return llmtest.Text(`{"ops":[{"fact":0,"op":"ADD"}]}`)
			}
			for said, fact := range facts {
				if strings.Contains(last.Content, said) {
					return llmtest.Text(`{"facts":[{"text":"` + fact + `","kind":"profile","about":"user"}]}`)
				}
			}
			return llmtest.Text(`{"facts":[]}`)
		}
		switch {
		case last.Role == llm.RoleTool:
			mu.Lock()
			recalls = append(recalls, r)
			mu.Unlock()
			return llmtest.Text("Here is what I remember:\n" + last.Content)
		case strings.Contains(last.Content, "what do you remember about me"):
			return llmtest.Calls(llmtest.Call("r1", "memory_recall", `{"query":"remember"}`))
		}
		return llmtest.Text("Noted.")
	})
	p := w.start(t, 1)
	defer p.stop(t)

	say := func(channel, text string) {
		t.Helper()
		m := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: channel, Text: "remember: " + text})
		w.answerIn(t, channel, m.TS, "Noted.")
		waitMemory(t, addr, token, facts[text])
	}
	say("C0GENERAL", "I work on the payments team")
	say("C0LEADS", "I am interviewing at Initech")
	say("C0TRIO", "I am moving to Lisbon")

	tests := []struct {
		name, channel string
		want, never   []string
	}{
		{"#general", "C0GENERAL", []string{"payments"}, []string{"Initech", "Lisbon"}},
		{"#random", "C0RANDOM", []string{"payments"}, []string{"Initech", "Lisbon"}},
		{"a private channel", "C0LEADS", []string{"payments", "Initech"}, []string{"Lisbon"}},
		{"a group DM", "C0TRIO", []string{"payments", "Lisbon"}, []string{"Initech"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: tc.channel, Text: "what do you remember about me?"})
			seen := w.finishedAnswer(t, tc.channel, m.TS, "Here is what I remember").Rendered()
			mu.Lock()
			r := recalls[len(recalls)-1]
			mu.Unlock()
			places := map[string]string{
				"what Alice is shown":    seen,
				"the system block":       r.Messages[0].Content,
				"memory_recall's result": r.Messages[len(r.Messages)-1].Content,
			}
			for where, text := range places {
				for _, word := range tc.never {
					if strings.Contains(text, word) {
						t.Errorf("%s in %s mentions %q:\n%s", where, tc.name, word, text)
					}
				}
			}
			for where, text := range places {
				for _, word := range tc.want {
					if !strings.Contains(text, word) {
						t.Errorf("%s in %s lacks %q:\n%s", where, tc.name, word, text)
					}
				}
			}
		})
	}
}

// waitMemory waits until the bot's admin API at addr lists a record of
// the fake workspace whose text is text: a turn's write-back lands after
// its answer.
func waitMemory(t *testing.T, addr, token, text string) {
	t.Helper()
	waitMemoryIn(t, addr, token, slacktest.TeamID, text)
}

// waitMemoryIn is waitMemory for the Slack workspace team.
func waitMemoryIn(t *testing.T, addr, token, team, text string) {
	t.Helper()
	ctx := waitCtx(t)
	u := "http://" + addr + "/admin/v1/memory?" + url.Values{"workspace": {team}}.Encode()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			var recs []struct {
				Text string `json:"text"`
			}
			err = json.NewDecoder(resp.Body).Decode(&recs)
			resp.Body.Close()
			for _, r := range recs {
				if err == nil && r.Text == text {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("memory never held %q", text)
		case <-time.After(20 * time.Millisecond): // polling the bot's memory, not timing it
		}
	}
}
