package execute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/tools"
)

// ClarifyError reports an intent the executor could not turn into calls:
// it needs no spend tool available here, or the calls the planner made
// were not valid. Nothing was asked or run.
type ClarifyError struct {
	IntentID string
	Reason   string
}

// Error says why, for the model to put to the user.
func (e *ClarifyError) Error() string {
	return fmt.Sprintf("clarify (request %s): nothing was asked or run, because %s. Ask the user for what is missing, then call core_execute again with a complete description", e.IntentID, e.Reason)
}

// planSystem tells the planner what it is for. It sees the intent and the
// spend tools, nothing of the conversation.
const planSystem = `You turn one request to move money into calls of the payment tools you are given.
Call exactly the tools the request needs, once each, with arguments taken only from the request: never invent an amount, a currency, a recipient or an account.
If the request needs none of these tools, or leaves out something a call requires, call no tool and reply with one sentence saying what is missing.`

// plan asks the model for the intent's calls and validates them; every
// problem is a *ClarifyError.
func (e *Executor) plan(ctx context.Context, j *job) ([]core.Spend, error) {
	clarify := func(format string, a ...any) error {
		return &ClarifyError{IntentID: j.intentID, Reason: fmt.Sprintf(format, a...)}
	}
	available := e.tools.SpendTools(ctx)
	if len(available) == 0 {
		return nil, clarify("no tool that can move money is available in this place")
	}
	byName := map[string]tools.SpendTool{}
	offered := make([]llm.Tool, 0, len(available))
	for _, t := range available {
		byName[t.Function] = t
		offered = append(offered, llm.NewFunctionTool(t.Function, t.Description, t.InputSchema))
	}
	res, err := e.model.Chat(ctx, llm.ChatRequest{
		Messages: []llm.Message{llm.SystemMessage(planSystem), llm.UserMessage(j.intent)},
		Tools:    offered, ToolChoice: "auto",
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, fmt.Errorf("failed (request %s): the model that plans spends could not be reached (%v), so nothing was asked or run; tell the user to try again later", j.intentID, err)
	}
	calls := res.Message.ToolCalls
	switch {
	case len(calls) == 0:
		why := strings.TrimSpace(res.Message.Content)
		if why == "" {
			why = "it did not say what is missing"
		}
		return nil, clarify("the request could not be turned into a payment (%s)", cut(oneLine(why), 300))
	case len(calls) > e.maxCalls:
		return nil, clarify("it would take %d payments, more than the %d one request may make; split it into smaller requests", len(calls), e.maxCalls)
	}

	now := e.now()
	in := j.turn.Inbound
	out := make([]core.Spend, 0, len(calls))
	for i, c := range calls {
		t, ok := byName[c.Function.Name]
		if !ok {
			return nil, clarify("the plan named %q, which is not a payment tool available here", c.Function.Name)
		}
		args, err := parseArgs(c.Function.Arguments)
		if err != nil {
			return nil, clarify("the plan's arguments for %s/%s are not a JSON object", t.URI.Alias, t.URI.Tool)
		}
		s := core.Spend{
			ID: fmt.Sprintf("%s/%d", j.intentID, i+1), IntentID: j.intentID, Thread: in.Thread,
			EventID: in.EventID, CallID: j.callID, Requester: in.User, Message: in.Text, Intent: j.intent,
			Tool: t.URI.String(), Server: t.URI.Alias, Name: t.URI.Tool, Function: t.Function,
			Day: now.UTC().Format(time.DateOnly), State: core.SpendPlanned, Created: now,
		}
		if props, _ := t.InputSchema["properties"].(map[string]any); props != nil {
			if _, ok := props["idempotency_key"]; ok {
				args["idempotency_key"] = IdempotencyKey(s)
			}
		}
		if err := validate(t.InputSchema, args); err != nil {
			return nil, clarify("the planned call of %s/%s does not fit the tool's arguments: %v", t.URI.Alias, t.URI.Tool, err)
		}
		if j.limits.Active() || j.policy != nil {
			// The policy's tiers, like the limits, go by the call's amount.
			r, err := j.limits.Read(s.Server+"/"+s.Name, args)
			if err != nil {
				return nil, clarify("the planned call of %s/%s cannot be checked against the spend limits or approval tiers: %v", s.Server, s.Name, err)
			}
			s.Amount, s.Currency = skill.FormatAmount(r.Amount), r.Currency
		}
		if s.Args, err = json.Marshal(args); err != nil {
			return nil, clarify("the plan's arguments for %s/%s cannot be recorded", s.Server, s.Name)
		}
		s.Summary = summary(s, args)
		if _, complete := question(s); !complete {
			return nil, clarify("the planned call of %s/%s is too large to show an approver in full; ask for it in smaller requests", s.Server, s.Name)
		}
		out = append(out, s)
	}
	return out, nil
}

// validate checks args against a tool's JSON input schema.
func validate(schema, args map[string]any) error {
	doc, err := normalize(schema)
	if err != nil {
		return fmt.Errorf("its schema cannot be read: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("tool.json", doc); err != nil {
		return fmt.Errorf("its schema cannot be read: %w", err)
	}
	sch, err := c.Compile("tool.json")
	if err != nil {
		return fmt.Errorf("its schema is not valid JSON Schema: %w", err)
	}
	v, err := normalize(args)
	if err != nil {
		return err
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s", oneLine(err.Error()))
	}
	return nil
}

// normalize turns a Go value into what the validator reads: JSON decoded
// with numbers kept exact.
func normalize(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// parseArgs decodes a call's arguments with numbers kept as written, so
// an amount is never rounded through a float on its way to the ledger,
// the approver or the tool.
func parseArgs(text string) (map[string]any, error) {
	if strings.TrimSpace(text) == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
