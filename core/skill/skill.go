package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// Rule is what a skill does with the calls of one side-effect class.
type Rule string

// Rules.
const (
	// Allow runs the call.
	Allow Rule = "allow"
	// Ask puts an approval in front of each call, with the call's tool and
	// arguments shown: it runs once after "Allow once", never after "Deny".
	Ask Rule = "ask"
	// Deny refuses the call in band, naming the rule.
	Deny Rule = "deny"
)

// DefaultName is the skill every place without a binding gets.
const DefaultName = "default"

// Prompt is a suggested prompt, offered where a platform shows them (the
// Slack assistant pane).
type Prompt struct {
	// Title is the prompt's label.
	Title string `json:"title"`
	// Message is what is sent when it is chosen.
	Message string `json:"message"`
}

// DefaultPrompts are the suggested prompts of a skill that sets none:
// what any team can ask.
func DefaultPrompts() []Prompt {
	return []Prompt{
		{Title: "What can you do?", Message: "What can you help me with here, and which tools can you use?"},
		{Title: "Summarize a discussion", Message: "Summarize the main points and decisions of a discussion I will paste."},
		{Title: "Draft a message", Message: "Help me draft a clear, friendly message to my team."},
	}
}

// Spec is one skill as written in the settings file under "skills".
type Spec struct {
	// Instructions are added to Neo's system block in the skill's places:
	// a persona, house rules.
	Instructions string `json:"instructions,omitempty"`
	// Prompts replace DefaultPrompts (at most 4).
	Prompts []Prompt `json:"prompts,omitempty"`
	// Tools are the pinned tool URIs, with globs in the tool name, that
	// the skill may use. Absent allows every tool of the manifest; an
	// empty list allows none.
	Tools []string `json:"tools,omitempty"`
	// SideEffects maps a class (none, read, write, external) to allow, ask
	// or deny. Absent allows every class; present, a class it does not
	// name is denied.
	SideEffects map[string]string `json:"side_effects,omitempty"`
	// AllowForThread adds "Allow for this thread" to the approval of an
	// asked call: once chosen, calls of the same tool in the same thread
	// run without asking until neobot restarts.
	AllowForThread bool `json:"allow_for_thread,omitempty"`
	// Spend lets the skill delegate spends through core_execute.
	Spend bool `json:"spend,omitempty"`
	// SpendLimits bound the spends the built-in executor runs, per
	// currency (see [Limits]).
	SpendLimits Limits `json:"spend_limits,omitzero"`
	// Approvals route each spend's approval by its amount and currency
	// (see [Policy]); absent, one configured approver decides any spend.
	Approvals *Policy `json:"approvals,omitempty"`
	// Places binds the skill: "slack", "slack:T0123" (a workspace),
	// "slack:T0123/C0456" (a channel and its threads), "slack:dm" (direct
	// messages); the same for "discord" with guild and channel IDs.
	Places []string `json:"places,omitempty"`
}

// Skill is a compiled, validated skill.
type Skill struct {
	// Name is the skill's key in the settings file.
	Name string
	// Instructions are added to the system block.
	Instructions string
	// Prompts are the suggested prompts.
	Prompts []Prompt
	// AllowForThread offers "Allow for this thread" on asked calls.
	AllowForThread bool
	// Spend permits core_execute.
	Spend bool
	// SpendLimits bound spends per currency.
	SpendLimits Limits
	// Approvals is the approval policy; nil: one configured approver
	// decides any spend.
	Approvals *Policy
	// Places are the places bound to the skill, as written.
	Places []string
	// Model is the main model of turns in the place whose stored
	// settings name one (Set.Govern); "" is the configured main model.
	Model string
	// Approvers may approve spends in the place whose stored settings
	// name them (Set.Govern), besides the platform's configured
	// approvers; never elsewhere.
	Approvers []string

	tools []pattern // nil: every tool
	rules map[mcp.Effect]Rule
}

// pattern is one allowlist entry: an exact server and version, a glob for
// the tool.
type pattern struct {
	raw, alias, tool, version string
}

// Verdict is a skill's answer for one call.
type Verdict struct {
	Rule Rule
	// Reason names the rule that refused or asks, for the model and the
	// log; "" when allowed.
	Reason string
}

// Tools returns the skill's tool allowlist as written (pinned URIs, globs
// in the tool name); nil when it allows every tool of the manifest.
func (s *Skill) Tools() []string {
	if s.tools == nil {
		return nil
	}
	out := make([]string, 0, len(s.tools))
	for _, p := range s.tools {
		out = append(out, p.raw)
	}
	return out
}

// Lists reports whether u is on the skill's allowlist.
func (s *Skill) Lists(u mcp.ToolURI) bool {
	if s.tools == nil {
		return true
	}
	for _, p := range s.tools {
		if p.alias == u.Alias && p.version == u.Version {
			if ok, _ := path.Match(p.tool, u.Tool); ok {
				return true
			}
		}
	}
	return false
}

