package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/core/delegate/delegatetest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// discordWorld is everything a Discord end-to-end test talks to: a fake
// Discord, a scripted model, a fake execution daemon, and neobot's settings.
type discordWorld struct {
	discord *discordtest.Server
	model   *llmtest.Server
	daemon  *delegatetest.Server
	env     map[string]string
}

const discordE2EToken = "MTE2.e2e-discord.bot-token"

func newDiscordWorld(t *testing.T) *discordWorld {
	t.Helper()
	w := &discordWorld{discord: discordtest.New(t), model: llmtest.New(t), daemon: delegatetest.New(t)}
	w.discord.RequireToken(discordE2EToken)
	w.daemon.RequireToken("daemon-token")
	w.env = map[string]string{
		"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": w.model.BaseURL(),
		"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_MANIFEST": emptyManifest(t),
		"NEO_DAEMON_URL": w.daemon.URL(), "NEO_DAEMON_TOKEN": "daemon-token", "NEO_DAEMON_POLL": "20ms",
		"DISCORD_BOT_TOKEN": discordE2EToken, "DISCORD_API_URL": w.discord.URL(),
		// User 111 may ask for spends and approve their own; 333 approves.
		"DISCORD_SPEND_USERS": "111", "DISCORD_APPROVERS": "333", "NEO_SELF_APPROVE": "true",
	}
	return w
}

// start runs neobot against the world and waits until it is connected to
// the gateway (the n-th gateway session of this world) and heartbeating.
func (w *discordWorld) start(t *testing.T, n int) *process {
	t.Helper()
	p := start(t, w.env)
	ctx := waitCtx(t)
	for {
		if err := w.discord.WaitConnected(ctx); err != nil {
			t.Fatalf("neobot never connected to Discord: %v\n%s", err, p.output.String())
		}
		if w.discord.Connections() >= n {
			// The n-th session replaced any earlier one, so the connection
			// WaitConnected saw heartbeating is this process's.
			if err := w.discord.WaitConnected(ctx); err != nil {
				t.Fatalf("neobot never connected to Discord: %v\n%s", err, p.output.String())
			}
			return p
		}
		select {
		case <-ctx.Done():
			t.Fatalf("neobot never opened gateway session %d\n%s", n, p.output.String())
		case <-p.done:
			t.Fatalf("neobot exited: %v\n%s", p.err, p.output.String())
		case <-time.After(10 * time.Millisecond): // polling the fake's counter, not timing the bot
		}
	}
}

// answerIn waits for a visible bot message in channel containing want.
func (w *discordWorld) answerIn(t *testing.T, channel, want string) discordtest.Message {
	t.Helper()
	m, err := w.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && !m.Ephemeral && m.ChannelID == channel && strings.Contains(m.Content, want)
	})
	if err != nil {
		t.Fatalf("no answer %q in %s: %v\nmessages: %+v", want, channel, err, w.discord.Messages())
	}
	return m
}

