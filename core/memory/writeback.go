package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// Write-back runs after each turn. Without a model it keeps an excerpt of
// the exchange (a turn record) and, when tools completed the goal, the
// procedure. With a model it also extracts durable facts and reconciles
// each against similar existing records: ADD, UPDATE (a new record that
// supersedes the old), DELETE, or NONE.

const extractPrompt = `You maintain the long-term memory of an assistant called Neo.
Read the conversation turn below and extract durable facts worth remembering in later conversations:
facts about the team, projects and the world ("fact"), how the user likes things done ("preference"),
and who the user is: role, team, time zone ("profile"). Skip greetings, one-off requests, anything
only true for this turn, and secrets (keys, passwords, tokens).
Write each fact as one short self-contained sentence naming its subject. Keep identifiers verbatim.
Set "about" to "user" when the fact is about the user who wrote the message, else "shared".
Answer with JSON only: {"facts":[{"text":"...","kind":"fact|preference|profile","about":"user|shared","entities":["..."]}]}
Answer {"facts":[]} when there is nothing to remember.`

const reconcilePrompt = `You maintain the long-term memory of an assistant called Neo.
Each new fact below comes with existing memories that may overlap it. For each new fact choose one operation:
ADD (it is new information), UPDATE (it corrects or refines an existing memory: give "target" and the merged
"text"), DELETE (it says an existing memory is no longer true: give "target"), NONE (already known).
Answer with JSON only: {"ops":[{"fact":0,"op":"ADD|UPDATE|DELETE|NONE","target":"c1","text":"..."}]}`

// Limits on what write-back reads and keeps.
const (
	maxExcerpt    = 400
	maxCandidates = 3
	maxFacts      = 10
)

type extracted struct {
	Text     string   `json:"text"`
	Kind     Kind     `json:"kind"`
	About    string   `json:"about"`
	Entities []string `json:"entities"`
}

type reconcileOp struct {
	Fact   int    `json:"fact"`
	Op     string `json:"op"`
	Target string `json:"target"`
	Text   string `json:"text"`
}

// WriteBack updates memory after a turn: in is the message that started
// it, turn the messages the turn produced (assistant replies, tool calls
// and results). Records are scoped to in's conversation: everything from a
// direct message stays in direct messages with that user; in a public
// channel, facts about the user belong to the user and the rest to the
// channel; in a private channel or thread everything stays in it, facts
// about the user being theirs there alone.
func (c *Cortex) WriteBack(ctx context.Context, in core.Inbound, turn []llm.Message) error {
	if in.Thread.Platform == "" || in.Thread.Workspace == "" {
		return errors.New("memory: write-back: message has no platform or workspace")
	}
	now := c.now()
	answer, tools := outcome(turn)
	var put []Record
	var del []string
	newRec := func(scope Scope, kind Kind, text string, entities []string) Record {
		return Record{ID: newID(), Scope: scope, Kind: kind, Text: text, Entities: entities, Created: now, Updated: now}
	}
	conv := conversationScope(in)
	if answer != "" && strings.TrimSpace(in.Text) != "" {
		r := newRec(conv, KindTurn, fmt.Sprintf("%s asked: %s\nNeo answered: %s",
			speaker(in), excerpt(in.Text, maxExcerpt), excerpt(answer, maxExcerpt)), nil)
		del = append(del, c.keepTurn(conv, r.ID, r.Created)...)
		put = append(put, r)
	}
	if answer != "" && len(tools) > 0 && strings.TrimSpace(in.Text) != "" {
		text := fmt.Sprintf("Goal: %s\nSteps: %s", excerpt(in.Text, 200), strings.Join(tools, " -> "))
		r := newRec(conv, KindProcedure, text, tools)
		// The same steps for a similar goal replace the older pattern.
		for _, h := range c.Recall(ReaderOf(in), in.Text, 3, KindProcedure) {
			if h.Scope == conv && stepsOf(h.Text) == stepsOf(text) {
				r.Supersedes, r.Created = h.ID, h.Created
				del = append(del, h.ID)
				break
			}
		}
		put = append(put, r)
	}
	var modelErr error
	if c.asksModel(in) {
		p, d, err := c.extract(ctx, in, turn, newRec)
		put, del = append(put, p...), append(del, d...)
		modelErr = err
	}
	if err := c.writeLater(ctx, put, del); err != nil {
		return err
	}
	if modelErr != nil {
		return fmt.Errorf("memory: write-back in %s: %w", in.Thread.Key(), modelErr)
	}
	return nil
}

// QuickWriteBack reports whether WriteBack for in returns at once: it asks
// no model, and the store writes later (LaterStore), so it only queues
// records. It takes microseconds then.
func (c *Cortex) QuickWriteBack(in core.Inbound) bool {
	_, later := c.store.(LaterStore)
	return later && !c.asksModel(in)
}