// Rule returns what the skill does with calls of class e. Spend is
// governed by [Skill.Spend], never by a rule.
func (s *Skill) Rule(e mcp.Effect) Rule {
	if e == mcp.EffectSpend {
		if s.Spend {
			return Allow
		}
		return Deny
	}
	if s.rules == nil {
		return Allow
	}
	if r, ok := s.rules[e]; ok {
		return r
	}
	return Deny
}

// Check decides a call of the tool u, of class e.
func (s *Skill) Check(u mcp.ToolURI, e mcp.Effect) Verdict {
	if !s.Lists(u) {
		return Verdict{Rule: Deny, Reason: fmt.Sprintf("skill %q does not list %s in its tools", s.Name, u)}
	}
	switch r := s.Rule(e); r {
	case Allow:
		return Verdict{Rule: Allow}
	case Ask:
		return Verdict{Rule: Ask, Reason: fmt.Sprintf("skill %q asks before %s calls", s.Name, e)}
	default:
		return Verdict{Rule: Deny, Reason: fmt.Sprintf("skill %q denies %s calls (side_effects.%s)", s.Name, e, e)}
	}
}

// CheckUndeclared decides a call of the tool u whose class the manifest
// does not declare: it counts as external, but nobody has said it cannot
// move money, so where the skill would run an external call outright it
// asks first, every call. A skill that denies or asks external calls
// does the same with it.
func (s *Skill) CheckUndeclared(u mcp.ToolURI) Verdict {
	v := s.Check(u, mcp.EffectExternal)
	if v.Rule != Allow {
		return v
	}
	return Verdict{Rule: Ask, Reason: fmt.Sprintf("the manifest declares no side effects for %s, so skill %q asks before each call", u, s.Name)}
}

// Set is every skill and the places bound to them. A nil *Set gives every
// place the built-in default skill.
type Set struct {
	def    *Skill
	byName map[string]*Skill
	places map[string]*Skill
	// governed are the places' stored settings (Govern), read before
	// the file's binding of each place.
	governed atomic.Pointer[map[string]*Skill]
}

var builtin = &Skill{Name: DefaultName, Prompts: DefaultPrompts(), Spend: true}

// For returns the skill of the place in: its channel, else its workspace,
// else its Enterprise Grid organization, else its platform; a direct
// message its platform's "dm" binding, else the platform's; anything else
// the default skill.
func (s *Set) For(in core.Inbound) *Skill {
	if s == nil {
		return builtin
	}
	var keys [4]string
	copy(keys[:], PlacesOf(in))
	var governed map[string]*Skill
	if g := s.governed.Load(); g != nil {
		governed = *g
	}
	for _, k := range keys {
		if k == "" {
			continue
		}
		if sk, ok := governed[k]; ok {
			return sk
		}
		if sk, ok := s.places[k]; ok {
			return sk
		}
	}
	return s.def
}

// Skills returns every skill, the default first, then by name.
func (s *Set) Skills() []*Skill {
	if s == nil {
		return []*Skill{builtin}
	}
	out := []*Skill{s.def}
	for _, name := range slices.Sorted(maps.Keys(s.byName)) {
		if sk := s.byName[name]; sk != s.def {
			out = append(out, sk)
		}
	}
	return out
}

// Asks reports whether any skill asks before some class of calls, which
// needs someone who may answer.
func (s *Set) Asks() bool {
	for _, sk := range s.Skills() {
		for _, r := range sk.rules {
			if r == Ask {
				return true
			}
		}
	}
	return false
}

// Parse decodes the "skills" object of a settings file: skill names to
// specs. Unknown fields are refused, so a misspelt rule never silently
// allows more.
func Parse(data []byte) (map[string]Spec, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("skills: not a JSON object of skills by name (%v); write it like {\"reader\": {\"tools\": [...]}}", err)
	}
	out := make(map[string]Spec, len(raw))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		dec := json.NewDecoder(bytes.NewReader(raw[name]))
		dec.DisallowUnknownFields()
		var sp Spec
		if err := dec.Decode(&sp); err != nil {
			errs = append(errs, fmt.Errorf("skill %q: %v; see docs/skills.md for the fields", name, strings.TrimPrefix(err.Error(), "json: ")))
			continue
		}
		out[name] = sp
	}
	return out, errors.Join(errs...)
}

var (
	nameRe  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)
	placeRe = regexp.MustCompile(`^([a-z]+)(?::(dm|[A-Za-z0-9_@.-]+(?:/[A-Za-z0-9_.-]+)?))?$`)
)

