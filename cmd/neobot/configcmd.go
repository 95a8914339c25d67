package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core/governance"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/store"
)

// configUsage says what `neobot config` does.
const configUsage = "config: say export, diff FILE, set [--by NAME] PLACE FIELD=VALUE... or history PLACE: " +
	"export prints every place's stored settings as JSON (for review as code), diff FILE compares an export, or the settings file (NEO_CONFIG), with the store, " +
	"set records a new version of a place's settings (fields: skill, instructions, model, daily_tokens, spend, approvers), " +
	"history lists a place's versions with who changed what (docs/governance.md)"

// runConfig is `neobot config`: each place's governance, as stored.
func (m *Main) runConfig(ctx context.Context, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" && args[0] != "-help" {
		return errors.New(configUsage)
	}
	verb := args[0]
	if verb == "-h" || verb == "--help" || verb == "-help" {
		fmt.Fprintln(m.Stdout, configUsage)
		return nil
	}
	var by *string
	cfg, rest, _, err := m.setup("neobot config "+verb, args[1:], func(fs *flag.FlagSet) {
		if verb == "set" {
			by = fs.String("by", "cli:"+cmp.Or(m.Getenv("USER"), "operator"), "who the change is recorded as made by")
		}
	})
	if err != nil {
		return err
	}
	places, err := m.openPlaces(ctx, cfg)
	if err != nil {
		return fmt.Errorf("config %s: %w", verb, err)
	}
	switch verb {
	case "export":
		return exportPlaces(ctx, places, m.Stdout)
	case "diff":
		if len(rest) != 1 {
			return errors.New("config diff: give the file an earlier `neobot config export` wrote, or the settings file (NEO_CONFIG)")
		}
		return diffPlaces(ctx, places, rest[0], m.Stdout)
	case "history":
		if len(rest) != 1 {
			return errors.New("config history: give one place, such as slack:T0123/C0456")
		}
		return placeHistory(ctx, places, rest[0], m.Stdout)
	case "set":
		if len(rest) < 2 {
			return errors.New("config set: give a place and at least one FIELD=VALUE, such as: neobot config set slack:T0123/C0456 skill=reader")
		}
		checkModel := cfg.checkPlaceModel
		if _, ok := places.(remotePlaces); ok {
			checkModel = func(string) error { return nil } // the running bot checks against its own models
		}
		return setPlace(ctx, places, checkModel, rest[0], *by, rest[1:], m.Stdout)
	}
	return errors.New(configUsage)
}

