// Package usage accounts for what Neo costs: every model call's tokens,
// attributed to the workspace, channel, user and thread whose turn made
// it, and to the model. A [Meter] adds calls up in memory and writes them
// to its [Store] every few seconds and when it stops, one row per day and
// attribution, so accounting adds no write to the reply path. It also
// holds a daily token budget per workspace, and the budgets places' stored
// settings set ([Meter.Govern], counted from the shared store so the
// instances of a cluster keep one): [Meter.Guard] declines a turn,
// politely and with the time it resets, once a budget over it is spent.
//
// Usage of calls made in the last flush interval before a crash is lost;
// the turns themselves are not.
package usage

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// Key is what a row of usage is attributed to. Day is a UTC date,
// 2006-01-02.
type Key struct {
	Day       string `json:"day"`
	Platform  string `json:"platform"`
	Workspace string `json:"workspace"`
	Channel   string `json:"channel"`
	User      string `json:"user"`
	Thread    string `json:"thread"`
	Model     string `json:"model"`
}

// Tokens are the counts of one row.
type Tokens struct {
	Calls      int64 `json:"calls"`
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
}

// Total is prompt plus completion tokens.
func (t Tokens) Total() int64 { return t.Prompt + t.Completion }

func (t *Tokens) add(u Tokens) {
	t.Calls += u.Calls
	t.Prompt += u.Prompt
	t.Completion += u.Completion
}

// Row is the usage of one attribution on one day.
type Row struct {
	Key
	Tokens
}

// Store keeps usage rows (*store.DB).
type Store interface {
	// AddUsage adds each row's tokens to the stored row with its key.
	AddUsage(ctx context.Context, rows []Row) error
	// Usage returns the rows of day since and later, in key order.
	Usage(ctx context.Context, since string) ([]Row, error)
	// UsageIn returns the tokens used on day under a place: of platform,
	// and of workspace and channel unless they are "".
	UsageIn(ctx context.Context, day, platform, workspace, channel string) (int64, error)
}

const dayFormat = "2006-01-02"

// Day returns t's UTC date as Key.Day holds it.
func Day(t time.Time) string { return t.UTC().Format(dayFormat) }

// Options configures [NewMeter].
type Options struct {
	Store Store
	// DailyBudget is the most tokens one workspace may use in a UTC day;
	// 0 is no budget.
	DailyBudget int64
	// Interval is how often recorded usage is written (default 5 s).
	Interval time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Raisers says, in a sentence for the people of a place whose budget
	// is used up, who can raise it: place is the governed place whose
	// budget it is ("slack:T0123/C0456"), or "" for DailyBudget. Nil:
	// "The people who run me here can raise it."
	Raisers func(place string) string
	Logger  zerolog.Logger
}

// Meter records usage. It is safe for concurrent use.
type Meter struct {
	opts Options

	mu      sync.Mutex
	pending map[Key]Tokens
	day     string
	spent   map[string]int64 // workspace key -> tokens today, stored and pending
	// places are the daily token budgets places' stored settings set
	// (Govern), by place as skills write them.
	places map[string]int64
	// reads are the places' usage last read from the store, for the
	// checks a turn makes between its model calls (Exhausted).
	reads map[string]storeRead
	// flushes counts the flushes written, so a read that a flush ended
	// during is not kept: it may or may not hold the flush's rows.
	flushes uint64
}

// storeRead is a place's usage as the store held it at a moment, and what
// this meter has written under the place since.
type storeRead struct {
	day     string
	at      time.Time
	stored  int64
	flushed int64
}