// asksModel reports whether WriteBack for in asks a model for facts:
// there is one, and in has words enough to state a fact.
func (c *Cortex) asksModel(in core.Inbound) bool {
	return len(c.models) > 0 && mayStateFacts(in.Text)
}

// minFactWords is the fewest words, stopwords aside, a message needs before
// the cheap model is asked for facts in it. "thanks", "ok" and "hi there"
// state none, and they are a good share of what people say to a bot: each
// would cost a model call for nothing.
const minFactWords = 2

// mayStateFacts reports whether text has words enough to state a fact.
func mayStateFacts(text string) bool { return len(words(text, nil)) >= minFactWords }

// extract asks the model for facts and reconciles them with what is known.
func (c *Cortex) extract(ctx context.Context, in core.Inbound, turn []llm.Message,
	newRec func(Scope, Kind, string, []string) Record) (put []Record, del []string, err error) {
	var facts struct {
		Facts []extracted `json:"facts"`
	}
	// Facts come from the author's own words alone: never from a file,
	// a tool's result, the thread's other people or Neo's replies, any of
	// which could plant a "fact" in someone's memory.
	if err := c.ask(ctx, extractPrompt, ownWords(in), &facts); err != nil {
		return nil, nil, fmt.Errorf("extract facts: %w", err)
	}
	r := ReaderOf(in)
	type pending struct {
		fact       extracted
		scope      Scope
		candidates []Hit
	}
	var todo []pending
	for _, f := range facts.Facts {
		f.Text = strings.TrimSpace(f.Text)
		if f.Text == "" || len(todo) == maxFacts {
			continue
		}
		if !f.Kind.Valid() || f.Kind == KindTurn || f.Kind == KindProcedure {
			f.Kind = KindFact
		}
		if f.Kind != KindFact {
			f.About = "user"
		}
		p := pending{fact: f, scope: factScope(in, f.About == "user")}
		p.candidates = c.Recall(r, f.Text+" "+strings.Join(f.Entities, " "), maxCandidates, KindFact, KindPreference, KindProfile)
		todo = append(todo, p)
	}
	ops := make([]reconcileOp, len(todo))
	var prompt strings.Builder
	labels := map[string]Hit{}
	for i, p := range todo {
		ops[i] = reconcileOp{Fact: i, Op: "ADD"}
		if len(p.candidates) == 0 {
			continue
		}
		ops[i].Op = "NONE" // the model must say what to do with an overlap
		fmt.Fprintf(&prompt, "New fact %d: %s\n", i, p.fact.Text)
		for _, h := range p.candidates {
			label := fmt.Sprintf("c%d", len(labels)+1)
			labels[label] = h
			fmt.Fprintf(&prompt, "  existing %s: %s\n", label, oneLine(h.Text))
		}
	}
	if prompt.Len() > 0 {
		var answer struct {
			Ops []reconcileOp `json:"ops"`
		}
		if err := c.ask(ctx, reconcilePrompt, prompt.String(), &answer); err != nil {
			return nil, nil, fmt.Errorf("reconcile facts: %w", err)
		}
		for _, op := range answer.Ops {
			if op.Fact >= 0 && op.Fact < len(ops) && len(todo[op.Fact].candidates) > 0 {
				ops[op.Fact] = op
			}
		}
	}
	deleted := map[string]bool{}
	for i, op := range ops {
		p := todo[i]
		target, known := labels[strings.TrimSpace(op.Target)]
		// A target must be one of this fact's candidates: the model can
		// touch nothing it was not shown for this fact.
		known = known && containsID(p.candidates, target.ID) && !deleted[target.ID]
		switch strings.ToUpper(strings.TrimSpace(op.Op)) {
		case "ADD":
			rec := newRec(p.scope, p.fact.Kind, p.fact.Text, p.fact.Entities)
			rec.Source = source(in)
			put = append(put, rec)
		case "UPDATE":
			if !known {
				continue
			}
			text := strings.TrimSpace(op.Text)
			if text == "" {
				text = p.fact.Text
			}
			// An update stays where the record was: learning more about it
			// in a wider conversation never widens who may recall it.
			scope := target.Scope
			if private(in) {
				// Nor does learning more in a private place carry what was
				// said there out of it: a revision of a wider record
				// stays in the place, and the wider record stays as it was.
				scope = scope.narrowed(p.scope)
			}
			rec := newRec(scope, p.fact.Kind, text, mergeEntities(target.Entities, p.fact.Entities))
			rec.Source = source(in)
			if scope != target.Scope {
				put = append(put, rec)
				continue
			}
			rec.Supersedes, rec.Created = target.ID, target.Created
			put = append(put, rec)
			del = append(del, target.ID)
			deleted[target.ID] = true
		case "DELETE":
			if known {
				del = append(del, target.ID)
				deleted[target.ID] = true
			}
		}
	}
	return put, del, nil
}

