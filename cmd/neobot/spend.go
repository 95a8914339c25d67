package main

import (
	"errors"

	"github.com/neobot/neobot/core"
)

// spendAuthority checks that a bot that can spend — with an execution
// daemon, or with spend tools its own executor runs — says who may ask
// for spends and who may approve them. Without it, anyone who can reach
// the bot could ask for a spend and approve it themselves, charged to the
// operator's wallet, so start-up fails instead.
func (c *Config) spendAuthority(spends bool) error {
	if !spends {
		return nil
	}
	var errs []error
	if c.WebAddr != "" && len(c.WebSpendUsers) > 0 && len(c.WebApprovers) == 0 && !c.SelfApprove {
		errs = append(errs, errors.New("NEO_WEB_APPROVERS: empty but NEO_WEB_SPEND_USERS lets web users ask for spends; list the web users who may approve them, or set NEO_SELF_APPROVE=true to let requesters approve their own"))
	}
	if c.SlackBotToken != "" {
		if len(c.SlackSpendUsers) == 0 && len(c.SlackSpendChannels) == 0 {
			errs = append(errs, errors.New("SLACK_SPEND_USERS, SLACK_SPEND_CHANNELS: both empty but Neo can spend (NEO_DAEMON_URL, or spend tools in the manifest); list the Slack user IDs (or channel IDs) that may ask Neo for spends"))
		}
		if len(c.SlackApprovers) == 0 && !c.SelfApprove {
			errs = append(errs, errors.New("SLACK_APPROVERS: empty but Neo can spend (NEO_DAEMON_URL, or spend tools in the manifest); list the Slack user IDs who may approve spends, or set NEO_SELF_APPROVE=true to let requesters approve their own"))
		}
	}
	if c.DiscordBotToken != "" {
		if len(c.DiscordSpendUsers) == 0 && len(c.DiscordSpendRoles) == 0 && len(c.DiscordSpendChannels) == 0 {
			errs = append(errs, errors.New("DISCORD_SPEND_USERS, DISCORD_SPEND_ROLES, DISCORD_SPEND_CHANNELS: all empty but Neo can spend (NEO_DAEMON_URL, or spend tools in the manifest); list the Discord users, roles or channels that may ask Neo for spends"))
		}
		if len(c.DiscordApprovers) == 0 && !c.SelfApprove {
			errs = append(errs, errors.New("DISCORD_APPROVERS: empty but Neo can spend (NEO_DAEMON_URL, or spend tools in the manifest); list the Discord user IDs (or role:ID) who may approve spends, or set NEO_SELF_APPROVE=true to let requesters approve their own"))
		}
	}
	return errors.Join(errs...)
}

// spendPolicy is who may ask for spends, per platform. A platform that is
// not configured gets no rule, so nobody on it may ask; on the web only
// NEO_WEB_SPEND_USERS may; the terminal's one user is the operator.
func (c *Config) spendPolicy() core.SpendPolicy {
	p := core.SpendPolicy{"terminal": {Anyone: true}}
	if c.SlackBotToken != "" {
		p["slack"] = core.SpendRule{Users: c.SlackSpendUsers, Channels: c.SlackSpendChannels}
	}
	if c.WebAddr != "" {
		p["web"] = core.SpendRule{Users: c.WebSpendUsers, Settings: "NEO_WEB_SPEND_"}
	}
	if c.DiscordBotToken != "" {
		p["discord"] = core.SpendRule{Users: c.DiscordSpendUsers, Roles: c.DiscordSpendRoles, Channels: c.DiscordSpendChannels}
	}
	return p
}
