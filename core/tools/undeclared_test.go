package tools

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// shop is a server that declares no side effects: its payment tools
// escalate by name, and every other tool's class is unknown.
func shop(t *testing.T, skills *skill.Set) (*Surface, *atomic.Int32) {
	t.Helper()
	var reached atomic.Int32
	handle := func(context.Context, map[string]any) (mcp.Result, error) {
		reached.Add(1)
		return mcp.TextResult("done"), nil
	}
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
		Alias: "shop", Transport: mcp.TransportInProcess, Version: "1.0.0",
		Tools: []string{"create_payment", "charge", "purchase", "lookup_product"},
	}}}
	var tools []mcp.ServerTool
	for _, name := range m.Servers[0].Tools {
		tools = append(tools, mcp.ServerTool{Name: name, Description: name + ".", Handle: handle})
	}
	s := spawn(t, Options{Manifest: m, Skills: skills, InProcess: map[string]*mcp.Server{"shop": mcp.NewServer("shop", "1.0.0", tools...)}})
	return s, &reached
}

// TestUndeclaredAskedInDefaultSkill: with no skills configured, the
// shop's payment tools are neither offered nor callable, and its other
// tool, whose class nobody declared, runs only after a person allows each
// call.
func TestUndeclaredAskedInDefaultSkill(t *testing.T) {
	s, reached := shop(t, nil)
	if got := fnNames(s, in("C1", nil)); !slices.Equal(got, []string{"shop__lookup_product"}) {
		t.Errorf("offered %v, want shop__lookup_product alone", got)
	}
	for _, fn := range []string{"shop__create_payment", "shop__charge", "shop__purchase"} {
		ok := &approver{answer: core.GateAnswer{Approved: true, Answer: AllowOnce, By: "UCAROL"}}
		content, isError, _ := dispatch(in("C1", ok.ask), s, fn, map[string]any{"amount": 5})
		if !isError || !strings.Contains(content, "cannot be called directly") {
			t.Errorf("Dispatch(%s) = %q, %v; want refused: only core_execute reaches it", fn, content, isError)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("%d payment calls reached the shop", n)
	}

	args := map[string]any{"sku": "A1"}
	if content, isError, _ := dispatch(in("C1", nil), s, "shop__lookup_product", args); !isError || !strings.Contains(content, "declares no side effects") {
		t.Errorf("undeclared call without an approver = %q, %v; want refused, naming why it asks", content, isError)
	}
	deny := &approver{answer: core.GateAnswer{Answer: DenyCall, By: "UCAROL"}}
	if _, isError, _ := dispatch(in("C1", deny.ask), s, "shop__lookup_product", args); !isError || len(deny.asked) != 1 {
		t.Errorf("denied undeclared call: isError %v, asked %d times; want refused after one question", isError, len(deny.asked))
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("%d undeclared calls ran without an approval", n)
	}
	once := &approver{answer: core.GateAnswer{Approved: true, Answer: AllowOnce, By: "UCAROL"}}
	for range 2 {
		if content, isError, err := dispatch(in("C1", once.ask), s, "shop__lookup_product", args); err != nil || isError || content != "done" {
			t.Fatalf("allowed undeclared call = %q, %v, %v", content, isError, err)
		}
	}
	if len(once.asked) != 2 || reached.Load() != 2 {
		t.Errorf("asked %d times for 2 calls, %d ran; want every call asked", len(once.asked), reached.Load())
	}
	if q := once.asked[0].Question; !strings.Contains(q, "shop/lookup_product (external)") || !strings.Contains(q, `"sku": "A1"`) {
		t.Errorf("question = %q, want the tool and its arguments", q)
	}
}

// TestUndeclaredUnderSkills: a skill that allows external calls still
// asks before an undeclared one; one that denies or asks them does the
// same with it.
func TestUndeclaredUnderSkills(t *testing.T) {
	specs, err := skill.Parse([]byte(`{
		"open": {"places": ["slack:T1/COPEN"]},
		"ext": {"side_effects": {"external": "allow"}, "places": ["slack:T1/CEXT"]},
		"ro": {"side_effects": {"read": "allow"}, "places": ["slack:T1/CRO"]},
		"careful": {"side_effects": {"external": "ask"}, "places": ["slack:T1/CASK"]}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{Alias: "shop", Transport: mcp.TransportInProcess, Version: "1.0.0",
		Tools: []string{"create_payment", "charge", "purchase", "lookup_product"}}}}
	set, err := skill.Compile(specs, m)
	if err != nil {
		t.Fatal(err)
	}
	s, reached := shop(t, set)
	for channel, want := range map[string]skill.Rule{"COPEN": skill.Ask, "CEXT": skill.Ask, "CRO": skill.Deny, "CASK": skill.Ask} {
		sk, _ := s.skillOf(in(channel, nil))
		if got := s.verdict(sk, s.byFunc["shop__lookup_product"]).Rule; got != want {
			t.Errorf("skill %s: undeclared call %s, want %s", sk.Name, got, want)
		}
		if _, isError, _ := dispatch(in(channel, nil), s, "shop__lookup_product", nil); !isError {
			t.Errorf("skill %s: an undeclared call ran with nobody to ask", sk.Name)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d calls reached the shop", n)
	}
}