// ask sends one prompt to the cheap model and decodes the JSON object in
// its answer into v. When the cheap model fails or answers without the
// JSON asked for, the main model is asked instead (as compaction does).
func (c *Cortex) ask(ctx context.Context, system, user string, v any) error {
	var errs []error
	for i, m := range c.models {
		err := askOne(ctx, m, system, user, v)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		errs = append(errs, err)
		if i+1 < len(c.models) {
			c.log.Warn().Err(err).Msg("memory: cheap model failed, writing back with the main model")
		}
	}
	return errors.Join(errs...)
}

// askOne sends one prompt to m and decodes the JSON object in its answer
// into v.
func askOne(ctx context.Context, m Model, system, user string, v any) error {
	res, err := m.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{
		llm.SystemMessage(system), llm.UserMessage(user),
	}})
	if err != nil {
		return err
	}
	text := res.Message.Content
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return fmt.Errorf("model answered without JSON: %q", excerpt(text, 120))
	}
	if err := json.Unmarshal([]byte(text[start:end+1]), v); err != nil {
		return fmt.Errorf("model answered malformed JSON: %w", err)
	}
	return nil
}

// outcome returns the turn's final answer ("" when it ended without one)
// and the tools it called, in order, consecutive repeats folded.
func outcome(turn []llm.Message) (answer string, tools []string) {
	for _, m := range turn {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, tc := range m.ToolCalls {
			if n := tc.Function.Name; n != "" && (len(tools) == 0 || tools[len(tools)-1] != n) {
				tools = append(tools, n)
			}
		}
	}
	if n := len(turn); n > 0 {
		last := turn[n-1]
		if last.Role == llm.RoleAssistant && len(last.ToolCalls) == 0 {
			answer = strings.TrimSpace(last.Content)
		}
	}
	return answer, tools
}

// conversationScope is where records of in's conversation as a whole
// belong: a direct message stays with its user, a channel with its channel,
// a private thread with the thread.
func conversationScope(in core.Inbound) Scope {
	s := Scope{Platform: in.Thread.Platform, Workspace: in.Thread.Workspace}
	switch {
	case in.DM:
		s.User, s.DM = in.User, true
	case in.Private:
		// A private thread's members are not its channel's: what is said
		// there stays there.
		s.Channel = in.Thread.ID
	default:
		s.Channel = in.Thread.Channel
	}
	return s
}

// private reports whether in was said in a place only its members can
// read: a direct message, a private thread, a private channel or group
// DM. What is said there is recalled there alone.
func private(in core.Inbound) bool { return in.DM || in.Private || in.PrivateChannel }

// factScope is where an extracted fact belongs. In a public channel facts
// about the user follow the user through the workspace, and shared facts
// stay in the channel. In a private place everything stays in the place
// (the conversation's scope); a fact about the user is also the user's
// own there, so it shows in their profile in that place and nowhere else.
func factScope(in core.Inbound, aboutUser bool) Scope {
	s := conversationScope(in)
	if aboutUser && in.User != "" {
		s.User = in.User
		if !private(in) {
			s.Channel = ""
		}
	}
	return s
}

// narrowed returns the scope readers of both s and t may see: where a
// record learned in t may go when it revises one in s. Both are visible
// to the same reader, so their users and channels, where both are set,
// agree.
func (s Scope) narrowed(t Scope) Scope {
	s.User = cmp.Or(s.User, t.User)
	s.Channel = cmp.Or(s.Channel, t.Channel)
	s.DM = s.DM || t.DM
	return s
}

// ownWords is what fact extraction reads: the author's message as they
// wrote it, nothing else of the turn.
func ownWords(in core.Inbound) string {
	return fmt.Sprintf("%s: %s\n", speaker(in), in.Text)
}

// source names where a fact was learned.
func source(in core.Inbound) string {
	return fmt.Sprintf("%s event %s by %s", in.Thread.Key(), in.EventID, in.User)
}

func speaker(in core.Inbound) string {
	switch {
	case in.UserName != "":
		return in.UserName
	case in.User != "":
		return "User " + in.User
	}
	return "The user"
}

func stepsOf(text string) string {
	if _, steps, ok := strings.Cut(text, "\nSteps: "); ok {
		return steps
	}
	return ""
}

func excerpt(s string, n int) string {
	s = oneLine(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // keep UTF-8 whole
		cut--
	}
	return s[:cut] + "…"
}

func containsID(hs []Hit, id string) bool {
	for _, h := range hs {
		if h.ID == id {
			return true
		}
	}
	return false
}

func mergeEntities(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, e := range b {
		dup := false
		for _, x := range out {
			if strings.EqualFold(x, e) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out
}
