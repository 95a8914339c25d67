package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/store"
)

// floodMessages is how many 32 KiB messages the flooding web user posts.
const floodMessages = 5000

// TestWebFlood: one web token posts 32 KiB messages as fast as four
// connections allow, and opens more event streams than it may. Every
// request past the user's share is answered 429 with Retry-After and a
// JSON error naming the limit; the process stays under 150 MB (peak RSS)
// and the database grows by less than 5 MB, and refused messages leave no
// record in it; meanwhile another web user's
// turns and a Slack user's turns are answered, and a Slack user who
// floods is told in words, once, to slow down.
func TestWebFlood(t *testing.T) {
	sw := newSlackWorld(t)
	addr := freeAddr(t)
	ww := &webWorld{base: "http://" + addr, env: sw.env}
	var users []string
	for _, name := range []string{"alice", "bob"} {
		token, hash, err := web.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, name+"="+hash)
		if name == "alice" {
			ww.alice = token
		} else {
			ww.bob = token
		}
	}
	env := sw.env
	env["NEO_WEB_ADDR"], env["NEO_WEB_USERS"] = addr, strings.Join(users, ",")
	ping := regexp.MustCompile(`ping-[a-z0-9-]+`)
	sw.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		last := r.Messages[len(r.Messages)-1].Content
		if tag := ping.FindString(last); tag != "" {
			return llmtest.Text(strings.Replace(tag, "ping", "pong", 1) + " answered")
		}
		return llmtest.Text("ok")
	})
	p := sw.start(t, 1)
	waitHTTP(t, ww.base+"/v1/openapi.json", p)
	db := env["NEO_DB_PATH"]
	before := fileSize(t, db)

	// Bob keeps a conversation open, as a browser would.
	var conv struct{ ID string }
	if got := ww.call(t, ww.bob, "POST", "/v1/conversations", map[string]any{}, &conv); got != http.StatusCreated {
		t.Fatalf("bob's conversation: %d", got)
	}
	bob := ww.follow(t, ww.bob, conv.ID, "")

	// Alice floods.
	big := strings.Repeat("x", 32<<10-64)
	var (
		mu       sync.Mutex
		accepted int
		wrong    []string
	)
	var flood sync.WaitGroup
	next := make(chan int)
	for range 4 {
		flood.Go(func() {
			client := &http.Client{}
			for i := range next {
				body, _ := json.Marshal(map[string]string{"message": fmt.Sprintf("flood %d %s", i, big)})
				req, _ := http.NewRequest("POST", ww.base+"/v1/conversations", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+ww.alice)
				res, err := client.Do(req)
				if err != nil {
					mu.Lock()
					wrong = append(wrong, err.Error())
					mu.Unlock()
					continue
				}
				var e struct {
					Error      string `json:"error"`
					Limit      string `json:"limit"`
					RetryAfter int    `json:"retry_after"`
				}
				_ = json.NewDecoder(res.Body).Decode(&e)
				res.Body.Close()
				mu.Lock()
				switch {
				case res.StatusCode == http.StatusCreated:
					accepted++
				case res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || e.Limit == "" || e.Error == "" || strconv.Itoa(e.RetryAfter) != res.Header.Get("Retry-After"):
					wrong = append(wrong, fmt.Sprintf("%d Retry-After %q %+v", res.StatusCode, res.Header.Get("Retry-After"), e))
				}
				mu.Unlock()
			}
		})
	}
	began := time.Now()
	go func() {
		defer close(next)
		for i := range floodMessages {
			next <- i
		}
	}()

	// Throughout, Bob and a Slack user are answered.
	for i := range 3 {
		tag := fmt.Sprintf("ping-bob-%d", i)
		if got := ww.call(t, ww.bob, "POST", "/v1/conversations/"+conv.ID+"/messages", map[string]string{"text": tag}, nil); got != http.StatusAccepted {
			t.Errorf("bob's message %d during the flood: %d, want 202", i, got)
		}
		if e, _ := bob.next(t, web.EventAnswer); !strings.Contains(text(e), "pong-bob-"+strconv.Itoa(i)) {
			t.Errorf("bob's answer %d = %q", i, text(e))
		}
		m := sw.slack.Mention(slacktest.Msg{User: "UALICE", Text: fmt.Sprintf("ping-slack-%d", i)})
		sw.answerIn(t, "C0GENERAL", m.TS, fmt.Sprintf("pong-slack-%d", i))
	}
	flood.Wait()
	flooded := time.Since(began)

	// Alice's streams: four at most.
	var own struct{ ID string }
	if got := ww.call(t, ww.alice, "POST", "/v1/conversations", map[string]any{}, &own); got != http.StatusCreated {
		t.Fatalf("alice's empty conversation: %d", got)
	}
	var open []*http.Response
	limited := 0
	for range 6 {
		req, _ := http.NewRequest("GET", ww.base+"/v1/conversations/"+own.ID+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+ww.alice)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case res.StatusCode == http.StatusOK:
			open = append(open, res)
		case res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") != "":
			limited++
			res.Body.Close()
		default:
			t.Errorf("stream: %d", res.StatusCode)
			res.Body.Close()
		}
	}
	if len(open) != 4 || limited != 2 {
		t.Errorf("alice opened %d streams and was refused %d, want 4 and 2", len(open), limited)
	}
	for _, res := range open {
		res.Body.Close()
	}

	// A Slack user who floods is told once, in words.
	for i := range 25 {
		sw.slack.Mention(slacktest.Msg{User: "UCAROL", Text: fmt.Sprintf("carol %d", i)})
	}
	if _, err := sw.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == "UCAROL" && strings.Contains(m.Text, "slow down")
	}); err != nil {
		t.Errorf("carol was never asked to slow down: %v", err)
	}
	// After the flood, both are still answered.
	if got := ww.call(t, ww.bob, "POST", "/v1/conversations/"+conv.ID+"/messages", map[string]string{"text": "ping-bob-last"}, nil); got != http.StatusAccepted {
		t.Errorf("bob's last message: %d", got)
	}
	if e, _ := bob.next(t, web.EventAnswer); !strings.Contains(text(e), "pong-bob-last") {
		t.Errorf("bob's last answer = %q", text(e))
	}
	m := sw.slack.Mention(slacktest.Msg{User: "UALICE", Text: "ping-slack-last"})
	sw.answerIn(t, "C0GENERAL", m.TS, "pong-slack-last")

	mu.Lock()
	// The minute's 20 at once, then one every three seconds.
	if allowed := 20 + int(flooded/(3*time.Second)) + 1; accepted > allowed || accepted == 0 {
		t.Errorf("alice's flood: %d messages taken in %v, want the minute's 20 and one every 3s at most (%d)", accepted, flooded, allowed)
	}
	if len(wrong) > 0 {
		t.Errorf("%d flood requests were answered other than 201 or 429 with Retry-After and the limit, e.g. %s", len(wrong), wrong[0])
	}
	mu.Unlock()
	ephemerals := 0
	for _, m := range sw.slack.Messages() {
		if m.Ephemeral && m.Recipient == "UCAROL" && strings.Contains(m.Text, "slow down") {
			ephemerals++
		}
	}
	if ephemerals != 1 {
		t.Errorf("carol was asked to slow down %d times, want once", ephemerals)
	}
	rss, hwm := procMemory(t, p.cmd.Process.Pid)
	grown := fileSize(t, db) - before
	t.Logf("flood of %d messages of 32 KiB in %v: %d taken; VmRSS %d kB, VmHWM %d kB; database grew %d bytes", floodMessages, flooded.Round(time.Millisecond), accepted, rss, hwm, grown)
	if hwm > 150<<10 {
		t.Errorf("peak RSS %d kB, want under 150 MB", hwm)
	}
	if grown >= 5<<20 {
		t.Errorf("the database grew %d bytes, want under 5 MB", grown)
	}
	p.stop(t)

	// A refused message leaves nothing behind: the journal holds the
	// messages taken (Alice's, Bob's four, the Slack users' 29 at most)
	// and no record of the thousands refused.
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if others := 4 + 4 + 25; c.Inbound > accepted+others || c.Threads > accepted+others+2 {
		t.Errorf("after %d refused messages the store holds %d journal records and %d threads, want at most %d and %d (the messages taken)", floodMessages-accepted, c.Inbound, c.Threads, accepted+others, accepted+others+2)
	}
}

// procMemory reads the resident and peak resident set sizes of pid, in kB.
func procMemory(t *testing.T, pid int) (rss, hwm int64) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read the process status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return fi.Size()
}
