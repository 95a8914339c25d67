package execute

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/neobot/neobot/core"
)

var update = flag.Bool("update", false, "rewrite the golden questions")

// TestQuestionGolden: each archive in testdata/question holds a planned
// call (the requester's message, Neo's reading, the arguments, the
// amount the limits read) and the question an approver is shown for it,
// with whether it shows the whole call. go test -update rewrites them.
func TestQuestionGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/question/*.txtar")
	if len(cases) == 0 {
		t.Fatal("no cases in testdata/question")
	}
	for _, path := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in := map[string]string{}
			for _, f := range ar.Files {
				in[f.Name] = strings.TrimSuffix(string(f.Data), "\n")
			}
			s := core.Spend{ID: "x1/1", Server: "wallet", Name: "transfer", Requester: "UALICE",
				Message: in["message"], Intent: in["intent"], Args: json.RawMessage(in["args.json"]),
				Amount: in["amount"], Currency: in["currency"]}
			args, err := parseArgs(in["args.json"])
			if err != nil {
				t.Fatalf("args.json: %v", err)
			}
			s.Summary = summary(s, args)
			q, complete := question(s)
			got := q + "\n-- complete: " + strconv.FormatBool(complete) + "\n"
			if *update {
				ar.Files = slicesWithout(ar.Files, "question")
				ar.Files = append(ar.Files, txtar.File{Name: "question", Data: []byte(got)})
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := in["question"] + "\n"; got != want {
				t.Errorf("Question differs from %s (go test -update, then review the diff); got:\n%s", path, got)
			}
		})
	}
}

func slicesWithout(files []txtar.File, name string) []txtar.File {
	out := files[:0]
	for _, f := range files {
		if f.Name != name {
			out = append(out, f)
		}
	}
	return out
}

// TestQuestionHidesNothing: whatever the arguments hold, the question has
// no raw line break, bidi or invisible character inside a value, no
// backtick but its own, and every recipient of a batch.
func TestQuestionHidesNothing(t *testing.T) {
	payouts := []any{}
	for i := range 12 {
		payouts = append(payouts, map[string]any{"to": "r" + strconv.Itoa(i) + strings.Repeat("x", 20), "amount": json.Number("1")})
	}
	args, _ := json.Marshal(map[string]any{"payouts": payouts, "memo": "ok\n```\nApprove this exact call?\u202e\u200b\u2066"})
	s := core.Spend{ID: "x1/1", Server: "wallet", Name: "batch", Requester: "UALICE", Message: "pay the team\u202e", Intent: "pay\nthe team", Args: args, Summary: "That is 12 USDC."}
	q, complete := question(s)
	if !complete {
		t.Fatalf("a 12-item batch does not fit:\n%s", q)
	}
	for i := range 12 {
		if !strings.Contains(q, `"payouts"[`+strconv.Itoa(i)+`]."to": "r`+strconv.Itoa(i)) {
			t.Errorf("recipient %d is not shown:\n%s", i, q)
		}
	}
	if strings.Count(q, "```") != 2 || strings.Count(q, "\nApprove this exact call?") != 1 || strings.ContainsAny(q, "\u202e\u200b\u2066") {
		t.Errorf("a value reads as part of the question:\n%s", q)
	}
	// 3 lines of who and what, the block's 2 fences around 1 memo and 24
	// payout lines, the summary and the question itself.
	if n := strings.Count(q, "\n") + 1; n != 3+2+1+24+2 {
		t.Errorf("question has %d lines, want 32:\n%s", n, q)
	}
}

// TestQuestionFitsExactly: a question is complete exactly when the whole
// call, every value in full, fits maxQuestion bytes.
func TestQuestionFitsExactly(t *testing.T) {
	for n := 1100; n < 1500; n++ {
		args, _ := json.Marshal(map[string]any{"amount": json.Number("1"), "memo": strings.Repeat("m", n)})
		s := core.Spend{ID: "x1/1", Server: "wallet", Name: "transfer", Requester: "UALICE", Message: "pay", Intent: "pay bob", Args: args, Summary: "That is 1 USDC."}
		q, complete := question(s)
		whole := "Neo wants to spend with wallet/transfer (request x1/1).\n<@UALICE> wrote: `\"pay\"`\nNeo's reading of it (not their words): `\"pay bob\"`\n```\n\"amount\": 1\n\"memo\": \"" + strings.Repeat("m", n) + "\"\n```\nThat is 1 USDC.\nApprove this exact call?"
		if want := len(whole) <= maxQuestion; complete != want {
			t.Fatalf("memo of %d: complete %v, want %v (the whole question is %d bytes)", n, complete, want, len(whole))
		}
		if complete && q != whole {
			t.Fatalf("memo of %d: complete, but not the whole call:\n%s", n, q)
		}
		if len(q) > maxQuestion {
			t.Fatalf("memo of %d: question is %d bytes, over %d", n, len(q), maxQuestion)
		}
	}
}

// TestQuoted: the requester's words are quoted whole up to maxQuoted
// bytes, and cut on a character with their size said past it.
func TestQuoted(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{strings.Repeat("a", maxQuoted), `"` + strings.Repeat("a", maxQuoted) + `"`},
		{strings.Repeat("a", maxQuoted+1), `"` + strings.Repeat("a", maxQuoted) + `" … (301 bytes in all)`},
		{strings.Repeat("a", maxQuoted-1) + "é", `"` + strings.Repeat("a", maxQuoted-1) + `" … (301 bytes in all)`},
		{" <@U1> hi\n", `"‹@U1› hi"`},
	} {
		if got := quoted(tc.in); got != tc.want {
			t.Errorf("quoted(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSummaryRecipient: the summary names a recipient of up to 100
// bytes, quoted; a longer one is left to the arguments above it.
func TestSummaryRecipient(t *testing.T) {
	s := core.Spend{Server: "wallet", Name: "transfer", Amount: "5", Currency: "USDC"}
	for n, want := range map[int]bool{100: true, 101: false} {
		to := strings.Repeat("r", n)
		if got := summary(s, map[string]any{"to": to}); strings.Contains(got, to) != want {
			t.Errorf("summary with a recipient of %d bytes = %q, want it named %v", n, got, want)
		}
	}
	if got := summary(core.Spend{Server: "wallet", Name: "transfer"}, map[string]any{"to": "bob"}); got != "That is a call of wallet/transfer to `\"bob\"`." {
		t.Errorf("summary without limits = %q", got)
	}
}

// TestQuestionWithoutArgumentsFits: a call without arguments is complete
// exactly when its question fits maxQuestion bytes.
func TestQuestionWithoutArgumentsFits(t *testing.T) {
	s := core.Spend{ID: "x1/1", Server: "wallet", Name: "sweep", Requester: "UALICE", Intent: "sweep", Args: []byte(`{}`)}
	base, _ := question(s)
	for _, extra := range []int{0, 1} {
		s.Summary = strings.Repeat("s", maxQuestion-len(base)+extra)
		q, complete := question(s)
		if complete != (extra == 0) || len(q) != maxQuestion+extra {
			t.Errorf("a question of %d bytes: complete %v, want %v", len(q), complete, extra == 0)
		}
	}
}
