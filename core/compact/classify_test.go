package compact

import (
	"slices"
	"strings"
	"testing"
)

// TestArtifactBoundaries pins every classifier at the edges of what it
// accepts: one character short, exactly at the limit, one past it, and each
// character class it refuses.
func TestArtifactBoundaries(t *testing.T) {
	const uuid = "550e8400-e29b-41d4-a716-446655440000"
	const uuidHex = "550e8400-e29b-41d4-a716-44665544abcd" // no part is an identifier alone
	hex32 := "9f86d081884c7d659a2feaa0c55ad015"
	b58 := "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"
	tests := []struct {
		name, text string
		want       []string
	}{
		// Decimals: six digits or more, one inner fractional part.
		{"five digits", "paid 12345 today", nil},
		{"six digits", "paid 123456 today", []string{"123456"}},
		{"slack timestamp", "ts 1712345678.123456", []string{"1712345678.123456"}},
		{"five digits and a fraction", "ts 123.45", nil},
		{"leading dot", "x .123456", []string{"123456"}},
		{"two dots", "v 1.234.567", nil},
		{"digits and a letter", "x 123456a", nil},

		// Hex: 0x and eight digits, or 32 bare with a letter.
		{"0x and seven", "a 0xdeadbee", nil},
		{"0x and eight", "a 0xdeadbeef", []string{"0xdeadbeef"}},
		{"0X upper", "a 0XDEADBEEF", []string{"0XDEADBEEF"}},
		{"0x not hex", "a 0xdeadbeeg", nil},
		{"bare 31", "h " + hex32[:31], nil},
		{"bare 32", "h " + hex32, []string{hex32}},
		{"bare 32 digits only", "h " + strings.Repeat("12345678", 4), []string{strings.Repeat("12345678", 4)}},
		{"bare 32 letters only", "h " + strings.Repeat("abcdefab", 4), []string{strings.Repeat("abcdefab", 4)}},

		// UUIDs: 8-4-4-4-12.
		{"uuid", "id " + uuid, []string{uuid}},
		{"uuid dash misplaced", "id 550e840-0e29b-41d4-a716-44665544abcd", nil},
		{"uuid not hex", "id 550e8400-e29b-41d4-a716-44665544abcg", nil},
		{"uuid short", "id " + uuidHex[:35], nil},
		{"uuid letters", "id " + uuidHex, []string{uuidHex}},

		// Slack IDs: 9 to 12, a known first letter, upper case and digits,
		// at least one digit.
		{"slack 8", "u U012AB3C", nil},
		{"slack 9", "u U012AB3CD", []string{"U012AB3CD"}},
		{"slack 12", "u C012AB3CDEFG", []string{"C012AB3CDEFG"}},
		{"slack 13", "u C012AB3CDEFGH", nil},
		{"slack every first letter", "UA1BCDEFGH CA1BCDEFGH WA1BCDEFGH GA1BCDEFGH DA1BCDEFGH TA1BCDEFGH BA1BCDEFGH FA1BCDEFGH AA1BCDEFGH EA1BCDEFGH SA1BCDEFGH KA1BCDEFGH",
			[]string{"UA1BCDEFGH", "CA1BCDEFGH", "WA1BCDEFGH", "GA1BCDEFGH", "DA1BCDEFGH", "TA1BCDEFGH", "BA1BCDEFGH", "FA1BCDEFGH", "AA1BCDEFGH", "EA1BCDEFGH", "SA1BCDEFGH", "KA1BCDEFGH"}},
		{"slack unknown first letter", "u X012AB3CDE", nil},
		{"slack no digit", "u UABCDEFGHI", nil},
		{"slack lower case", "u U012ab3cde", nil},
		{"slack digit last", "u UABCDEFGH1", []string{"UABCDEFGH1"}},

		// Base58: 26 to 90, digits and both cases, never 0 O I l.
		{"base58", "to " + b58, []string{b58}},
		{"base58 25", "to " + b58[:25], nil},
		{"base58 26", "to " + b58[:26], []string{b58[:26]}},
		{"base58 90", "to " + strings.Repeat("gH3", 30), []string{strings.Repeat("gH3", 30)}},
		{"base58 91", "to " + strings.Repeat("gH3", 30) + "g", nil},
		{"base58 with a zero", "to a" + strings.Repeat("bC3", 9) + "0", nil},
		{"base58 with an O", "to a" + strings.Repeat("bC3", 9) + "O", nil},
		{"base58 with an I", "to a" + strings.Repeat("bC3", 9) + "I", nil},
		{"base58 with an l", "to a" + strings.Repeat("bC3", 9) + "l", nil},
		{"base58 no digit", "to " + strings.Repeat("aBc", 9), nil},
		{"base58 no upper", "to " + strings.Repeat("ab3", 9), nil},
		{"base58 no lower", "to " + strings.Repeat("AB3", 9), nil},

		// URLs: http and https only, trailing punctuation dropped.
		{"https", "see https://example.com/a.", []string{"https://example.com/a"}},
		{"http upper", "see HTTP://example.com/a?!", []string{"HTTP://example.com/a"}},
		{"ftp", "see ftp://example.com/123456", []string{"123456"}},
		{"scheme only", "see https://...", nil},
		{"scheme after text", "see xhttps://example.com/a", nil},
		{"url in brackets", "(https://example.com/x)", []string{"https://example.com/x"}},

		// Words: shorter than six never; prefixes kept whole.
		{"field delimiters", "a|123456|b,654321\\x", []string{"123456", "654321"}},
		{"control characters split", "123456\x7f654321", []string{"123456", "654321"}},
		{"prefix underscore", "ref_" + hex32 + " ok", []string{"ref_" + hex32}},
		{"prefix and short part", "ab-12345 ok", nil},
		{"prefix and a six-digit part", "ab-123456 ok", []string{"ab-123456"}},
		{"prefix and a UUID of letters", "key-" + uuidHex, []string{"key-" + uuidHex}},
		{"prefix and a near-UUID", "key-550e8400-e29b-41d4-a716-44665544abcg", nil},
		{"dotted host gives its parts", "host 123456.example.com", []string{"123456"}},
		{"dotted with a prefixed part", "at 1234567.abc-0xdeadbeef", []string{"1234567", "0xdeadbeef"}},
		{"uuid after a long prefix", "key-with-words-" + uuid, []string{"key-with-words-" + uuid}},
		{"duplicates once", "123456 and 123456", []string{"123456"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Artifacts(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Artifacts(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestContainsToken pins where a token counts as present in a summary.
func TestContainsToken(t *testing.T) {
	tests := []struct {
		s, tok string
		want   bool
	}{
		{"123456", "123456", true},
		{"paid 123456.", "123456", true},
		{"paid 123456. Then", "123456", true},
		{"paid 123456.7", "123456", false},
		{"paid 1234567", "123456", false},
		{"paid 0123456", "123456", false},
		{"paid a123456", "123456", false},
		{"paid -123456", "123456", false},
		{"paid _123456", "123456", false},
		{"paid .123456", "123456", false},
		{"paid 123456-", "123456", false},
		{"paid 123456_", "123456", false},
		{"paid (123456)", "123456", true},
		{"1234567 then 123456", "123456", true},
		{"nothing", "123456", false},
	}
	for _, tt := range tests {
		if got := containsToken(tt.s, tt.tok); got != tt.want {
			t.Errorf("containsToken(%q, %q) = %v, want %v", tt.s, tt.tok, got, tt.want)
		}
	}
}

// TestValidateSummaryAppends shows what a dropped identifier looks like in
// the validated summary: once under the header, which is not repeated.
func TestValidateSummaryAppends(t *testing.T) {
	got, dropped := ValidateSummary("Paid.\n\n", "paid 123456 and 654321")
	want := "Paid.\n\n" + ArtifactsHeader + "\n- 123456\n- 654321\n"
	if got != want || len(dropped) != 2 {
		t.Errorf("validated %q (dropped %q), want %q", got, dropped, want)
	}
	again, dropped := ValidateSummary("Paid.\n\n"+ArtifactsHeader+"\n- 123456\n", "paid 123456 and 654321")
	if want := "Paid.\n\n" + ArtifactsHeader + "\n- 123456\n- 654321\n"; again != want || !slices.Equal(dropped, []string{"654321"}) {
		t.Errorf("validated %q (dropped %q), want %q", again, dropped, want)
	}
	same, dropped := ValidateSummary("Paid 123456.", "paid 123456")
	if same != "Paid 123456." || dropped != nil {
		t.Errorf("a complete summary came back %q (dropped %q)", same, dropped)
	}
}