// TestDiscordConversation: a mention gets an answer in a new thread; a
// follow-up in the thread without a mention continues from the stored
// transcript; a DM works.
func TestDiscordConversation(t *testing.T) {
	w := newDiscordWorld(t)
	scriptModel(t, w.model,
		llmtest.Text("Hello! I'm Neo."),
		llmtest.Text("You asked me who I am."),
		llmtest.Text("Hi in private."),
	)
	p := w.start(t, 1)

	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "who are you?"})
	w.answerIn(t, mention.ID, "Hello! I'm Neo.")
	if th, ok := w.discord.Channel(mention.ID); !ok || th.ParentID != discordtest.ChannelID {
		t.Errorf("answer's channel = %+v, want a thread started from the mention in #general", th)
	}

	w.discord.Message(discordtest.Msg{User: "111", Channel: mention.ID, Text: "what did I just ask?"})
	w.answerIn(t, mention.ID, "You asked me who I am.")
	calls := mainRequests(w.model)
	if len(calls) < 2 {
		t.Fatalf("model calls = %d, want 2", len(calls))
	}
	var history []string
	for _, m := range calls[1].Messages {
		history = append(history, m.Role+": "+m.Content)
	}
	joined := strings.Join(history, "\n")
	if !strings.Contains(joined, "who are you?") || !strings.Contains(joined, "Hello! I'm Neo.") {
		t.Errorf("follow-up's model call lacks the thread so far:\n%s", joined)
	}
	if n := len(w.discord.Calls("GET /channels/{channel}/messages")); n != 0 {
		t.Errorf("thread history fetched %d times; the transcript must come from the store", n)
	}

	dm := w.discord.DM(discordtest.Msg{User: "222", Text: "hello"})
	w.answerIn(t, dm.ChannelID, "Hi in private.")
	if n := len(mainRequests(w.model)); n != 3 {
		t.Errorf("model calls = %d, want 3", n)
	}
	p.stop(t)
	if strings.Contains(p.output.String(), discordE2EToken) {
		t.Errorf("neobot's log leaks the Discord token")
	}
}

// askSpend starts neobot, scripted to delegate a spend of 5 PAX whose
// daemon gate asks "approve" or "deny" and then settles, has user 111 ask
// for it, and returns the process, the mention and the approval message.
func (w *discordWorld) askSpend(t *testing.T) (*process, discordtest.Delivery, discordtest.Message) {
	t.Helper()
	w.daemon.Script(delegatetest.Intent{
		Gates:  []delegatetest.Gate{{NodeID: "n1", Question: "Approve spend of 5 PAX to 0xabc?", Options: []string{"approve", "deny"}}},
		Answer: "settled: tx 0xfeed",
	})
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 5 PAX to 0xabc"}`)),
		llmtest.Text("Done: 5 PAX sent (tx 0xfeed)."),
	)
	p := w.start(t, 1)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "send 5 PAX to 0xabc"})
	gate, err := w.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && len(m.Buttons()) == 2 && strings.Contains(m.Content, "Approve spend of 5 PAX")
	})
	if err != nil {
		t.Fatalf("no approval message: %v\n%s", err, p.output.String())
	}
	return p, mention, gate
}

// TestDiscordApproval: a spend asks for approval with buttons in the
// thread; another user's click is refused privately and changes nothing;
// the requester's click completes the spend and the message shows who
// decided.
func TestDiscordApproval(t *testing.T) {
	w := newDiscordWorld(t)
	_, mention, gate := w.askSpend(t)
	if gate.ChannelID != mention.ID {
		t.Errorf("approval posted in %s, want the mention's thread %s", gate.ChannelID, mention.ID)
	}

	// 222 is neither the requester nor an approver: refused in private.
	refused, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("222", gate, 0))
	if err != nil {
		t.Fatal(err)
	}
	if refused.Flags&discordtest.FlagEphemeral == 0 || !strings.Contains(refused.Content, "can't approve this") {
		t.Errorf("response to 222's click = %+v, want a private refusal", refused)
	}
	if len(w.daemon.Answers()) != 0 {
		t.Fatalf("222's click answered the gate: %+v", w.daemon.Answers())
	}

	if _, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("111", gate, 0)); err != nil {
		t.Fatal(err)
	}
	w.answerIn(t, mention.ID, "Done: 5 PAX sent (tx 0xfeed).")
	answers := w.daemon.Answers()
	if len(answers) != 1 || !answers[0].Approved {
		t.Errorf("daemon answers = %+v, want one approval", answers)
	}
	decided, ok := w.discord.MessageByID(gate.ID)
	if !ok || len(decided.Buttons()) != 0 || !strings.Contains(decided.Content, "Approved (approve) by <@111>") {
		t.Errorf("approval message after the click = %q with %d buttons, want who decided and no buttons", decided.Content, len(decided.Buttons()))
	}
}
