package core_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// TestDecideReadsTheFlag: a click approves only through the option's
// Approves flag, whatever its label says in any language.
func TestDecideReadsTheFlag(t *testing.T) {
	tests := []struct {
		name    string
		options []core.Option
		click   string
		want    core.GateState
	}{
		{"yes-word not marked", []core.Option{{Label: "Ja"}, {Label: "Nein"}}, "Ja", core.GateDenied},
		{"allow not marked", []core.Option{{Label: "Allow once"}, {Label: "Deny"}}, "Allow once", core.GateDenied},
		{"no-word marked", []core.Option{{Label: "Nein", Approves: true}, {Label: "Ja"}}, "Nein", core.GateApproved},
		{"any words marked", []core.Option{{Label: "Ship it 🚀", Approves: true}, {Label: "Hold"}}, "Ship it 🚀", core.GateApproved},
		{"the other option", []core.Option{{Label: "Yes", Approves: true}, {Label: "Yes, really"}}, "Yes, really", core.GateDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gates, _, _ := newGates(t)
			req := gateReq("n1")
			req.Options = tt.options
			g, _, err := gates.Open(t.Context(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			d, err := gates.Decide(t.Context(), g.Token, "U1", nil, tt.click)
			if err != nil || d.State != tt.want || d.Decision().Approved != (tt.want == core.GateApproved) {
				t.Errorf("Decide(%q) = %s, approved %v, %v; want %s", tt.click, d.State, d.Decision().Approved, err, tt.want)
			}
		})
	}
}

// legacyGate is a pending gate as the version before typed options stored
// it (options as plain labels), with the binding that version computed for
// legacyReq.
const legacyGate = `{"token":"tok-old","thread":{"platform":"slack","workspace":"T1","channel":"C1","id":"1700.1"},"intent_id":"i1","node_id":"n1","call_id":"call-1","question":"Send 5 PAX to 0xabc?","options":["Yes, send 5 PAX","Don't send"],"binding":"867169c34ebe6c8b912ec5adb2d7cd7709c6e099817a47d635070a45639d95fc","requester":"U1","allowed":["U2"],"created":"2023-11-14T22:13:20Z","expires":"2023-11-14T23:13:20Z","state":"pending"}`

// legacyReq is the daemon's request that opened legacyGate, as it is made
// now.
func legacyReq() core.GateRequest {
	return core.GateRequest{
		Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1700.1"}, IntentID: "i1", NodeID: "n1", CallID: "call-1",
		Question: "Send 5 PAX to 0xabc?", Options: []core.Option{{Label: "Yes, send 5 PAX", Approves: true}, {Label: "Don't send"}}, Requester: "U1",
	}
}

// TestGateStoredByEarlierVersion: a gate stored with options as plain
// labels loads with the flags the label parser gives them, keeps its
// binding, and a click on its buttons after the upgrade decides it as
// before.
func TestGateStoredByEarlierVersion(t *testing.T) {
	var g core.Gate
	if err := json.Unmarshal([]byte(legacyGate), &g); err != nil {
		t.Fatalf("decode a gate stored by an earlier version: %v", err)
	}
	if want := legacyReq().Options; !slices.Equal(g.Options, want) {
		t.Errorf("options = %v, want %v", g.Options, want)
	}
	if b := legacyReq().Binding(); b != g.Binding {
		t.Errorf("binding of the same request = %s, want %s as stored", b, g.Binding)
	}

	for _, click := range []struct {
		label string
		want  core.GateState
	}{{"Yes, send 5 PAX", core.GateApproved}, {"Don't send", core.GateDenied}} {
		store := coretest.NewGateStore()
		if err := store.CreateGate(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		gates := core.NewGates(core.GatesOptions{Store: store, Clock: coretest.NewClock(g.Created.Add(time.Minute))})
		found, fresh, err := gates.Open(t.Context(), legacyReq(), []string{"U2"})
		if err != nil || fresh || found.Token != g.Token {
			t.Fatalf("Open(the same request after the upgrade) = %s fresh %v, %v; want the stored gate", found.Token, fresh, err)
		}
		c, err := gates.Answer(t.Context(), g.Token, slices.IndexFunc(g.Options, func(o core.Option) bool { return o.Label == click.label }), "U2", nil)
		if err != nil || c.Refusal != "" || c.Gate.State != click.want {
			t.Errorf("click %q = %+v, %v; want %s", click.label, c, err, click.want)
		}
	}
}

func TestOptionJSON(t *testing.T) {
	for _, o := range []core.Option{{Label: "Approve", Approves: true}, {Label: "Deny"}, {Label: "Yes"}} {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var back core.Option
		if err := json.Unmarshal(raw, &back); err != nil || back != o {
			t.Errorf("round trip of %+v through %s = %+v, %v", o, raw, back, err)
		}
	}
	var o core.Option
	if err := json.Unmarshal([]byte(`42`), &o); err == nil {
		t.Errorf("Unmarshal(42) = %+v, nil; want an error", o)
	}
}
