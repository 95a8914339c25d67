package core_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// elicitSchema is a requested schema as a server sends it: a text field
// with a default, a bounded integer, and an email.
var elicitSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string", "title": "Name", "default": "Ada", "maxLength": 10},
		"age":   map[string]any{"type": "integer", "minimum": 18, "maximum": 120},
		"email": map[string]any{"type": "string", "format": "email"},
	},
	"required": []any{"age"},
}

func TestFormFill(t *testing.T) {
	f, err := core.ParseForm(elicitSchema)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		input    map[string]string
		want     map[string]any
		problems []string
	}{
		{"defaults fill what is left empty", map[string]string{"age": "42"}, map[string]any{"name": "Ada", "age": int64(42)}, nil},
		{"typed values win", map[string]string{"name": "Grace", "age": "30", "email": "g@x.org"}, map[string]any{"name": "Grace", "age": int64(30), "email": "g@x.org"}, nil},
		{"required missing", map[string]string{}, nil, []string{"age"}},
		{"below minimum", map[string]string{"age": "17"}, nil, []string{"age"}},
		{"not a whole number", map[string]string{"age": "20.5"}, nil, []string{"age"}},
		{"not a number", map[string]string{"age": "old"}, nil, []string{"age"}},
		{"too long", map[string]string{"age": "20", "name": "Bartholomew the Third"}, nil, []string{"name"}},
		{"bad email", map[string]string{"age": "20", "email": "nope"}, nil, []string{"email"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := f.Fill(tt.input)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fill(%v) = %v, want %v", tt.input, got, tt.want)
			}
			for _, field := range tt.problems {
				if problems[field] == "" {
					t.Errorf("Fill(%v) problems = %v, want one for %s", tt.input, problems, field)
				}
			}
			if len(problems) != len(tt.problems) {
				t.Errorf("Fill(%v) problems = %v, want %d", tt.input, problems, len(tt.problems))
			}
		})
	}
	if got := f.WithDefaults(map[string]any{"age": 20}); got["name"] != "Ada" || got["age"] != 20 {
		t.Errorf("WithDefaults = %v, want name Ada added, age kept", got)
	}
}

