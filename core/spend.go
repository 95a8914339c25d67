package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrSpendForbidden reports a spend asked for by someone the operator has
// not allowed to ask for spends. It is wrapped in a [SpendRefusal].
var ErrSpendForbidden = errors.New("spend: requester may not ask for spends")

// SpendRule says who may ask Neo for spends on one platform. Each list that
// is set must be satisfied: Users and Roles name who (a listed user, or a
// user holding a listed role), Channels name where (the thread's channel,
// or the thread itself). A rule with every list empty allows nobody unless
// Anyone is set.
type SpendRule struct {
	// Anyone allows every requester: the terminal, whose one user is the
	// operator.
	Anyone   bool
	Users    []string
	Roles    []string
	Channels []string
	// Settings prefixes the names of the settings a refusal points at
	// (default "<PLATFORM>_SPEND_", as in SLACK_SPEND_USERS).
	Settings string
}

// SpendPolicy maps a platform ("slack", "discord", "terminal") to its
// rule. A platform with no rule may not ask for spends at all.
type SpendPolicy map[string]SpendRule

// SpendRefusal is the refusal of a spend request, with the sentence the
// model relays to the person and the settings an operator would change.
type SpendRefusal struct {
	User    string
	Thread  Thread
	Reason  string
	Setting string
}

// Error returns the refusal as the model sees it: why, and that nothing
// was submitted.
func (e *SpendRefusal) Error() string {
	who := e.User
	if who == "" {
		who = "this requester"
	}
	return fmt.Sprintf("%s: %s %s, so nothing was submitted and no money moved. Tell the person plainly that they are not allowed to ask for this; an operator can change it with %s",
		ErrSpendForbidden, who, e.Reason, e.Setting)
}

// Unwrap returns ErrSpendForbidden.
func (e *SpendRefusal) Unwrap() error { return ErrSpendForbidden }

// Authorize returns nil when in's author may ask for a spend in in's
// thread, else a *SpendRefusal saying why.
func (p SpendPolicy) Authorize(in Inbound) error {
	platform := in.Thread.Platform
	refuse := func(reason string, settings ...string) error {
		return &SpendRefusal{User: in.User, Thread: in.Thread, Reason: reason, Setting: strings.Join(settings, " or ")}
	}
	rule, ok := p[platform]
	if !ok {
		return refuse(fmt.Sprintf("asked on %q, where spends are not enabled", platform), "the platform's *_SPEND_* settings")
	}
	if rule.Anyone {
		return nil
	}
	prefix := rule.Settings
	if prefix == "" {
		prefix = strings.ToUpper(platform) + "_SPEND_"
	}
	if len(rule.Users) == 0 && len(rule.Roles) == 0 && len(rule.Channels) == 0 {
		return refuse("asked where nobody may ask for spends", prefix+"USERS", prefix+"CHANNELS")
	}
	if len(rule.Users) > 0 || len(rule.Roles) > 0 {
		listed := in.User != "" && slices.Contains(rule.Users, in.User)
		for _, r := range in.Roles {
			listed = listed || slices.Contains(rule.Roles, r)
		}
		if !listed {
			settings := []string{prefix + "USERS"}
			if len(rule.Roles) > 0 {
				settings = append(settings, prefix+"ROLES")
			}
			return refuse("is not among the people allowed to ask for spends", settings...)
		}
	}
	if len(rule.Channels) > 0 && !slices.Contains(rule.Channels, in.Thread.Channel) && !slices.Contains(rule.Channels, in.Thread.ID) {
		return refuse("asked in a channel where spends are not allowed", prefix+"CHANNELS")
	}
	return nil
}
