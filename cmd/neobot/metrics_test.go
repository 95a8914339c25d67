package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/mcp"
)

// TestPlaceProcessMetrics: the place processes of a server that runs one
// per workspace or person are counted live, started and stopped (with
// why), and no place becomes a label.
func TestPlaceProcessMetrics(t *testing.T) {
	tel := newTelemetry()
	for _, ev := range []mcp.ProcessEvent{
		{Alias: "fs", Place: "alice", Kind: mcp.ProcessStarted},
		{Alias: "fs", Place: "bob", Kind: mcp.ProcessStarted},
		{Alias: "fs", Place: "carol", Kind: mcp.ProcessFailed, Reason: "no answer"},
		{Alias: "fs", Place: "alice", Kind: mcp.ProcessStopped, Reason: mcp.StopIdle},
	} {
		tel.observeProcess(ev)
	}
	rec := httptest.NewRecorder()
	tel.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`neobot_place_processes{server="fs"} 1`,
		`neobot_place_process_starts_total{server="fs"} 2`,
		`neobot_place_process_stops_total{reason="idle",server="fs"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, place := range []string{"alice", "bob", "carol"} {
		if strings.Contains(string(body), place) {
			t.Errorf("metrics name the place %q", place)
		}
	}
}

// TestAgentMetrics: what the agent reports is counted, the memory
// write-backs it skipped among them.
func TestAgentMetrics(t *testing.T) {
	tel := newTelemetry()
	for _, ev := range []agent.Event{
		{Kind: agent.EventStep},
		{Kind: agent.EventTurn, Detail: agent.OutcomeAnswered},
		{Kind: agent.EventWriteBackSkipped},
		{Kind: agent.EventWriteBackSkipped},
	} {
		tel.observeAgent(ev)
	}
	rec := httptest.NewRecorder()
	tel.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`neobot_steps_total 1`,
		`neobot_turns_total{outcome="answered"} 1`,
		`neobot_memory_writebacks_skipped_total 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
