package compact

import "strings"

// goalCap caps the goal Goal returns: it is pinned in every system block,
// so a rambling GOAL section must not crowd the window.
const goalCap = 300

// sectionNames are the section headers a consolidated summary uses
// (summarySystem's schema plus the ledger); any of them ends the GOAL
// section.
var sectionNames = []string{"GOAL", "DECISIONS", "ARTIFACTS", "OPEN", "LAST_RESULTS", "NEXT", "LEDGER"}

// Goal returns the GOAL section of a consolidated summary on one line,
// capped at a few hundred bytes, or "" when the summary has no GOAL or
// says there is none. It tolerates the markup models add to headers
// ("**GOAL:**", "## Goal"). It reads only up to the end of the GOAL
// section, which the schema puts first, so it is cheap on any summary.
func Goal(summary string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(summary) {
		name, rest, ok := sectionHeader(line)
		if ok {
			if in {
				break
			}
			if name == "GOAL" {
				in = true
				b.WriteString(rest)
			}
			continue
		}
		if !in {
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" {
			if strings.TrimSpace(b.String()) != "" {
				break
			}
			continue
		}
		b.WriteString(" " + strings.TrimPrefix(t, "- "))
	}
	goal := strings.Join(strings.Fields(b.String()), " ")
	switch strings.ToLower(strings.TrimRight(goal, ".")) {
	case "", "-", "none", "(none)", "n/a", "unknown", "unclear", "not stated":
		return ""
	}
	return clipGoal(goal)
}

// sectionHeader reports whether line opens a summary section, and returns
// the section's name and any text on the header line after the colon.
func sectionHeader(line string) (name, rest string, ok bool) {
	t := strings.TrimSpace(line)
	hashed := strings.HasPrefix(t, "#")
	t = strings.TrimLeft(t, "#* ")
	n := 0
	for n < len(t) && (t[n] == '_' || t[n]|0x20 >= 'a' && t[n]|0x20 <= 'z') {
		n++
	}
	if n == 0 {
		return "", "", false
	}
	name = strings.ToUpper(t[:n])
	known := false
	for _, s := range sectionNames {
		if name == s {
			known = true
			break
		}
	}
	if !known {
		return "", "", false
	}
	after := strings.TrimLeft(t[n:], "* ")
	if strings.HasPrefix(after, "(") {
		if k := strings.IndexByte(after, ')'); k >= 0 {
			after = strings.TrimLeft(after[k+1:], "* ")
		}
	}
	switch {
	case strings.HasPrefix(after, ":"):
		return name, strings.TrimLeft(after[1:], "* "), true
	case hashed && strings.TrimRight(after, "*: ") == "":
		return name, "", true
	}
	return "", "", false
}

// clipGoal caps goal at goalCap bytes on a word boundary.
func clipGoal(goal string) string {
	if len(goal) <= goalCap {
		return goal
	}
	cut := strings.LastIndexByte(goal[:goalCap], ' ')
	if cut <= 0 {
		cut = goalCap
		for cut > 0 && goal[cut]&0xC0 == 0x80 {
			cut--
		}
	}
	return strings.TrimRight(goal[:cut], " ,;") + "…"
}
