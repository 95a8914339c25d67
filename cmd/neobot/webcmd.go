package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"

	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/agent"
)

// defaultWebAddr is where neobot web serves when NEO_WEB_ADDR is unset:
// this machine only.
const defaultWebAddr = "127.0.0.1:8080"

// runWeb is `neobot web`: the bot with the web API and chat page on
// (NEO_WEB_ADDR, or this machine's port 8080), printing a one-time link
// that signs the operator in, so trying Neo needs no Slack or Discord app.
// `neobot web token NAME` makes a token for a web user instead.
func (m *Main) runWeb(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "token" {
		if len(args) != 2 {
			return errors.New("usage: neobot web token NAME")
		}
		return m.webToken(args[1])
	}
	var user *string
	cfg, _, log, err := m.setup("neobot web", args, func(fs *flag.FlagSet) {
		user = fs.String("user", "me", "the web user the printed login link signs in")
	})
	if err != nil {
		return err
	}
	cfg.WebAddr = cmp.Or(cfg.WebAddr, defaultWebAddr)
	return m.serve(ctx, cfg, log, *user)
}

// webToken prints a new token for name and the NEO_WEB_USERS entry that
// admits it; only the hash is ever configured.
func (m *Main) webToken(name string) error {
	if _, err := web.ParseUsers([]string{name + "=" + strings.Repeat("0", 64)}); err != nil {
		return err
	}
	token, hash, err := web.NewToken()
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "Token for %s (give it to them; it is not stored anywhere and is shown only now):\n\n  %s\n\n"+
		"Add this entry to NEO_WEB_USERS (it holds only the token's hash):\n\n  %s=%s\n", name, token, name, hash)
	return nil
}

// webHistory reads web conversations from the store for the web adapter.
// A conversation's title (its first message) never changes, so each is
// read once and kept.
type webHistory struct {
	db database

	mu     sync.Mutex
	titles map[string]string // thread key -> title
}

func newWebHistory(db database) *webHistory {
	return &webHistory{db: db, titles: map[string]string{}}
}

// Known reports whether t is stored.
func (h *webHistory) Known(ctx context.Context, t core.Thread) (bool, error) {
	return h.db.ThreadKnown(ctx, t)
}

// title returns t's first message, cut to a line.
func (h *webHistory) title(ctx context.Context, t core.Thread) string {
	h.mu.Lock()
	title, ok := h.titles[t.Key()]
	h.mu.Unlock()
	if ok {
		return title
	}
	said, err := h.Transcript(ctx, t)
	if err != nil || len(said) == 0 {
		return "Conversation" // not kept: the next list tries again
	}
	title = oneLineCap(said[0].Text, 60)
	h.mu.Lock()
	if len(h.titles) >= 10000 {
		clear(h.titles)
	}
	h.titles[t.Key()] = title
	h.mu.Unlock()
	return title
}

// Conversations lists user's web conversations, most recent first: the
// first limit (0: all, for a search).
func (h *webHistory) Conversations(ctx context.Context, user string, limit int) ([]web.Summary, error) {
	threads, err := h.db.Threads(ctx)
	if err != nil {
		return nil, err
	}
	var out []web.Summary
	for _, ti := range threads {
		t := ti.Thread
		if t.Platform != web.Platform || t.Workspace != web.Workspace || t.Channel != user || ti.Entries+ti.Archived == 0 {
			continue
		}
		title := ti.Title
		if title == "" {
			title = h.title(ctx, t)
		}
		out = append(out, web.Summary{ID: t.ID, Title: title, Active: ti.Active})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// Rename sets t's title, as its owner named it.
func (h *webHistory) Rename(ctx context.Context, t core.Thread, title string) error {
	return h.db.SetThreadTitle(ctx, t, title)
}

// Delete removes t with its transcript.
func (h *webHistory) Delete(ctx context.Context, t core.Thread) error {
	if err := h.db.DeleteThread(ctx, t); err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.titles, t.Key())
	h.mu.Unlock()
	return nil
}

// KeepStopped stores the words of an answer a user's Stop cut short, as
// the page showed them: the transcript read back, and the model's next
// turn, see them, marked stopped.
func (h *webHistory) KeepStopped(ctx context.Context, t core.Thread, text string) error {
	data, err := agent.StoppedAnswer(text)
	if err != nil {
		return err
	}
	if _, err := h.db.AppendEntries(ctx, t, data); err != nil {
		return fmt.Errorf("web: keep the words of a stopped answer: %w", err)
	}
	return nil
}

// typed is what the user typed of a stored user message: without the
// attached files' contents and the note on files not read, which the
// agent's copy carries after it.
func typed(content string) string {
	for _, tail := range []string{"\n\nAttached file \"", "\n\n[Attachments not read:"} {
		if i := strings.Index(content, tail); i >= 0 {
			content = content[:i]
		}
	}
	return content
}

// Transcript is what the user saw: their messages and Neo's answers,
// without tool calls, tool results or the summary.
func (h *webHistory) Transcript(ctx context.Context, t core.Thread) ([]web.Said, error) {
	_, live, err := h.db.LoadTranscript(ctx, t)
	if err != nil {
		return nil, err
	}
	old, err := h.db.Archived(ctx, t)
	if err != nil {
		return nil, err
	}
	msgs, err := agent.Messages(append(old, live...))
	if err != nil {
		return nil, err
	}
	var out []web.Said
	for _, m := range msgs {
		switch {
		case agent.ToolPictures(m):
		case m.Role == "user":
			out = append(out, web.Said{Role: "user", Text: typed(m.Content)})
		case m.Role == "assistant" && len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) != "":
			text, stopped := strings.CutSuffix(m.Content, agent.StoppedMark)
			out = append(out, web.Said{Role: "assistant", Text: text, Stopped: stopped})
		}
	}
	return out, nil
}