// NewMeter returns a Meter, with today's spending read from the store so a
// restart does not reset the budget.
func NewMeter(ctx context.Context, opts Options) (*Meter, error) {
	if opts.Interval <= 0 {
		opts.Interval = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Meter{opts: opts, pending: map[Key]Tokens{}}
	if err := m.rollLocked(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// rollLocked starts a new day's spending when the date has changed.
func (m *Meter) rollLocked(ctx context.Context) error {
	day := Day(m.opts.Now())
	if day == m.day {
		return nil
	}
	rows, err := m.opts.Store.Usage(ctx, day)
	if err != nil {
		return fmt.Errorf("usage: read today's usage: %w", err)
	}
	m.day, m.spent = day, map[string]int64{}
	for _, r := range rows {
		if r.Day == day {
			m.spent[workspaceKey(r.Platform, r.Workspace)] += r.Total()
		}
	}
	for k, t := range m.pending {
		if k.Day == day {
			m.spent[workspaceKey(k.Platform, k.Workspace)] += t.Total()
		}
	}
	return nil
}

func workspaceKey(platform, workspace string) string { return platform + "/" + workspace }

// Record adds one model call's tokens, attributed to the turn ctx carries
// (core.WithTurn); a call outside any turn is attributed to no one.
func (m *Meter) Record(ctx context.Context, model string, u llm.Usage) {
	k := Key{Day: Day(m.opts.Now()), Model: model}
	if t, ok := core.TurnFrom(ctx); ok {
		th := t.Inbound.Thread
		k.Platform, k.Workspace, k.Channel, k.Thread, k.User = th.Platform, th.Workspace, th.Channel, th.ID, t.Inbound.User
	}
	tok := Tokens{Calls: 1, Prompt: int64(u.PromptTokens), Completion: int64(u.CompletionTokens)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k.Day > m.day {
		// The first call of a new UTC day starts the day's spending, so
		// the budget and its gauge need not wait for Run's next tick.
		if err := m.rollLocked(context.WithoutCancel(ctx)); err != nil {
			m.opts.Logger.Warn().Err(err).Msg("usage: new day")
		}
	}
	p := m.pending[k]
	p.add(tok)
	m.pending[k] = p
	if k.Day == m.day {
		m.spent[workspaceKey(k.Platform, k.Workspace)] += tok.Total()
	}
}

// Flush writes the usage recorded since the last flush. On failure the
// rows stay pending for the next one.
func (m *Meter) Flush(ctx context.Context) error {
	m.mu.Lock()
	if len(m.pending) == 0 {
		m.mu.Unlock()
		return nil
	}
	rows := make([]Row, 0, len(m.pending))
	for k, t := range m.pending {
		rows = append(rows, Row{Key: k, Tokens: t})
	}
	m.pending = map[Key]Tokens{}
	m.mu.Unlock()

	if err := m.opts.Store.AddUsage(ctx, rows); err != nil {
		m.mu.Lock()
		for _, r := range rows {
			p := m.pending[r.Key]
			p.add(r.Tokens)
			m.pending[r.Key] = p
		}
		m.mu.Unlock()
		return fmt.Errorf("usage: write %d rows: %w", len(rows), err)
	}
	// Written, they are no longer pending: the places read before count
	// them still.
	m.mu.Lock()
	m.flushes++
	for place, rd := range m.reads {
		for _, r := range rows {
			if r.Day == rd.day && inPlace(r.Key, place) {
				rd.flushed += r.Total()
			}
		}
		m.reads[place] = rd
	}
	m.mu.Unlock()
	return nil
}

// Run flushes every Interval until ctx ends, then once more with a short
// deadline of its own, so a shutdown keeps what was recorded.
func (m *Meter) Run(ctx context.Context) {
	t := time.NewTicker(m.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := m.Flush(ctx); err != nil && ctx.Err() == nil {
				m.opts.Logger.Warn().Err(err).Msg("usage: flush failed; will retry")
			}
			m.mu.Lock()
			err := m.rollLocked(ctx)
			m.mu.Unlock()
			if err != nil && ctx.Err() == nil {
				m.opts.Logger.Warn().Err(err).Msg("usage: new day")
			}
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := m.Flush(fctx); err != nil {
				m.opts.Logger.Error().Err(err).Msg("usage: final flush failed; the last seconds of usage are lost")
			}
			return
		}
	}
}

// Spent returns the tokens the thread's workspace has used today and
// whether that is past the daily budget.
func (m *Meter) Spent(t core.Thread) (tokens int64, over bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if Day(m.opts.Now()) != m.day {
		return 0, false // a new day: the budget is fresh
	}
	tokens = m.spent[workspaceKey(t.Platform, t.Workspace)]
	return tokens, m.opts.DailyBudget > 0 && tokens >= m.opts.DailyBudget
}

// MostSpent returns the most tokens one workspace has used today (UTC),
// stored and pending: how near the busiest workspace is to the daily
// budget, for the metrics.
func (m *Meter) MostSpent() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if Day(m.opts.Now()) != m.day {
		return 0 // a new day: the budget is fresh
	}
	var most int64
	for _, n := range m.spent {
		most = max(most, n)
	}
	return most
}

// Runner runs a turn (conversation.Runner).
type Runner interface {
	Run(ctx context.Context, t core.Turn) error
}

// Guard returns r behind the daily budgets: once the turn's workspace
// has spent DailyBudget, or a place the turn is in has spent the budget
// its stored settings set (Govern), the turn is declined in words, with
// the time the budget resets, and the model is not called.
func (m *Meter) Guard(r Runner) Runner {
	return guarded{next: r, m: m}
}

// Govern sets the places' daily token budgets (core/governance's
// daily_tokens), by place as skills write them ("slack:T0123/C0456",
// "slack:T0123", "slack"), replacing the ones before; it applies from the
// next turn. A place's tokens are counted from the shared store (every
// instance's flushed usage) and this meter's own unflushed calls, so the
// instances of a cluster keep one budget.
func (m *Meter) Govern(budgets map[string]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.places = maps.Clone(budgets)
	m.reads = nil
}

// placeBudget is one place's budget that a turn is under.
type placeBudget struct {
	place  string
	budget int64
}

// budgetsOf returns the stored budgets over in's place: its channel's,
// its workspace's and its platform's, in that order; a direct message
// only its platform's (usage rows do not say which calls were direct
// messages).
func (m *Meter) budgetsOf(in core.Inbound) []placeBudget {
	m.mu.Lock()
	defer m.mu.Unlock()
	th := in.Thread
	keys := []string{th.Platform}
	if !in.DM {
		keys = []string{th.Platform + ":" + th.Workspace + "/" + th.Channel, th.Platform + ":" + th.Workspace, th.Platform}
	}
	var out []placeBudget
	for _, k := range keys {
		if n := m.places[k]; n > 0 {
			out = append(out, placeBudget{k, n})
		}
	}
	return out
}

// Budget is one daily token budget over a place, and what of it is used
// today (UTC).
type Budget struct {
	// Where names the place for the people there: "this channel", "this
	// workspace", "every conversation on slack".
	Where  string
	Tokens int64
	Spent  int64
}

// Left is what remains of the budget today, never below 0.
func (b Budget) Left() int64 { return max(b.Tokens-b.Spent, 0) }

// Budgets returns the daily budgets over a turn in in's place, the
// workspace's (NEO_DAILY_TOKEN_BUDGET) first, with what each has used
// today; none when no budget is set.
func (m *Meter) Budgets(ctx context.Context, in core.Inbound) ([]Budget, error) {
	var out []Budget
	if spent, _ := m.Spent(in.Thread); m.opts.DailyBudget > 0 {
		out = append(out, Budget{Where: "this workspace", Tokens: m.opts.DailyBudget, Spent: spent})
	}
	places := m.budgetsOf(in)
	if len(places) == 0 {
		return out, nil
	}
	spent, err := m.placeSpent(ctx, places, true)
	if err != nil {
		return out, err
	}
	for i, p := range places {
		out = append(out, Budget{Where: scope(p.place), Tokens: p.budget, Spent: spent[i]})
	}
	return out, nil
}

// inPlace reports whether usage attributed to k counts towards place.
func inPlace(k Key, place string) bool {
	platform, rest, _ := strings.Cut(place, ":")
	ws, ch, _ := strings.Cut(rest, "/")
	return k.Platform == platform && (ws == "" || k.Workspace == ws) && (ch == "" || k.Channel == ch)
}

// placeSpent returns the tokens each of places has used today: what the
// shared store holds (one read per place, of its own rows) and this
// meter's unflushed calls. Unless fresh, a place read from the store less
// than Interval ago is not read again: its count is that read and what
// this meter wrote under it since (other instances' calls since then
// count at the next read).
func (m *Meter) placeSpent(ctx context.Context, places []placeBudget, fresh bool) ([]int64, error) {
	now := m.opts.Now()
	day := Day(now)
	out := make([]int64, len(places))
	for i, p := range places {
		m.mu.Lock()
		r, ok := m.reads[p.place]
		m.mu.Unlock()
		if !fresh && ok && r.day == day && now.Sub(r.at) < m.opts.Interval {
			out[i] = r.stored + r.flushed
			continue
		}
		platform, rest, _ := strings.Cut(p.place, ":")
		ws, ch, _ := strings.Cut(rest, "/")
		m.mu.Lock()
		flushes := m.flushes
		m.mu.Unlock()
		n, err := m.opts.Store.UsageIn(ctx, day, platform, ws, ch)
		if err != nil {
			return nil, fmt.Errorf("usage: read today's usage of %s: %w", p.place, err)
		}
		out[i] = n
		m.mu.Lock()
		if m.reads == nil {
			m.reads = map[string]storeRead{}
		}
		if m.flushes == flushes {
			m.reads[p.place] = storeRead{day: day, at: now, stored: n}
		} else {
			delete(m.reads, p.place) // read again next time
		}
		m.mu.Unlock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, t := range m.pending {
		for i, p := range places {
			if k.Day == day && inPlace(k, p.place) {
				out[i] += t.Total()
			}
		}
	}
	return out, nil
}

type guarded struct {
	next Runner
	m    *Meter
}

// spentBudget is a daily budget over a turn's place that is used up.
type spentBudget struct {
	// place is the governed place ("slack:T0123/C0456"), "" for the
	// workspace's NEO_DAILY_TOKEN_BUDGET.
	place         string
	where         string // the place in words: "this channel"
	spent, budget int64
}

// overBudget returns the first daily budget over in's place that is used
// up: the workspace's (NEO_DAILY_TOKEN_BUDGET), then its channel's,
// workspace's and platform's stored ones; ok is false while every one
// has tokens left. When the store cannot be read to count, err says so
// and b names the budget that could not be counted.
func (m *Meter) overBudget(ctx context.Context, in core.Inbound, fresh bool) (b spentBudget, ok bool, err error) {
	if spent, over := m.Spent(in.Thread); over {
		return spentBudget{where: "this workspace", spent: spent, budget: m.opts.DailyBudget}, true, nil
	}
	places := m.budgetsOf(in)
	if len(places) == 0 {
		return spentBudget{}, false, nil
	}
	spent, err := m.placeSpent(ctx, places, fresh)
	if err != nil {
		return spentBudget{place: places[0].place, where: scope(places[0].place)}, false, err
	}
	for i, p := range places {
		if spent[i] >= p.budget {
			return spentBudget{place: p.place, where: scope(p.place), spent: spent[i], budget: p.budget}, true, nil
		}
	}
	return spentBudget{}, false, nil
}

func (g guarded) Run(ctx context.Context, t core.Turn) error {
	b, over, err := g.m.overBudget(ctx, t.Inbound, true)
	switch {
	case err != nil:
		// A turn that cannot be counted is not run: the budget holds.
		g.m.opts.Logger.Error().Err(err).Str("thread", t.Inbound.Thread.Key()).Msg("usage: a place's budget could not be read; turn declined")
		return g.say(ctx, t, fmt.Sprintf("I can't tell how much of %s's daily token budget is left just now, so I'm not answering this. Ask me again in a minute.", b.where))
	case over:
		g.m.opts.Logger.Info().Str("thread", t.Inbound.Thread.Key()).Str("budget_of", b.where).Int64("spent", b.spent).Msg("usage: daily budget spent; turn declined")
		return g.say(ctx, t, fmt.Sprintf("I've used today's token budget for %s (%d of %d tokens), so I can't answer this now. %s",
			b.where, b.spent, b.budget, g.m.resets(b)))
	}
	err = g.next.Run(ctx, t)
	if len(g.m.budgetsOf(t.Inbound)) == 0 {
		return err
	}
	// The other instances count this turn's tokens from the store: they
	// go there now, not at the next tick.
	if ferr := g.m.Flush(context.WithoutCancel(ctx)); ferr != nil {
		g.m.opts.Logger.Warn().Err(ferr).Msg("usage: flush after a turn under a place's budget failed; will retry")
	} else {
		g.m.opts.Logger.Debug().Str("thread", t.Inbound.Thread.Key()).Msg("usage: a turn under a place's budget is counted in the store")
	}
	return err
}

// say tells the thread why its turn is declined; the model is not called
// and nothing is recorded.
func (g guarded) say(ctx context.Context, t core.Turn, text string) error {
	if t.Reporter == nil {
		return nil
	}
	if err := t.Reporter.Say(ctx, text); err != nil {
		return fmt.Errorf("usage: decline in %s: %w", t.Inbound.Thread, err)
	}
	return nil
}

// Exhausted returns "" while every daily token budget over in's place
// has tokens left, else a sentence for the people there: which budget is
// used up, when it resets and who can raise it. A turn asks before each
// model call after its first (the Guard asks before the first), so a
// long, tool-using turn stops at the budget rather than running past it.
// When the store cannot be read to count, the sentence says so and err
// is why: the turn stops too, as the Guard declines one.
func (m *Meter) Exhausted(ctx context.Context, in core.Inbound) (string, error) {
	b, over, err := m.overBudget(ctx, in, false)
	switch {
	case err != nil:
		return fmt.Sprintf("I can't tell how much of %s's daily token budget is left just now, so I stopped here rather than run past it. Ask me again in a minute.", b.where), err
	case over:
		m.opts.Logger.Info().Str("thread", in.Thread.Key()).Str("budget_of", b.where).Int64("spent", b.spent).Msg("usage: daily budget spent during a turn; turn stopped")
		return fmt.Sprintf("I've used today's token budget for %s (%d of %d tokens), so I stopped before finishing. %s", b.where, b.spent, b.budget, m.resets(b)), nil
	}
	return "", nil
}

// resets says when b's budget resets and who can raise it.
func (m *Meter) resets(b spentBudget) string {
	now := m.opts.Now().UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	who := "The people who run me here can raise it."
	if m.opts.Raisers != nil {
		who = m.opts.Raisers(b.place)
	}
	return fmt.Sprintf("The budget resets at 00:00 UTC, in %s; ask me again then. %s", until(next.Sub(now)), who)
}

// scope names a place whose budget is spent, for the people there.
func scope(place string) string {
	_, rest, _ := strings.Cut(place, ":")
	switch _, ch, _ := strings.Cut(rest, "/"); {
	case ch != "":
		return "this channel"
	case rest != "":
		return "this workspace"
	}
	return "every conversation on " + place
}

// until writes d as hours and minutes.
func until(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int(d.Hours()), int(d.Minutes())%60
	switch {
	case h == 0:
		return fmt.Sprintf("%d min", max(m, 1))
	case m == 0:
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d h %d min", h, m)
}

// Price is what a model costs, in dollars per million tokens.
type Price struct {
	Prompt, Completion float64
}

// Cost is what t cost at p.
func (p Price) Cost(t Tokens) float64 {
	return (float64(t.Prompt)*p.Prompt + float64(t.Completion)*p.Completion) / 1e6
}

// Line is one line of a report: a group and its totals.
type Line struct {
	Group string
	Tokens
	// Cost is in dollars; Priced is false when a model of the group has
	// no price.
	Cost   float64
	Priced bool
}

// Groupings of a report.
var Groupings = []string{"workspace", "channel", "user", "thread", "model", "day"}

// Report adds rows up by the grouping (one of [Groupings]) and prices
// them, largest total first.
func Report(rows []Row, by string, prices map[string]Price) ([]Line, error) {
	group, ok := map[string]func(Key) string{
		"workspace": func(k Key) string { return k.Platform + "/" + k.Workspace },
		"channel":   func(k Key) string { return k.Platform + "/" + k.Workspace + "/" + k.Channel },
		"user":      func(k Key) string { return k.Platform + "/" + k.Workspace + "/" + k.User },
		"thread":    func(k Key) string { return k.Platform + "/" + k.Workspace + "/" + k.Channel + "/" + k.Thread },
		"model":     func(k Key) string { return k.Model },
		"day":       func(k Key) string { return k.Day },
	}[by]
	if !ok {
		return nil, fmt.Errorf("usage: cannot group by %q: use one of %v", by, Groupings)
	}
	lines := map[string]*Line{}
	for _, r := range rows {
		g := group(r.Key)
		l := lines[g]
		if l == nil {
			l = &Line{Group: g, Priced: true}
			lines[g] = l
		}
		l.add(r.Tokens)
		p, ok := prices[r.Model]
		l.Priced = l.Priced && ok
		l.Cost += p.Cost(r.Tokens)
	}
	out := make([]Line, 0, len(lines))
	for _, l := range lines {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Line) int {
		return cmp.Or(cmp.Compare(b.Total(), a.Total()), cmp.Compare(a.Group, b.Group))
	})
	return out, nil
}
