package main

import (
	"bytes"
	"io"
	"regexp"
	"sync"
)

// Secret is a credential read from the environment. It prints as
// [REDACTED] however it is formatted or marshalled; Reveal is the only way
// to the value.
type Secret string

const redacted = "[REDACTED]"

// Reveal returns the credential itself, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString implements fmt.GoStringer, so %#v hides the value too.
func (s Secret) GoString() string { return s.String() }

// MarshalText implements encoding.TextMarshaler (JSON and zerolog use it).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// tokenShapes match credentials wherever they appear in a log line: Slack
// bot/user/app tokens, bearer headers, OpenAI-style keys, GitHub tokens,
// AWS access key IDs and Discord bot tokens (three dot-separated base64url
// parts). They catch tokens that reach a log inside an error string or a
// URL.
var tokenShapes = regexp.MustCompile(
	`xox[abposre]-[A-Za-z0-9-]+` +
		`|xapp-[A-Za-z0-9-]+` +
		`|(?i:bearer)\s+[A-Za-z0-9._~+/=-]+` +
		`|sk-[A-Za-z0-9_-]{16,}` +
		`|fw_[A-Za-z0-9]{16,}` +
		`|gh[pousr]_[A-Za-z0-9]{20,}` +
		`|github_pat_[A-Za-z0-9_]{20,}` +
		`|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b` +
		`|\b[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,}`)

// tokenMarks are literal pieces of every shape in tokenShapes but the
// bearer header and Discord's token, which mayHoldToken checks apart.
var tokenMarks = [][]byte{
	[]byte("xox"), []byte("xapp-"), []byte("sk-"), []byte("fw_"),
	[]byte("ghp_"), []byte("gho_"), []byte("ghu_"), []byte("ghs_"), []byte("ghr_"), []byte("github_pat_"),
	[]byte("AKIA"), []byte("ASIA"),
}

// mayHoldToken is false when p cannot match tokenShapes. Most log lines
// hold no token, and this check is a fraction of the expression's cost,
// which had been most of what a log line cost. For any p that tokenShapes
// matches it is true (FuzzMayHoldToken).
func mayHoldToken(p []byte) bool {
	for _, m := range tokenMarks {
		if bytes.Contains(p, m) {
			return true
		}
	}
	run := 0 // token characters just before p[i]
	for i, c := range p {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			run++
			if c|0x20 == 'b' && len(p)-i >= 6 && bytes.EqualFold(p[i:i+6], []byte("bearer")) {
				return true
			}
			continue
		case c == '.' && run >= 23: // the first part of a Discord token
			return true
		}
		run = 0
	}
	return false
}

// scrubber is an io.Writer that removes credentials from every write before
// passing it on: known secret values verbatim, and anything shaped like a
// token. zerolog writes one event per Write, so a token never straddles two.
type scrubber struct {
	out io.Writer

	mu      sync.Mutex
	secrets [][]byte
}

func newScrubber(out io.Writer) *scrubber { return &scrubber{out: out} }

// add registers secret values to remove verbatim. Values shorter than 6
// bytes are ignored: they would redact ordinary words.
func (s *scrubber) add(secrets ...Secret) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		if len(v) >= 6 {
			s.secrets = append(s.secrets, []byte(v))
		}
	}
}

func (s *scrubber) Write(p []byte) (int, error) {
	s.mu.Lock()
	clean := p
	for _, v := range s.secrets {
		if bytes.Contains(clean, v) {
			clean = bytes.ReplaceAll(clean, v, []byte(redacted))
		}
	}
	s.mu.Unlock()
	if mayHoldToken(clean) {
		clean = tokenShapes.ReplaceAll(clean, []byte(redacted))
	}
	if _, err := s.out.Write(clean); err != nil {
		return 0, err
	}
	return len(p), nil
}
