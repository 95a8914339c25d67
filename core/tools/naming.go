package tools

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// maxFuncName is the longest function name providers accept
// (^[A-Za-z0-9_-]{1,64}$).
const maxFuncName = 64

// toolRef names one tool of one server.
type toolRef struct {
	alias, tool string
}

// sanitize coerces s into the function-name charset: every other byte
// becomes '_', and the result is cut at 64 bytes.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > maxFuncName {
		b = b[:maxFuncName]
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// bindNames gives every tool its function name, alias__tool coerced into
// the charset. When coercion or truncation makes names collide, a tool
// whose name needed no coercion keeps it and the others get a short hash
// of (alias, tool) as suffix, so names are stable whatever the order of
// servers and tools. reserved names (the synthetic tools) are never given.
func bindNames(refs []toolRef, reserved ...string) map[toolRef]string {
	refs = slices.Clone(refs)
	slices.SortFunc(refs, func(a, b toolRef) int {
		return cmp.Or(cmp.Compare(a.alias, b.alias), cmp.Compare(a.tool, b.tool))
	})
	refs = slices.Compact(refs)
	base := make(map[toolRef]string, len(refs))
	count := map[string]int{}
	for _, r := range refs {
		b := sanitize(r.alias + "__" + r.tool)
		base[r] = b
		count[b]++
	}
	taken := map[string]bool{}
	for _, n := range reserved {
		taken[n] = true
	}
	names := make(map[toolRef]string, len(refs))
	for _, r := range refs {
		b := base[r]
		exact := b == r.alias+"__"+r.tool
		if !taken[b] && (count[b] == 1 || exact) {
			names[r] = b
			taken[b] = true
		}
	}
	for _, r := range refs {
		if _, ok := names[r]; ok {
			continue
		}
		sum := sha256.Sum256([]byte(r.alias + "\x00" + r.tool))
		h := hex.EncodeToString(sum[:])
		for n := 6; n <= len(h); n += 2 {
			b := base[r]
			if keep := maxFuncName - 1 - n; len(b) > keep {
				b = b[:keep]
			}
			if cand := b + "_" + h[:n]; !taken[cand] {
				names[r] = cand
				taken[cand] = true
				break
			}
		}
	}
	return names
}
