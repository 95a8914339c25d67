package discord

import "github.com/neobot/neobot/adapters/internal/mdsplit"

// maxMessageChars is Discord's limit on a message's content.
const maxMessageChars = 2000

// sayLimit is where Say splits an answer, a little under the limit.
const sayLimit = 1990

// width returns the length of s as Discord counts it against the 2,000
// character limit: UTF-16 code units, so an emoji outside the Basic
// Multilingual Plane counts two.
func width(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// split cuts text into pieces of at most limit characters (as [width]
// counts), preferring paragraph breaks, then line breaks, then spaces. A
// code block is never cut at random: when it must be split, the piece ends
// by closing the fence and the next one reopens it with the same opening
// line, language included.
func split(text string, limit int) []string {
	return mdsplit.Split(text, limit, width)
}
