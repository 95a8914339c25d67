package core

// ToolCall is one call of a tool the model made in a turn: whose turn it
// is (and so the place, its skill and the person asking), the model's call
// ID, the function's name and its arguments. A call is made from its turn
// ([Turn.Call]), so a call without one cannot be built by forgetting it;
// the zero ToolCall has no turn, and a tool surface refuses it.
type ToolCall struct {
	turn *Turn
	id   string
	name string
	args map[string]any
}

// Call returns the call of the function name with args and the model's
// call ID id, made in turn t.
func (t *Turn) Call(id, name string, args map[string]any) ToolCall {
	return ToolCall{turn: t, id: id, name: name, args: args}
}

// Turn returns the turn the call was made in; nil only for the zero
// ToolCall.
func (c ToolCall) Turn() *Turn { return c.turn }

// ID returns the model's ID for the call.
func (c ToolCall) ID() string { return c.id }

// Name returns the function called.
func (c ToolCall) Name() string { return c.name }

// Args returns the call's arguments (nil when it has none).
func (c ToolCall) Args() map[string]any { return c.args }

// Key names the call durably: the thread, the turn's message and the
// model's call ID, joined by the unit separator (never NUL: PostgreSQL
// text holds none). It keys the calls log, and approvals are bound to the
// same parts. The zero ToolCall's key is "".
func (c ToolCall) Key() string {
	if c.turn == nil {
		return ""
	}
	return c.turn.Inbound.Thread.Key() + "\x1f" + c.turn.Inbound.EventID + "\x1f" + c.id
}
