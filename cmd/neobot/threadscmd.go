package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// runThreads is `neobot threads list|show KEY|export KEY`: the stored
// conversations, one transcript as text, or one exported as JSON or
// Markdown.
func (m *Main) runThreads(ctx context.Context, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = append([]string{"list"}, args...)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("threads: say list, show KEY or export KEY [--format json|markdown]")
	}
	verb, args := args[0], args[1:]
	if len(args) > 1 && !strings.HasPrefix(args[0], "-") {
		args = append(args[1:], args[0]) // the key first, flags after: flags stop at the key
	}
	format, limit := "markdown", 50
	cfg, rest, _, err := m.setup("neobot threads "+verb, args, func(fs *flag.FlagSet) {
		fs.StringVar(&format, "format", format, "export: json or markdown")
		fs.IntVar(&limit, "limit", limit, "list: most threads shown, most recent first (0: all)")
	})
	if err != nil {
		return err
	}
	src, err := m.openAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	switch verb {
	case "list":
		threads, err := src.Threads(ctx)
		if err != nil {
			return fmt.Errorf("threads list: %w", err)
		}
		if limit > 0 && len(threads) > limit {
			threads = threads[:limit]
		}
		tw := tabwriter.NewWriter(m.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "THREAD\tLAST ACTIVE\tENTRIES\tARCHIVED")
		for _, t := range threads {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", t.Thread.Key(), t.Active.Format(time.RFC3339), t.Entries, t.Archived)
		}
		return tw.Flush()
	case "show", "export":
		if len(rest) != 1 {
			return fmt.Errorf("threads %s: give one thread key, as neobot threads list prints it", verb)
		}
		tr, err := src.Transcript(ctx, rest[0])
		if err != nil {
			return fmt.Errorf("threads %s: %w", verb, err)
		}
		if verb == "export" && format == "json" {
			enc := json.NewEncoder(m.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(tr)
		}
		if format != "json" && format != "markdown" {
			return fmt.Errorf("threads export: --format %q: say json or markdown", format)
		}
		return writeMarkdown(m.Stdout, tr)
	}
	return fmt.Errorf("threads: unknown verb %q; say list, show or export", verb)
}

// writeMarkdown writes a transcript for people: who said what, the tools
// Neo called and what they returned, and the summary of anything
// compacted.
func writeMarkdown(w io.Writer, tr transcript) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", tr.Thread)
	if tr.Summary != "" {
		fmt.Fprintf(&b, "\n## Summary of earlier messages\n\n%s\n", strings.TrimSpace(tr.Summary))
	}
	b.WriteString("\n## Messages\n")
	for _, msg := range tr.Messages {
		switch msg.Role {
		case "user":
			fmt.Fprintf(&b, "\n**User:** %s\n", msg.Content)
		case "assistant":
			if strings.TrimSpace(msg.Content) != "" {
				fmt.Fprintf(&b, "\n**Neo:** %s\n", msg.Content)
			}
			for _, c := range msg.ToolCalls {
				fmt.Fprintf(&b, "\n> calls `%s`\n", c)
			}
		case "tool":
			fmt.Fprintf(&b, "\n> `%s` returned:\n>\n> %s\n", msg.Name, strings.ReplaceAll(oneLineCap(msg.Content, 2000), "\n", "\n> "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLineCap caps s at n bytes on a rune boundary.
func oneLineCap(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + " …"
}
