package llm

import (
	"encoding/json"
	"reflect"
	"sync"
)

// toolCache keeps the JSON of the tool schemas a client has sent, so that
// a request encodes again only the schemas that changed. The tool list is
// most of a request's bytes, and encoding it (maps whose keys are sorted on
// every call) was the costliest step of building a request.
//
// An entry is found by its schema map and checked against the tool's name
// and description. It holds the map, so the map's address cannot be reused
// by another map while the entry lives. A schema map must therefore not be
// changed once sent; Tool's documentation says so.
type toolCache struct {
	mu sync.Mutex
	m  map[uintptr]toolJSON
}

// toolJSON is one tool's encoding and what it was encoded from.
type toolJSON struct {
	params     map[string]any
	name, desc string
	raw        json.RawMessage
}

// maxCachedTools bounds the cache; past it the cache starts over, which
// only happens when tool lists keep changing (servers coming and going).
const maxCachedTools = 1024

// encode returns t as a request's tools array holds it.
func (c *toolCache) encode(t Tool) (json.RawMessage, error) {
	if t.Type == "" {
		t.Type = "function"
	}
	if t.Function.Parameters == nil || t.Type != "function" {
		return json.Marshal(t)
	}
	key := reflect.ValueOf(t.Function.Parameters).Pointer()
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && e.name == t.Function.Name && e.desc == t.Function.Description {
		return e.raw, nil
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedTools {
		c.m = map[uintptr]toolJSON{}
	}
	c.m[key] = toolJSON{params: t.Function.Parameters, name: t.Function.Name, desc: t.Function.Description, raw: raw}
	return raw, nil
}
