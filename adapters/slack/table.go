package slack

import (
	"strings"
	"unicode/utf8"

	"github.com/neobot/neobot/adapters/internal/mdsplit"
)

// Slack's mrkdwn and the markdown_text of its streams have no tables: a
// markdown table would show as raw pipes. Neo's tables are shown as a
// preformatted block instead, its columns aligned.

// tables returns md with each markdown table outside code blocks turned
// into a code block of aligned columns. Text without a table comes back
// as it was.
func tables(md string) string {
	if !strings.Contains(md, "|") {
		return md // most answers: nothing to look at
	}
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
			}
			out = append(out, line)
			continue
		}
		if f := mdsplit.Fence(trimmed); f != "" {
			fence = f
			out = append(out, line)
			continue
		}
		if n := tableAt(lines[i:]); n > 0 {
			out = append(out, alignTable(lines[i:i+n])...)
			i += n - 1
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// tableAt returns how many of lines, from the first, make a markdown
// table: a header row, a delimiter row (|---|:--:|), then rows, each
// starting with a pipe. 0 when lines do not start with one.
func tableAt(lines []string) int {
	if len(lines) < 2 || !isRow(lines[0]) || !isDelimiterRow(lines[1]) {
		return 0
	}
	n := 2
	for n < len(lines) && isRow(lines[n]) {
		n++
	}
	return n
}

// isRow reports whether line is a table row: it starts with a pipe.
func isRow(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "|") }

// isDelimiterRow reports whether line is a table's delimiter row.
func isDelimiterRow(line string) bool {
	if !isRow(line) {
		return false
	}
	cells := cellsOf(line)
	for _, c := range cells {
		c = strings.Trim(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return len(cells) > 0
}

// cellsOf splits a table row into its cells, trimmed. A pipe escaped
// with a backslash stays in its cell.
func cellsOf(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// cellText is what a cell shows in a code block, where markdown is not
// rendered: its emphasis and code marks go.
var cellText = strings.NewReplacer("**", "", "__", "", "`", "")

// alignTable renders a table's lines as a code block: the header, a rule,
// then the rows, every column padded to its widest cell, to the left or,
// where the delimiter row says so (---: or :---:), the right or centre.
func alignTable(lines []string) []string {
	align := cellsOf(lines[1])
	var rows [][]string
	for i, l := range lines {
		if i == 1 {
			continue // the delimiter row: a rule is drawn instead
		}
		cells := cellsOf(l)
		for j, c := range cells {
			cells[j] = cellText.Replace(c)
		}
		rows = append(rows, cells)
	}
	var widths []int
	for _, r := range rows {
		for j, c := range r {
			if j == len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	out := make([]string, 0, len(rows)+3)
	out = append(out, "```")
	for i, r := range rows {
		var b strings.Builder
		for j, w := range widths {
			c := ""
			if j < len(r) {
				c = r[j]
			}
			if j > 0 {
				b.WriteString("  ")
			}
			pad, left := w-utf8.RuneCountInString(c), 0
			if j < len(align) && strings.HasSuffix(align[j], ":") {
				left = pad // right-aligned
				if strings.HasPrefix(align[j], ":") {
					left = pad / 2 // centred
				}
			}
			b.WriteString(strings.Repeat(" ", left) + c + strings.Repeat(" ", pad-left))
		}
		out = append(out, strings.TrimRight(b.String(), " "))
		if i == 0 {
			var rule []string
			for _, w := range widths {
				rule = append(rule, strings.Repeat("─", max(w, 1)))
			}
			out = append(out, strings.Join(rule, "  "))
		}
	}
	return append(out, "```")
}

// streamable returns how much of text, written so far, can be streamed
// now: all of it, except a table (or what may become one) still being
// written at its end, which is held back until a line that is no row
// ends it, so that its columns are aligned once and for all.
func streamable(text string) int {
	if !strings.Contains(text, "|") {
		return len(text)
	}
	lines := strings.Split(text, "\n") // the last one may be unfinished
	k, rows := len(lines)-1, 0
	if strings.TrimSpace(lines[k]) == "" {
		k-- // an unfinished line with nothing on it yet
	}
	for ; k >= 0 && isRow(lines[k]); k-- {
		rows++
	}
	if rows == 0 {
		return len(text)
	}
	at := 0
	for _, l := range lines[:k+1] {
		at += len(l) + 1
	}
	return at
}
