package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// loadSkills compiles the settings file's skills against the manifest.
// Without skills every place gets the built-in default (nil). A skill
// that asks before some calls needs someone who may answer on every chat
// platform neobot runs on, or its calls could only ever expire.
func (c *Config) loadSkills(m *mcp.Manifest) (*skill.Set, error) {
	if c.Skills == nil {
		return nil, nil
	}
	set, err := skill.Compile(c.Skills, m)
	if err != nil {
		return nil, fmt.Errorf("NEO_CONFIG=%s: %w", c.ConfigFile, err)
	}
	if !set.Asks() || c.SelfApprove {
		return set, nil
	}
	var asking []string
	for _, sk := range set.Skills() {
		for _, e := range mcp.Effects() {
			if sk.Rule(e) == skill.Ask {
				asking = append(asking, sk.Name)
				break
			}
		}
	}
	var errs []error
	who := fmt.Sprintf("skill %s asks a person before some calls", strings.Join(asking, ", "))
	if c.SlackBotToken != "" && len(c.SlackApprovers) == 0 {
		errs = append(errs, fmt.Errorf("SLACK_APPROVERS: empty but %s; list the Slack user IDs who may allow them, or set NEO_SELF_APPROVE=true to let requesters allow their own", who))
	}
	if c.DiscordBotToken != "" && len(c.DiscordApprovers) == 0 {
		errs = append(errs, fmt.Errorf("DISCORD_APPROVERS: empty but %s; list the Discord user IDs (or role:ID) who may allow them, or set NEO_SELF_APPROVE=true to let requesters allow their own", who))
	}
	if c.WebAddr != "" && len(c.WebApprovers) == 0 {
		errs = append(errs, fmt.Errorf("NEO_WEB_APPROVERS: empty but %s; list the web users who may allow them, or set NEO_SELF_APPROVE=true to let requesters allow their own", who))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return set, nil
}
