package slack

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/neobot/neobot/adapters/internal/mdsplit"
)

// mrkdwn converts standard markdown, as models write it, to Slack's mrkdwn:
// **bold** and __bold__ become *bold*, *italics* become _italics_,
// ~~strike~~ becomes ~strike~, [text](url) becomes <url|text>, headings
// become bold lines, list bullets become •. Code spans and fenced blocks
// are kept as written (a fence's language tag is dropped, since Slack would
// show it as code). A table becomes a code block of aligned columns
// (tables). &, < and > are escaped as Slack requires, except in Slack's
// own tokens (<@U123>, <#C123>, <!here>, <https://…>).
func mrkdwn(md string) string {
	lines := strings.Split(tables(strings.ReplaceAll(md, "\r\n", "\n")), "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
				out = append(out, "```")
				continue
			}
			out = append(out, escape(line))
			continue
		}
		if f := mdsplit.Fence(trimmed); f != "" {
			fence = f
			out = append(out, "```")
			continue
		}
		out = append(out, convertLine(line))
	}
	if fence != "" {
		out = append(out, "```") // close an unterminated block
	}
	return strings.Join(out, "\n")
}

var (
	headingRE = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	bulletRE  = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	quoteRE   = regexp.MustCompile(`^(\s*)>\s?(.*)$`)
	ruleRE    = regexp.MustCompile(`^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
)

// markup holds every byte a rule of convertLine reacts to, its
// placeholders (\x00, \x01) included: a line with none of them converts
// to itself.
const markup = "#-*+_>`<[!&~\x00\x01"

func convertLine(line string) string {
	if !strings.ContainsAny(line, markup) {
		return line // most of what Neo says: no regexp need look at it
	}
	return convertMarkup(line)
}

// convertMarkup converts a line that may hold markdown.
func convertMarkup(line string) string {
	if ruleRE.MatchString(line) {
		return "──────────"
	}
	if m := headingRE.FindStringSubmatch(line); m != nil {
		// The whole heading turns bold: emphasis inside it would toggle it off.
		inner := inline(strings.NewReplacer("**", "", "__", "").Replace(m[1]))
		if inner == "" {
			return ""
		}
		return "*" + inner + "*"
	}
	if m := bulletRE.FindStringSubmatch(line); m != nil {
		return m[1] + "• " + inline(m[2])
	}
	if m := quoteRE.FindStringSubmatch(line); m != nil {
		return m[1] + "> " + inline(m[2])
	}
	return inline(line)
}

var (
	slackTokenRE = regexp.MustCompile(`<(?:[@#!][^<>\s][^<>]*|(?:https?|mailto):[^<>\s]+)>`)
	imageRE      = regexp.MustCompile(`!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	linkRE       = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	boldRE       = regexp.MustCompile(`\*\*([^*\n]+?)\*\*|__([^_\n]+?)__`)
	italicRE     = regexp.MustCompile(`(^|[^*\w])\*([^*\s](?:[^*\n]*[^*\s])?)\*([^*\w]|$)`)
	strikeRE     = regexp.MustCompile(`~~([^~\n]+?)~~`)
)

// inline converts one line outside code blocks, leaving code spans alone.
func inline(s string) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(inlineText(s))
			break
		}
		b.WriteString(inlineText(s[:i]))
		ticks := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		rest := s[i+ticks:]
		j := strings.Index(rest, strings.Repeat("`", ticks))
		if j < 0 {
			b.WriteString(escape(s[i:]))
			break
		}
		b.WriteString("`" + escape(rest[:j]) + "`")
		s = rest[j+ticks:]
	}
	return b.String()
}

// inlineText converts emphasis and links in text that holds no code span.
func inlineText(s string) string {
	var kept []string
	keep := func(tok string) string {
		kept = append(kept, tok)
		return "\x00" + strconv.Itoa(len(kept)-1) + "\x00"
	}
	s = slackTokenRE.ReplaceAllStringFunc(s, func(tok string) string {
		switch {
		case strings.HasPrefix(tok, "<!date^"):
			return keep(tok)
		case strings.HasPrefix(tok, "<!"):
			// @channel, @here, @everyone, user groups: the model's text
			// never pings a crowd. Left to be escaped, it shows as written.
			return tok
		case strings.HasPrefix(tok, "<http"), strings.HasPrefix(tok, "<mailto:"):
			url, text, _ := strings.Cut(tok[1:len(tok)-1], "|")
			return keep(link(url, text))
		}
		return keep(tok)
	})
	s = imageRE.ReplaceAllStringFunc(s, func(m string) string {
		p := imageRE.FindStringSubmatch(m)
		return keep(link(p[2], p[1]))
	})
	s = linkRE.ReplaceAllStringFunc(s, func(m string) string {
		p := linkRE.FindStringSubmatch(m)
		return keep(link(p[2], p[1]))
	})
	s = escape(s)
	s = boldRE.ReplaceAllString(s, "\x01$1$2\x01")
	for range 2 { // adjacent matches share a boundary character
		s = italicRE.ReplaceAllString(s, "${1}_${2}_${3}")
	}
	s = strikeRE.ReplaceAllString(s, "~$1~")
	s = strings.ReplaceAll(s, "\x01", "*")
	for i, tok := range kept {
		s = strings.Replace(s, "\x00"+strconv.Itoa(i)+"\x00", tok, 1)
	}
	return s
}

// link renders a link so that what it says is where it goes: the text,
// then the real URL. A model (or a daemon's question) can't dress
// https://evil.example as "Approve here".
func link(url, text string) string {
	if mdsplit.SaysURL(text, url) {
		return "<" + url + ">"
	}
	return escapeLinkText(strings.TrimSpace(text)) + " (<" + url + ">)"
}

func escapeLinkText(s string) string {
	s = strings.NewReplacer("**", "", "__", "", "`", "").Replace(s)
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "¦").Replace(s)
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escape(s string) string { return escaper.Replace(s) }
