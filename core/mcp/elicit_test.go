package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/neobot/neobot/core"
)

// askingServer serves "ask", which asks its client for a size and
// returns what came back as "action size".
func askingServer() *Server {
	var s *Server
	s = NewServer("asker", "1.0.0", ServerTool{Name: "ask", Description: "Ask for a size.",
		Handle: func(ctx context.Context, _ map[string]any) (Result, error) {
			res, err := s.Elicit(ctx, "Which size?", map[string]any{"type": "object",
				"properties": map[string]any{"size": map[string]any{"type": "string", "enum": []any{"s", "m"}, "default": "s"}}})
			if err != nil {
				return ErrorResult("elicit: " + err.Error()), nil
			}
			return TextResult(fmt.Sprintf("%s %v", res.Action, res.Content["size"])), nil
		}})
	return s
}

// TestElicitReachesTheTurn: a question a server asks during a call, over
// streamable HTTP on loopback and in process, reaches the ElicitFunc with
// the context of that call (its turn), and the answer goes back to the
// server. The HTTP server is one of 2025-11-25, where a question is a
// server-to-client request (elicitation/create); 2026-07-28 replaced
// those with input_required results.
func TestElicitReachesTheTurn(t *testing.T) {
	ts := httptest.NewServer(olderRevision(askingServer().Handler(), "method"))
	t.Cleanup(ts.Close)
	specs := map[string]ServerSpec{
		"http":       {Alias: "a", Transport: TransportHTTP, URL: ts.URL, Version: "1.0.0", Tools: []string{"ask"}},
		"in-process": {Alias: "a", Transport: TransportInProcess, Version: "1.0.0", Tools: []string{"ask"}},
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			turn := &core.Turn{Inbound: core.Inbound{User: "U1"}}
			var got Elicitation
			elicit := func(ctx context.Context, e Elicitation) (ElicitResult, error) {
				if tt, ok := core.TurnFrom(ctx); !ok || tt != turn {
					return ElicitResult{Action: ElicitDecline}, nil
				}
				got = e
				return ElicitResult{Action: ElicitAccept, Content: map[string]any{"size": "m"}}, nil
			}
			m := start(t, Options{Manifest: manifest(spec), Elicit: elicit, InProcess: map[string]*Server{"a": askingServer()}})
			res, err := m.Call(core.WithTurn(t.Context(), turn), "a", "ask", nil)
			if err != nil || res.IsError || res.Content[0].Text != "accept m" {
				t.Fatalf("Call(ask) = %+v, %v; want the accepted size back", res, err)
			}
			var schema map[string]any
			if got.Server != "a" || got.Message != "Which size?" || json.Unmarshal(got.Schema, &schema) != nil || schema["properties"] == nil {
				t.Errorf("ElicitFunc got %+v, want server a's question and schema", got)
			}
		})
	}
}

// TestElicitWithoutHandler: with no ElicitFunc neobot declares no
// elicitation, so the server cannot ask; the tool sees the failure.
func TestElicitWithoutHandler(t *testing.T) {
	spec := ServerSpec{Alias: "a", Transport: TransportInProcess, Version: "1.0.0", Tools: []string{"ask"}}
	m := start(t, Options{Manifest: manifest(spec), InProcess: map[string]*Server{"a": askingServer()}})
	res, err := m.Call(t.Context(), "a", "ask", nil)
	if err != nil || !res.IsError {
		t.Fatalf("Call(ask) = %+v, %v; want the tool's in-band failure", res, err)
	}
}

// TestElicitOwner: a question belongs to the one call in flight, or to
// several calls of one turn; calls of two turns make it nobody's.
func TestElicitOwner(t *testing.T) {
	var c calls
	if _, err := c.owner(sameTurn); err == nil {
		t.Error("owner with no call in flight = nil error, want none")
	}
	t1, t2 := &core.Turn{}, &core.Turn{}
	end1 := c.begin(core.WithTurn(t.Context(), t1))
	end2 := c.begin(core.WithTurn(t.Context(), t1))
	if ctx, err := c.owner(sameTurn); err != nil {
		t.Errorf("owner of two calls of one turn = %v", err)
	} else if tt, _ := core.TurnFrom(ctx); tt != t1 {
		t.Error("owner is not the turn's call")
	}
	end3 := c.begin(core.WithTurn(t.Context(), t2))
	if _, err := c.owner(sameTurn); err == nil {
		t.Error("owner of two turns' calls = nil error, want ambiguous")
	}
	end1()
	end2()
	end3()
}