// openPlaces opens the store for the config commands; when a running bot
// holds the bbolt file, it goes through that bot's admin API instead.
func (m *Main) openPlaces(ctx context.Context, cfg *Config) (governance.Store, error) {
	db, err := openDatabase(ctx, cfg, zerolog.Nop(), dbOptions{lockTimeout: 300 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		r, err := remoteAdmin(cfg, 30*time.Second)
		if err != nil {
			return nil, err
		}
		return remotePlaces{r: r}, nil
	}
	if err != nil {
		return nil, err
	}
	m.onClose(db.Close)
	places, ok := db.(governance.Store)
	if !ok {
		return nil, errors.New("this store keeps no place settings")
	}
	return places, nil
}

// exported is one place in an export: its settings and the change that
// made them.
type exported struct {
	governance.Settings
	Version int64     `json:"version"`
	By      string    `json:"changed_by"`
	At      time.Time `json:"changed_at"`
}

// export is what `neobot config export` prints and `config diff` reads.
type export struct {
	Places map[string]exported `json:"places"`
}

func exportPlaces(ctx context.Context, s governance.Store, w io.Writer) error {
	vs, err := s.Places(ctx)
	if err != nil {
		return fmt.Errorf("config export: %w", err)
	}
	out := export{Places: map[string]exported{}}
	for _, v := range vs {
		out.Places[v.Place] = exported{Settings: v.Settings, Version: v.Number, By: v.By, At: v.At}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// diffPlaces prints how the store differs from path, place by place,
// and fails when it does. path is an earlier export, or a settings file
// (NEO_CONFIG): each place its skills bind, as the file would start it.
func diffPlaces(ctx context.Context, s governance.Store, path string, w io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config diff: %w", err)
	}
	was, fromFile, err := readDiffed(path, data)
	if err != nil {
		return err
	}
	vs, err := s.Places(ctx)
	if err != nil {
		return fmt.Errorf("config diff: %w", err)
	}
	now := map[string]governance.Version{}
	for _, v := range vs {
		now[v.Place] = v
	}
	names := slices.Collect(maps.Keys(was.Places))
	for p := range now {
		if _, ok := was.Places[p]; !ok {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	changed := 0
	for _, p := range names {
		before, after := was.Places[p].Settings, now[p].Settings
		if fromFile && after.Skill == "" && now[p].Number > 0 {
			after.Skill = before.Skill // stored "as the file says"
		}
		if before.Equal(after) {
			continue
		}
		changed++
		last := fmt.Sprintf("last changed by %s at %s", cmp.Or(now[p].By, "nobody"), now[p].At.Format(time.RFC3339))
		switch _, inFile := was.Places[p]; {
		case !fromFile:
			fmt.Fprintf(w, "%s: version %d in the file, %d stored (%s)\n", p, was.Places[p].Version, now[p].Number, last)
		case now[p].Number == 0:
			fmt.Fprintf(w, "%s: bound in the file to skill %q, nothing stored (the bot stores it as version 1 when it starts)\n", p, before.Skill)
			continue
		case !inFile:
			fmt.Fprintf(w, "%s: not bound in the file, version %d stored (%s)\n", p, now[p].Number, last)
		default:
			fmt.Fprintf(w, "%s: bound in the file, version %d stored, which applies (%s)\n", p, now[p].Number, last)
		}
		for _, d := range settingsDiff(before, after) {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
	if changed > 0 {
		return fmt.Errorf("config diff: %d place(s) differ from %s", changed, path)
	}
	fmt.Fprintf(w, "The stored settings are those of %s.\n", path)
	return nil
}

// readDiffed reads what config diff compares the store with: an export,
// or a settings file (it has "skills"), whose places are each bound to
// the skill that lists it; fromFile says which.
func readDiffed(path string, data []byte) (was export, fromFile bool, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return export{}, false, fmt.Errorf("config diff: %s is neither an export of `neobot config export` nor a settings file: %w", path, err)
	}
	raw, ok := top["skills"]
	if !ok {
		if err := json.Unmarshal(data, &was); err != nil {
			return export{}, false, fmt.Errorf("config diff: %s is not an export of `neobot config export`: %w", path, err)
		}
		return was, false, nil
	}
	specs, err := skill.Parse(raw)
	if err != nil {
		return export{}, false, fmt.Errorf("config diff: the skills of %s: %w", path, err)
	}
	was.Places = map[string]exported{}
	for name, sp := range specs {
		for _, p := range sp.Places {
			was.Places[p] = exported{Settings: governance.Settings{Skill: name}}
		}
	}
	return was, true, nil
}

// settingsDiff lists the fields that differ, as "field: before → after".
func settingsDiff(a, b governance.Settings) []string {
	show := func(v any) string {
		switch v := v.(type) {
		case *bool:
			if v == nil {
				return "(as the skill says)"
			}
			return strconv.FormatBool(*v)
		case []string:
			if len(v) == 0 {
				return "(none)"
			}
			return strings.Join(v, ",")
		case int64:
			if v == 0 {
				return "(the file's)"
			}
			return strconv.FormatInt(v, 10)
		case string:
			if v == "" {
				return "(the file's)"
			}
			return strconv.Quote(v)
		}
		return fmt.Sprint(v)
	}
	var out []string
	for _, f := range []struct {
		name string
		a, b any
	}{
		{"skill", a.Skill, b.Skill}, {"instructions", a.Instructions, b.Instructions}, {"model", a.Model, b.Model},
		{"daily_tokens", a.DailyTokens, b.DailyTokens}, {"spend", a.Spend, b.Spend}, {"approvers", a.Approvers, b.Approvers},
	} {
		if x, y := show(f.a), show(f.b); x != y {
			out = append(out, fmt.Sprintf("%s: %s → %s", f.name, x, y))
		}
	}
	return out
}

func placeHistory(ctx context.Context, s governance.Store, place string, w io.Writer) error {
	h, err := s.PlaceHistory(ctx, place)
	if err != nil {
		return fmt.Errorf("config history: %w", err)
	}
	if len(h) == 0 {
		fmt.Fprintf(w, "%s has no stored settings: the settings file decides there.\n", place)
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, v := range h {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", v.Number, v.At.Format(time.RFC3339), v.By, strings.Join(settingsDiff(v.Before, v.Settings), "; "))
	}
	return tw.Flush()
}

// setPlace records a new version of place's settings from FIELD=VALUE
// arguments; an empty value returns the field to the settings file's.
// Nothing is recorded unless every argument reads, and the model (when
// one is named) is one checkModel accepts.
func setPlace(ctx context.Context, s governance.Store, checkModel func(string) error, place, by string, fields []string, w io.Writer) error {
	var edits []func(*governance.Settings)
	var bad []error
	for _, f := range fields {
		edit, err := fieldEdit(f)
		if err != nil {
			bad = append(bad, err)
		}
		if model, ok := strings.CutPrefix(f, "model="); ok {
			if err := checkModel(model); err != nil {
				bad = append(bad, err)
			}
		}
		edits = append(edits, edit)
	}
	if len(bad) > 0 {
		return fmt.Errorf("config set: %w", errors.Join(bad...))
	}
	v, err := governance.Change(ctx, s, place, by, time.Now(), func(st *governance.Settings) {
		for _, e := range edits {
			e(st)
		}
	})
	if errors.Is(err, governance.ErrUnchanged) {
		fmt.Fprintf(w, "%s already has these settings (version %d); nothing was recorded.\n", place, v.Number)
		return nil
	}
	if err != nil {
		return fmt.Errorf("config set: %w", err)
	}
	fmt.Fprintf(w, "Recorded version %d of %s's settings, by %s:\n", v.Number, place, by)
	for _, d := range settingsDiff(v.Before, v.Settings) {
		fmt.Fprintf(w, "  %s\n", d)
	}
	fmt.Fprintln(w, placeApplies(v.Before, v.Settings))
	return nil
}

// placeApplies says when a change takes effect.
func placeApplies(before, after governance.Settings) string {
	msg := "The change applies from the next turn there: every running instance applies it at once, a stopped bot when it starts."
	if after.DailyTokens > 0 && before.DailyTokens != after.DailyTokens {
		msg += fmt.Sprintf(" The daily budget of %d tokens counts what the place has used since 00:00 UTC today, on every instance.", after.DailyTokens)
	}
	return msg
}

// fieldEdit reads one FIELD=VALUE argument of config set.
func fieldEdit(arg string) (func(*governance.Settings), error) {
	k, v, ok := strings.Cut(arg, "=")
	switch {
	case strings.HasPrefix(arg, "-"):
		return nil, fmt.Errorf("%q: flags go before the place (neobot config set --by NAME PLACE FIELD=VALUE...)", arg)
	case !ok:
		return nil, fmt.Errorf("%q is not FIELD=VALUE", arg)
	}
	switch k {
	case "skill":
		return func(st *governance.Settings) { st.Skill = v }, nil
	case "instructions":
		return func(st *governance.Settings) { st.Instructions = v }, nil
	case "model":
		return func(st *governance.Settings) { st.Model = v }, nil
	case "daily_tokens":
		n, err := strconv.ParseInt(cmp.Or(v, "0"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("daily_tokens=%q is not a whole number", v)
		}
		return func(st *governance.Settings) { st.DailyTokens = n }, nil
	case "spend":
		if v == "" {
			return func(st *governance.Settings) { st.Spend = nil }, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("spend=%q: want true, false, or nothing for the skill's", v)
		}
		return func(st *governance.Settings) { st.Spend = &b }, nil
	case "approvers":
		var list []string
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				list = append(list, a)
			}
		}
		return func(st *governance.Settings) { st.Approvers = list }, nil
	}
	return nil, fmt.Errorf("%q is not a field; use skill, instructions, model, daily_tokens, spend or approvers", k)
}
