package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core/governance"
	"github.com/neobot/neobot/core/skill"
	acct "github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store/postgres"
)

// governPlaces applies every place's stored settings (core/governance:
// skill, instructions, spend, model and approvers to the skills, daily
// token budgets to the usage meter), before the first turn; on
// PostgreSQL again each time a place changes, on any instance or through
// `neobot config set`, until the returned stop is called. reapply applies
// them again (after a change through this bot's admin API). A stored
// setting the bot refuses (a skill the settings file no longer defines,
// a model it does not serve) stops start-up, naming it; later, it is
// logged and the settings applied before stay.
func governPlaces(ctx context.Context, cfg *Config, db database, skills *skill.Set, meter *acct.Meter, log zerolog.Logger) (reapply func(context.Context) error, stop func(), err error) {
	places, ok := db.(governance.Store)
	if !ok || skills == nil {
		return func(context.Context) error { return nil }, func() {}, nil
	}
	if err := startPlaces(ctx, places, fileSettings(skills), time.Now(), log); err != nil {
		return nil, nil, fmt.Errorf("store the settings file's places as their first versions: %w", err)
	}
	apply := func(ctx context.Context) (int, error) {
		vs, err := places.Places(ctx)
		if err != nil {
			return 0, err
		}
		placed := make(map[string]skill.Placed, len(vs))
		budgets := map[string]int64{}
		for _, v := range vs {
			st := v.Settings
			if err := cfg.checkPlaceModel(st.Model); err != nil {
				return 0, fmt.Errorf("stored settings of %s: %w", v.Place, err)
			}
			placed[v.Place] = skill.Placed{Skill: st.Skill, Instructions: st.Instructions, Spend: st.Spend, Model: st.Model, Approvers: st.Approvers}
			if st.DailyTokens > 0 {
				budgets[v.Place] = st.DailyTokens
			}
		}
		if err := skills.Govern(placed); err != nil {
			return 0, err
		}
		if meter != nil {
			meter.Govern(budgets)
		}
		return len(placed), nil
	}
	reapply = func(ctx context.Context) error { _, err := apply(ctx); return err }
	n, err := apply(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("stored place settings (neobot config history PLACE shows them, and config set changes them): %w", err)
	}
	if n > 0 {
		log.Info().Int("places", n).Msg("governance: stored place settings apply")
	}
	pg, ok := db.(*postgres.DB)
	if !ok {
		return reapply, func() {}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = pg.Listen(ctx, time.Second, func(_, place string) {
			// Any change, or a reconnection that may have missed some:
			// every place is read again.
			if n, err := apply(ctx); err != nil {
				if ctx.Err() == nil {
					log.Error().Err(err).Str("place", place).Msg("governance: stored place settings not applied; the ones before stay")
				}
			} else {
				log.Info().Str("place", place).Int("places", n).Msg("governance: stored place settings changed")
			}
		}, postgres.ChannelPlaces)
	})
	return reapply, func() { cancel(); wg.Wait() }, nil
}

// fileSettings are the places the settings file binds, each with the
// settings that say so: its skill.
func fileSettings(skills *skill.Set) map[string]governance.Settings {
	out := map[string]governance.Settings{}
	for _, sk := range skills.Skills() {
		for _, p := range sk.Places {
			out[p] = governance.Settings{Skill: sk.Name}
		}
	}
	return out
}

// startPlaces stores each place the settings file binds as the place's
// version 1, made by "config file", where the place has no version yet
// (on every instance at once, once). A place already stored keeps its
// settings: where they bind another skill than the file, it is logged,
// and `neobot config diff` with the file lists it.
func startPlaces(ctx context.Context, s governance.Store, file map[string]governance.Settings, now time.Time, log zerolog.Logger) error {
	for _, place := range slices.Sorted(maps.Keys(file)) {
		st := file[place]
		stored, err := governance.Start(ctx, s, place, st, now)
		if err != nil {
			return err
		}
		if stored {
			log.Info().Str("place", place).Str("skill", st.Skill).Msg("governance: the settings file's place stored as its version 1")
			continue
		}
		v, err := s.PlaceSettings(ctx, place)
		if err != nil {
			return err
		}
		if v.Settings.Skill != "" && v.Settings.Skill != st.Skill {
			log.Warn().Str("place", place).Str("file_skill", st.Skill).Str("stored_skill", v.Settings.Skill).Int64("version", v.Number).Str("by", v.By).
				Msg("governance: the settings file binds the place to another skill than its stored settings, which apply (neobot config diff NEO_CONFIG lists every difference)")
		}
	}
	return nil
}

// budgetRaisers says who can raise a used-up daily token budget, to the
// people of the place (core/usage's Options.Raisers): place is the
// governed place whose budget it is, "" for NEO_DAILY_TOKEN_BUDGET.
func (c *Config) budgetRaisers(place string) string {
	if place == "" {
		return "Whoever runs me can raise it (the NEO_DAILY_TOKEN_BUDGET setting)."
	}
	set := fmt.Sprintf("neobot config set %s daily_tokens=…", place)
	slackAdmins := c.SlackClientID != "" && c.SlackClientSecret != "" && c.SlackBotToken != "" &&
		strings.HasPrefix(place, "slack:") && place != "slack:dm" && !isOrg(place)
	switch {
	case slackAdmins && len(c.WebAdmins) > 0:
		return fmt.Sprintf("This workspace's Slack admins and my admins can raise it on my admin page, and whoever runs me with %s.", set)
	case slackAdmins:
		return fmt.Sprintf("This workspace's Slack admins can raise it on my admin page, and whoever runs me with %s.", set)
	case len(c.WebAdmins) > 0:
		return fmt.Sprintf("My admins can raise it on my admin page, and whoever runs me with %s.", set)
	}
	return fmt.Sprintf("Whoever runs me can raise it, with %s.", set)
}

// isOrg reports whether place is an Enterprise Grid organization, which
// no workspace's admins govern.
func isOrg(place string) bool { _, ok := skill.Org(place); return ok }
