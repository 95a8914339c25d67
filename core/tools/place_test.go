package tools

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// TestDispatchInThePlaceOfTheTurn: a server with {workspace} answers each
// call from the process of the turn's place: one per Slack workspace, one
// per web user, one per direct message; outside a turn it is not
// available.
func TestDispatchInThePlaceOfTheTurn(t *testing.T) {
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
		Alias: "chain", Transport: mcp.TransportStdio, Command: os.Args[0], Version: "0.3.0",
		Env:         []string{"NEOBOT_TOOLSTEST_SERVE=$env:SERVE", "NEOBOT_TOOLSTEST_PLACE={workspace}"},
		Tools:       append(slices.Clone(chainToolNames), "where"),
		SideEffects: "read",
	}}}
	s := spawn(t, Options{Manifest: m, LookupEnv: func(string) (string, bool) { return "1", true }})
	turn := func(in core.Inbound) context.Context {
		return core.WithTurn(context.Background(), &core.Turn{Inbound: in})
	}
	slack := func(team, user string, dm bool) core.Inbound {
		return core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: team, Channel: "C1", ID: "1.2"}, User: user, DM: dm}
	}
	webUser := func(user string) core.Inbound {
		return core.Inbound{Thread: core.Thread{Platform: "web", Workspace: "web", Channel: user, ID: "c1"}, User: user}
	}
	tests := []struct {
		name string
		in   core.Inbound
		want string
	}{
		{"slack T1, Alice", slack("T1", "UALICE", false), "slack.T1"},
		{"slack T1, Bob", slack("T1", "UBOB", false), "slack.T1"},
		{"slack T2", slack("T2", "UALICE", false), "slack.T2"},
		{"slack DM", slack("T1", "UALICE", true), "slack.T1.UALICE"},
		{"web alice", webUser("alice"), "web.web.alice"},
		{"web bob", webUser("bob"), "web.web.bob"},
		{"crafted web user", webUser("../../etc"), "web.web._2E_2E_2F_2E_2E_2Fetc"},
	}
	for _, tt := range tests {
		got, isErr, err := dispatch(turn(tt.in), s, "chain__where", nil)
		if err != nil || isErr || got != tt.want {
			t.Errorf("Dispatch(where) in %s = %q, %v, %v; want %q", tt.name, got, isErr, err, tt.want)
		}
	}
	if got := s.Servers()[0].Processes; got != 6 {
		t.Errorf("Servers()[0].Processes = %d, want 6 (one per place)", got)
	}
	var b strings.Builder
	if err := s.Describe(&b); err != nil || !strings.Contains(b.String(), "chain (stdio, 0.3.0): up, one process per place (at most 8 at once, each stopped after 10m0s idle)") {
		t.Errorf("Describe() = %q, %v; want the server described as running per place", b.String(), err)
	}
	var none *core.Turn
	if got, isErr, err := s.Dispatch(context.Background(), none.Call("call_1", "chain__where", nil)); err != nil || !isErr || !strings.Contains(got, "not made in a conversation") {
		t.Errorf("Dispatch(where) outside a turn = %q, %v, %v; want an in-band refusal", got, isErr, err)
	}
}
