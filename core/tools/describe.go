package tools

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/neobot/neobot/core"

	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// Describe writes the surface for an operator (`neobot check`): each
// server with its state, its natural and escalated functions, the
// synthetic functions, and the warnings.
func (s *Surface) Describe(w io.Writer) error {
	var b strings.Builder
	if s.did != "" {
		fmt.Fprintf(&b, "agent %s\n", s.did)
	}
	var statuses []mcp.Status
	if s.mgr != nil {
		statuses = s.mgr.Status()
	}
	fmt.Fprintf(&b, "servers: %d\n", len(statuses))
	for _, st := range statuses {
		fmt.Fprintf(&b, "  %s (%s, %s): %s", st.Alias, st.Transport, st.Version, st.State)
		if st.PID != 0 {
			fmt.Fprintf(&b, ", pid %d", st.PID)
		}
		if st.Restarts > 0 {
			fmt.Fprintf(&b, ", %d restarts", st.Restarts)
		}
		b.WriteString(s.perPlace(st.Alias))
		b.WriteByte('\n')
		if st.Problem != "" {
			fmt.Fprintf(&b, "    problem: %s\n", st.Problem)
		}
		var natural, escalated []string
		for name, bd := range s.byFunc {
			if bd.alias != st.Alias {
				continue
			}
			label := name + " (" + string(bd.effect) + ")"
			if !bd.declared {
				label = name + " (" + string(bd.effect) + ", undeclared)"
			}
			if bd.class == Escalate {
				escalated = append(escalated, label)
			} else {
				natural = append(natural, label)
			}
		}
		slices.Sort(natural)
		slices.Sort(escalated)
		fmt.Fprintf(&b, "    natural (%d): %s\n", len(natural), list(natural))
		fmt.Fprintf(&b, "    escalated (%d, only via %s): %s\n", len(escalated), core.CoreExecute, list(escalated))
		if st.State == mcp.StateUp {
			b.WriteString(s.describeExtras(st.Alias))
		}
	}
	if s.manifest != nil && s.manifest.AllowedSideEffects != nil {
		fmt.Fprintf(&b, "allowed side effects: %s\n", list(s.manifest.AllowedSideEffects))
	}
	var how string
	switch {
	case s.delegate != nil:
		how = "execution daemon configured"
	case s.HasSpendTools():
		how = "no execution daemon: neobot's own executor runs the spend tools above, each call approved in the thread"
	default:
		how = "not offered: no execution daemon and no spend tool in the manifest"
	}
	fmt.Fprintf(&b, "synthetic: %s (%s)", core.CoreExecute, how)
	if s.recall != nil {
		fmt.Fprintf(&b, ", %s", MemoryRecall)
	}
	if s.forget != nil {
		fmt.Fprintf(&b, ", %s", MemoryForget)
	}
	if s.history != nil {
		fmt.Fprintf(&b, ", %s", HistorySearch)
	}
	if readable := s.resourceServers(); len(readable) > 0 {
		fmt.Fprintf(&b, ", %s (%s, where a place's skill allows one of the server's tools)", ReadResource, strings.Join(readable, ", "))
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "escalate patterns: %s\n", strings.Join(s.patterns, ", "))
	fmt.Fprintf(&b, "escalate words (whole words, not after a read verb): %s\n", strings.Join(DefaultEscalateWords(), ", "))
	warnings := s.Warnings()
	if undeclared := s.undeclared(); len(undeclared) > 0 {
		warnings = append(warnings, fmt.Sprintf("%d tools declare no side-effect class, so each call of one is asked first, or refused where the skill denies external calls (a name that spends stays spend): %s; "+
			"declare side_effects for each server, and tool_side_effects where a tool differs (docs/manifest.md)", len(undeclared), strings.Join(undeclared, ", ")))
	}
	fmt.Fprintf(&b, "warnings: %d\n", len(warnings))
	for _, wn := range warnings {
		fmt.Fprintf(&b, "  - %s\n", wn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func list(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}

// undeclared lists, sorted, the functions whose class the manifest does
// not declare.
func (s *Surface) undeclared() []string {
	var out []string
	for name, bd := range s.byFunc {
		if !bd.declared {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// DescribeSkills writes each skill's surface for an operator (`neobot
// check`): the places bound to it, the functions it offers and asks
// about, whether it may spend, and whether it adds instructions.
func (s *Surface) DescribeSkills(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "skills: %d\n", len(s.skills.Skills()))
	for _, sk := range s.skills.Skills() {
		places := sk.Places
		if sk.Name == skill.DefaultName {
			places = append([]string{"every place without a binding"}, places...)
		}
		fmt.Fprintf(&b, "  %s: %s\n", sk.Name, list(places))
		var allowed, asked []string
		for name, bd := range s.byFunc {
			if bd.class == Escalate {
				continue
			}
			switch s.verdict(sk, bd).Rule {
			case skill.Allow:
				allowed = append(allowed, name+" ("+string(bd.effect)+")")
			case skill.Ask:
				asked = append(asked, name+" ("+string(bd.effect)+")")
			}
		}
		slices.Sort(allowed)
		slices.Sort(asked)
		fmt.Fprintf(&b, "    tools (%d): %s\n", len(allowed), list(allowed))
		fmt.Fprintf(&b, "    asks first (%d): %s\n", len(asked), list(asked))
		spend := "no"
		if s.spendVerdict(sk).Rule == skill.Allow {
			spend = "yes, through " + core.CoreExecute
		}
		fmt.Fprintf(&b, "    spend: %s\n", spend)
		for _, tier := range sk.Approvals.Describe() {
			fmt.Fprintf(&b, "    approval tier: %s\n", tier)
		}
		if sk.Instructions != "" {
			fmt.Fprintf(&b, "    instructions: %d characters\n", len(sk.Instructions))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// perPlace describes how a server that uses a place placeholder runs, or
// returns "" for any other.
func (s *Surface) perPlace(alias string) string {
	if s.manifest == nil {
		return ""
	}
	for _, spec := range s.manifest.Servers {
		if spec.Alias != alias || !spec.UsesPlace() {
			continue
		}
		limit, idle := spec.MaxProcesses, time.Duration(spec.IdleTimeout)
		if limit <= 0 {
			limit = mcp.DefaultMaxProcesses
		}
		if idle <= 0 {
			idle = mcp.DefaultIdleTimeout
		}
		return fmt.Sprintf(", one process per place (at most %d at once, each stopped after %s idle)", limit, idle)
	}
	return ""
}

// promptsTimeout bounds asking one server for its prompts in Describe.
const promptsTimeout = 5 * time.Second

// describeExtras lists what server alias offers besides tools: that its
// resources are readable, and its prompts (prompts/list) when it has any.
func (s *Surface) describeExtras(alias string) string {
	var b strings.Builder
	if s.mgr.OffersResources(alias) {
		fmt.Fprintf(&b, "    resources: readable with %s\n", ReadResource)
	}
	ctx, cancel := context.WithTimeout(context.Background(), promptsTimeout)
	defer cancel()
	prompts, err := s.mgr.Prompts(ctx, alias)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "    prompts: could not be listed (%v)\n", err)
	case len(prompts) > 0:
		names := make([]string, len(prompts))
		for i, p := range prompts {
			names[i] = p.Name
			if len(p.Arguments) > 0 {
				names[i] += "(" + strings.Join(p.Arguments, ", ") + ")"
			}
		}
		fmt.Fprintf(&b, "    prompts (%d): %s\n", len(prompts), strings.Join(names, ", "))
	}
	return b.String()
}

// resourceServers are the servers offering resources, in manifest order.
func (s *Surface) resourceServers() []string {
	if s.mgr == nil {
		return nil
	}
	var out []string
	for _, st := range s.mgr.Status() {
		if s.mgr.OffersResources(st.Alias) {
			out = append(out, st.Alias)
		}
	}
	return out
}
