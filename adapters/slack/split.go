package slack

import "github.com/neobot/neobot/adapters/internal/mdsplit"

// maxMessageChars is where Say splits an answer: under the 4,000
// characters Slack recommends for a message's text (it truncates at 40,000).
const maxMessageChars = 3800

// split cuts text into pieces of at most limit bytes, preferring paragraph
// breaks, then line breaks, then spaces. A code block is never cut at
// random: when it must be split, the piece ends by closing the fence and
// the next one reopens it.
func split(text string, limit int) []string {
	return mdsplit.Split(text, limit, mdsplit.Bytes)
}