func TestParseFormOrderAndChoice(t *testing.T) {
	raw := []byte(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}}`)
	f, err := core.ParseForm(jsonRaw(raw))
	if err != nil {
		t.Fatal(err)
	}
	if f.Fields[0].Name != "zeta" || f.Fields[1].Name != "alpha" {
		t.Errorf("ParseForm kept order %s, %s; want the schema's zeta, alpha", f.Fields[0].Name, f.Fields[1].Name)
	}
	if _, ok := f.Choice(); ok {
		t.Error("two text fields are a choice, want a form")
	}
	tests := []struct {
		schema any
		want   []string
	}{
		{map[string]any{"properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}, []string{"Yes", "No", core.ElicitDecline, core.ElicitCancel}},
		{map[string]any{"properties": map[string]any{"size": map[string]any{"type": "string", "enum": []any{"s", "m"}, "enumNames": []any{"Small", "Medium"}}}}, []string{"Small", "Medium", core.ElicitDecline, core.ElicitCancel}},
		{map[string]any{"properties": map[string]any{"note": map[string]any{"type": "string"}}}, []string{core.ElicitOpen, core.ElicitDecline, core.ElicitCancel}},
	}
	for _, tt := range tests {
		f, err := core.ParseForm(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		got := f.Options()
		if !reflect.DeepEqual(core.Labels(got), tt.want) {
			t.Errorf("Options(%v) = %v, want %v", tt.schema, got, tt.want)
		}
		// What answers the question is marked; Decline and Cancel are not.
		for _, o := range got {
			if answers := o.Label != core.ElicitDecline && o.Label != core.ElicitCancel; o.Approves != answers {
				t.Errorf("Options(%v): %q Approves = %v, want %v", tt.schema, o.Label, o.Approves, answers)
			}
		}
	}
	nested := map[string]any{"properties": map[string]any{"addr": map[string]any{"type": "object"}}}
	if _, err := core.ParseForm(nested); !errors.Is(err, core.ErrFormUnsupported) {
		t.Errorf("ParseForm(nested) = %v, want ErrFormUnsupported", err)
	}
}

// TestQuestionChoiceLabelsUnique: a server's choice titles can repeat, or
// be the name of one of neobot's own buttons. Each button must still
// answer with its own value.
func TestQuestionChoiceLabelsUnique(t *testing.T) {
	ctx := t.Context()
	gates, _, _ := newGates(t)
	schema := map[string]any{"properties": map[string]any{"pick": map[string]any{"type": "string",
		"enum": []any{"a", "b", "c", "d"}, "enumNames": []any{"Yes", "Yes", core.ElicitDecline, "Yes (b)"}}}}
	req := formReq(t, schema)
	g, _, err := gates.Open(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Yes", "Yes (b)", "Decline (c)", "Yes (b) (d)", core.ElicitDecline, core.ElicitCancel}
	if got := core.Labels(g.Options); !reflect.DeepEqual(got, want) {
		t.Fatalf("options = %q, want %q", got, want)
	}
	for i, value := range []string{"a", "b", "c", "d"} {
		req.NodeID = fmt.Sprintf("ev1/call1/%d", i+10)
		g, _, err := gates.Open(ctx, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := gates.Answer(ctx, g.Token, i, "U1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := c.Gate.Decision(); d.Action() != core.ElicitAccepted || d.Values != `{"pick":"`+value+`"}` {
			t.Errorf("button %d (%q) answered %s %s, want accept with %s", i, want[i], d.Action(), d.Values, value)
		}
	}
}

type jsonRaw []byte

func (r jsonRaw) MarshalJSON() ([]byte, error) { return r, nil }

func formReq(t *testing.T, schema any) core.GateRequest {
	t.Helper()
	f, err := core.ParseForm(schema)
	if err != nil {
		t.Fatal(err)
	}
	return core.GateRequest{Thread: gateThread, IntentID: "elicit:srv/tool", NodeID: "ev1/call1/1", CallID: "call1",
		Question: "Which size?", Requester: "U1", Form: f, TTL: 5 * time.Minute}
}

// TestQuestionGate: a server's question is answered only by the requester
// (configured approvers included in Allowed notwithstanding), a choice
// button accepts with its value, Decline declines, and a typed form is
// checked, with defaults applied.
func TestQuestionGate(t *testing.T) {
	ctx := t.Context()
	gates, _, clk := newGates(t)
	choice := formReq(t, map[string]any{"properties": map[string]any{"size": map[string]any{"type": "string", "enum": []any{"s", "m"}}}})
	g, _, err := gates.Open(ctx, choice, []string{"U-admin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Allowed) != 0 || !g.Expires.Equal(clk.Now().Add(5*time.Minute)) {
		t.Errorf("question gate allowed %v, expires %v; want nobody but the requester, in the request's TTL", g.Allowed, g.Expires)
	}
	c, _ := gates.Answer(ctx, g.Token, 0, "U-admin", nil)
	if c.Refusal != "Sorry, only <@U1> can answer this question." {
		t.Errorf("approver's click refused with %q", c.Refusal)
	}
	c, err = gates.Answer(ctx, g.Token, 1, "U1", nil)
	if err != nil || c.Gate.State != core.GateApproved {
		t.Fatalf("requester's click = %+v, %v", c, err)
	}
	if ans := c.Gate.Decision(); ans.Action() != core.ElicitAccepted || ans.Values != `{"size":"m"}` {
		t.Errorf("decision = %+v (%s), want accept with size m", ans, ans.Action())
	}

	decline := formReq(t, map[string]any{"properties": map[string]any{"ok": map[string]any{"type": "boolean"}}})
	decline.NodeID = "ev1/call1/2"
	g, _, _ = gates.Open(ctx, decline, nil)
	c, _ = gates.Answer(ctx, g.Token, 2, "U1", nil) // Decline
	if a := c.Gate.Decision().Action(); a != core.ElicitDeclined {
		t.Errorf("Decline = %s, want decline", a)
	}

	typed := formReq(t, elicitSchema)
	typed.NodeID = "ev1/call1/3"
	g, _, _ = gates.Open(ctx, typed, nil)
	if c, _ := gates.Answer(ctx, g.Token, 0, "U1", nil); !c.OpenForm {
		t.Errorf("Answer… click = %+v, want the form opened", c)
	}
	if c, _ := gates.Answer(ctx, g.Token, 0, "U2", nil); c.OpenForm || c.Refusal == "" {
		t.Errorf("someone else's Answer… click = %+v, want refused", c)
	}
	if _, problems, err := gates.Submit(ctx, g.Token, "U1", nil, map[string]string{"age": "7"}); !errors.Is(err, core.ErrFormInvalid) || problems["age"] == "" {
		t.Errorf("Submit(age 7) = %v %v, want ErrFormInvalid naming age", problems, err)
	}
	if _, _, err := gates.Submit(ctx, g.Token, "U2", nil, map[string]string{"age": "40"}); !errors.Is(err, core.ErrGateForbidden) {
		t.Errorf("Submit by another = %v, want ErrGateForbidden", err)
	}
	d, _, err := gates.Submit(ctx, g.Token, "U1", nil, map[string]string{"age": "40"})
	if err != nil || d.Decision().Values != `{"age":40,"name":"Ada"}` {
		t.Errorf("Submit = %+v, %v; want accepted with the default name", d.Decision(), err)
	}

	// The same place asked again with the same question finds the gate;
	// a different question there opens a new one.
	again, fresh, _ := gates.Open(ctx, typed, nil)
	if fresh || again.Token != g.Token {
		t.Errorf("Open(same question) fresh %v, want the answered gate", fresh)
	}
	typed.Question = "Something else?"
	other, fresh, _ := gates.Open(ctx, typed, nil)
	if !fresh || other.Token == g.Token {
		t.Errorf("Open(changed question) fresh %v, want a new gate", fresh)
	}
}