// Compile validates specs against the manifest and returns the set. Every
// problem is reported, each naming the skill, the field and the fix: an
// allowlist URI that is malformed, unpinned, names an unknown server, pins
// another version than the manifest, or matches no tool; an unknown class
// or rule; a malformed place or one bound twice. Without a "default"
// spec, places without a binding get the built-in default skill.
func Compile(specs map[string]Spec, m *mcp.Manifest) (*Set, error) {
	set := &Set{def: builtin, byName: map[string]*Skill{}, places: map[string]*Skill{}}
	var errs []error
	bad := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("skill %q: "+format, append([]any{name}, a...)...))
	}
	owner := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		sp := specs[name]
		if !nameRe.MatchString(name) {
			bad(name, "is not a skill name; use 1-32 lowercase letters, digits, '-' or '_'")
			continue
		}
		sk := &Skill{Name: name, Instructions: strings.TrimSpace(sp.Instructions), Prompts: sp.Prompts,
			AllowForThread: sp.AllowForThread, Spend: sp.Spend, Places: sp.Places, SpendLimits: sp.SpendLimits, Approvals: sp.Approvals}
		for _, problem := range checkLimits(sp.SpendLimits, m) {
			bad(name, "%s", problem)
		}
		for _, problem := range checkPolicy(sp.Approvals, sp.Spend) {
			bad(name, "%s", problem)
		}
		if sk.Prompts == nil {
			sk.Prompts = DefaultPrompts()
		}
		if len(sk.Prompts) > 4 {
			bad(name, "has %d prompts; Slack shows at most 4, so list 4 or fewer", len(sk.Prompts))
		}
		for i, p := range sk.Prompts {
			if strings.TrimSpace(p.Title) == "" || strings.TrimSpace(p.Message) == "" {
				bad(name, "prompts[%d] needs both a title and a message", i)
			}
		}
		if len(sk.Instructions) > 8000 {
			bad(name, "instructions are %d bytes; keep them under 8000, they are sent with every model call", len(sk.Instructions))
		}
		if sp.Tools != nil {
			sk.tools = []pattern{}
			for i, raw := range sp.Tools {
				p, err := compilePattern(raw, m)
				if err != nil {
					bad(name, "tools[%d]: %v", i, err)
					continue
				}
				sk.tools = append(sk.tools, p)
			}
		}
		if sp.SideEffects != nil {
			sk.rules = map[mcp.Effect]Rule{}
			for _, class := range slices.Sorted(maps.Keys(sp.SideEffects)) {
				e, err := mcp.ParseEffect(class)
				switch {
				case err != nil:
					bad(name, "side_effects: %v", err)
					continue
				case e == mcp.EffectSpend:
					bad(name, `side_effects names "spend"; spends are governed by "spend": true or false`)
					continue
				}
				switch r := Rule(sp.SideEffects[class]); r {
				case Allow, Ask, Deny:
					sk.rules[e] = r
				default:
					bad(name, "side_effects.%s is %q; use allow, ask or deny", class, sp.SideEffects[class])
				}
			}
		}
		for _, pl := range sp.Places {
			if !placeRe.MatchString(pl) {
				bad(name, "place %q is not a place; write slack, slack:dm, slack:<team>, slack:<team>/<channel> (the same for discord)", pl)
				continue
			}
			if prev, dup := owner[pl]; dup {
				bad(name, "place %q is already bound to skill %q; bind each place to one skill", pl, prev)
				continue
			}
			owner[pl] = name
			set.places[pl] = sk
		}
		set.byName[name] = sk
		if name == DefaultName {
			set.def = sk
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return set, nil
}

// compilePattern parses one allowlist URI and checks it against the
// manifest: known server, the manifest's version, and at least one tool.
func compilePattern(raw string, m *mcp.Manifest) (pattern, error) {
	rest, ok := strings.CutPrefix(raw, mcp.URIPrefix)
	if !ok {
		return pattern{}, fmt.Errorf("%q is not a tool URI; write %s<server>/<tool glob>@<version>", raw, mcp.URIPrefix)
	}
	alias, tool, ok := strings.Cut(rest, "/")
	at := strings.LastIndex(tool, "@")
	switch {
	case !ok || alias == "" || tool == "":
		return pattern{}, fmt.Errorf("%q is not a tool URI; write %s<server>/<tool glob>@<version>", raw, mcp.URIPrefix)
	case at < 0 || at == len(tool)-1:
		return pattern{}, fmt.Errorf("%q is not pinned; append @<version>, the version the manifest pins", raw)
	}
	p := pattern{raw: raw, alias: alias, tool: tool[:at], version: tool[at+1:]}
	if _, err := path.Match(p.tool, ""); err != nil {
		return pattern{}, fmt.Errorf("%q: the tool glob %q is malformed (%v)", raw, p.tool, err)
	}
	if m == nil {
		return pattern{}, fmt.Errorf("%q names server %q, but there is no manifest", raw, alias)
	}
	var spec *mcp.ServerSpec
	for i := range m.Servers {
		if m.Servers[i].Alias == alias {
			spec = &m.Servers[i]
		}
	}
	switch {
	case spec == nil:
		return pattern{}, fmt.Errorf("%q names server %q, which the manifest does not declare", raw, alias)
	case spec.Version != p.version:
		return pattern{}, fmt.Errorf("%q pins %s@%s, but the manifest pins %s@%s; make the two versions agree", raw, alias, p.version, alias, spec.Version)
	}
	for _, t := range spec.Tools {
		if ok, _ := path.Match(p.tool, t); ok {
			return p, nil
		}
	}
	return pattern{}, fmt.Errorf("%q matches none of server %q's tools (%s)", raw, alias, strings.Join(spec.Tools, ", "))
}
