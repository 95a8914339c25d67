package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// ReadResource reads a resource (a link or a resource a tool returned)
// from a server of the place.
const ReadResource = "read_resource"

func readResourceSchema(servers []string) llm.Tool {
	return llm.NewFunctionTool(ReadResource,
		"Read a resource from one of your tool servers: a resource link or resource a tool returned "+
			"(their lines name the server and the URI). Reading changes nothing.",
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"server": map[string]any{"type": "string", "enum": servers, "description": "The server the resource is on."},
				"uri":    map[string]any{"type": "string", "description": "The resource's URI, exactly as given."},
			},
			"required": []string{"server", "uri"},
		})
}

// readableServers are the servers whose resources the place may read:
// those offering resources with at least one tool the place's skill
// allows outright (not one it asks about, not a spend tool), sorted.
func (s *Surface) readableServers(sk *skill.Skill) []string {
	if s.mgr == nil {
		return nil
	}
	var out []string
	for _, b := range s.byFunc {
		if slices.Contains(out, b.alias) || b.class == Escalate || s.verdict(sk, b).Rule != skill.Allow {
			continue
		}
		if s.mgr.OffersResources(b.alias) {
			out = append(out, b.alias)
		}
	}
	slices.Sort(out)
	return out
}

// readResource serves read_resource: the server must be one the place may
// read; the resource's text comes back for the model, and its pictures
// and files go to the thread like a tool's.
func (s *Surface) readResource(ctx context.Context, call core.ToolCall, sk *skill.Skill) (string, bool, error) {
	args := call.Args()
	alias, _ := args["server"].(string)
	uri, _ := args["uri"].(string)
	if alias == "" || strings.TrimSpace(uri) == "" {
		return ReadResource + ` needs "server" and "uri": the server the resource is on and its URI, as a tool result gave them.`, true, nil
	}
	servers := s.readableServers(sk)
	if !slices.Contains(servers, alias) {
		if len(servers) == 0 {
			return fmt.Sprintf("no server's resources can be read here, so %q cannot be read.", uri), true, nil
		}
		return fmt.Sprintf("server %q's resources cannot be read here; the servers you may read from are %s.", alias, strings.Join(servers, ", ")), true, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	res, err := s.mgr.ReadResource(callCtx, placeOf(call.Turn().Inbound), alias, uri)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return "", false, fmt.Errorf("tools: %s: %w", ReadResource, ctx.Err())
	case errors.Is(err, mcp.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded):
		return "", false, &RetryableError{Err: err, Text: fmt.Sprintf("server %q is not answering just now; try reading %s again shortly, or carry on without it.", alias, uri)}
	default:
		return fmt.Sprintf("%s could not be read from %q: %v", uri, alias, err), true, nil
	}
	if !res.IsError {
		sendFiles(ctx, ReadResource, blobsOnly(res))
	}
	return render(res), res.IsError, nil
}

// blobsOnly keeps a read's binary contents: its text is for the model,
// not a file for the thread.
func blobsOnly(r mcp.Result) mcp.Result {
	out := mcp.Result{}
	for _, c := range r.Content {
		if c.Data != "" {
			out.Content = append(out.Content, c)
		}
	}
	return out
}

// resourceHint tells the model how to read the resources and links a
// tool of server alias returned, when it may.
func (s *Surface) resourceHint(sk *skill.Skill, alias string, r mcp.Result) string {
	has := slices.ContainsFunc(r.Content, func(c mcp.Content) bool {
		return c.Type == mcp.ContentResourceLink || (c.Type == mcp.ContentResource && c.URI != "")
	})
	if !has || !slices.Contains(s.readableServers(sk), alias) {
		return ""
	}
	return fmt.Sprintf("\n[These resources are on server %q: read one with %s {\"server\": %q, \"uri\": \"<its URI>\"}.]", alias, ReadResource, alias)
}
