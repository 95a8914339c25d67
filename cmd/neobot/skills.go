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
// that asks before some calls, or a manifest server that declares no side
// effects (its calls are asked, docs/skills.md), needs someone who may
// answer on every chat platform neobot runs on, or its calls could only
// ever expire.
func (c *Config) loadSkills(m *mcp.Manifest) (*skill.Set, error) {
	var set *skill.Set
	if c.Skills != nil {
		var err error
		if set, err = skill.Compile(c.Skills, m); err != nil {
			return nil, fmt.Errorf("NEO_CONFIG=%s: %w", c.ConfigFile, err)
		}
	}
	if err := c.checkApprovals(set); err != nil {
		return nil, err
	}
	if c.SelfApprove {
		return set, nil
	}
	var who []string
	if set.Asks() {
		var asking []string
		for _, sk := range set.Skills() {
			for _, e := range mcp.Effects() {
				if sk.Rule(e) == skill.Ask {
					asking = append(asking, sk.Name)
					break
				}
			}
		}
		who = append(who, fmt.Sprintf("skill %s asks a person before some calls", strings.Join(asking, ", ")))
	}
	if servers := undeclaredServers(m); len(servers) > 0 {
		who = append(who, fmt.Sprintf("the manifest declares no side effects for server %s, so each call of its tools is asked (or declare them: neobot check shows where)", strings.Join(servers, ", ")))
	}
	if len(who) == 0 {
		return set, nil
	}
	because := strings.Join(who, ", and ")
	var errs []error
	if c.SlackBotToken != "" && len(c.SlackApprovers) == 0 {
		errs = append(errs, fmt.Errorf("SLACK_APPROVERS: empty but %s; list the Slack user IDs who may allow them, or set NEO_SELF_APPROVE=true to let requesters allow their own", because))
	}
	if c.DiscordBotToken != "" && len(c.DiscordApprovers) == 0 {
		errs = append(errs, fmt.Errorf("DISCORD_APPROVERS: empty but %s; list the Discord user IDs (or role:ID) who may allow them, or set NEO_SELF_APPROVE=true to let requesters allow their own", because))
	}
	if c.WebAddr != "" && len(c.WebApprovers) == 0 {
		errs = append(errs, fmt.Errorf("NEO_WEB_APPROVERS: empty but %s; list the web users who may allow them, or set NEO_SELF_APPROVE=true to let requesters allow their own", because))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return set, nil
}

// undeclaredServers are the aliases of the manifest's servers with a tool
// whose class neither side_effects nor tool_side_effects declares.
func undeclaredServers(m *mcp.Manifest) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, spec := range m.Servers {
		if tools := undeclaredTools(spec); len(tools) > 0 {
			out = append(out, spec.Alias)
		}
	}
	return out
}

// undeclaredTools are the tools of spec whose class it does not declare.
func undeclaredTools(spec mcp.ServerSpec) []string {
	if spec.SideEffects != "" {
		return nil
	}
	var out []string
	for _, t := range spec.Tools {
		if _, ok := spec.ToolSideEffects[t]; !ok {
			out = append(out, t)
		}
	}
	return out
}

// checkApprovals fails start-up when a tier of a skill's approval policy
// has nobody who may approve it on a platform neobot runs on and the
// skill is on: its spends could only ever expire.
func (c *Config) checkApprovals(set *skill.Set) error {
	platforms := map[string][]string{}
	if c.SlackBotToken != "" {
		platforms["slack"] = c.SlackApprovers
	}
	if c.DiscordBotToken != "" {
		platforms["discord"] = c.DiscordApprovers
	}
	if c.WebAddr != "" {
		platforms["web"] = c.WebApprovers
	}
	var errs []error
	for _, sk := range set.Skills() {
		for _, p := range sk.Platforms() {
			approvers, on := platforms[p]
			if !on {
				continue
			}
			if c.SelfApprove && len(approvers) == 0 {
				approvers = []string{"the requester"} // NEO_SELF_APPROVE: one person, the requester, decides "any approver" tiers
			}
			for _, problem := range sk.Nobody(p, approvers) {
				errs = append(errs, errors.New(problem))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("NEO_CONFIG=%s: %w", c.ConfigFile, err)
	}
	return nil
}
