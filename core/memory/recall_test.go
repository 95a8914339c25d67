package memory_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/memory/memorytest"
)

var update = flag.Bool("update", false, "rewrite golden files")

var wsA = memory.Scope{Platform: "slack", Workspace: "TA"}

func TestRecallRanking(t *testing.T) {
	c := newCortex(t, memory.Options{})
	remember(t, c, wsA, memory.KindFact, "The ops team reviewed 12 tickets; ops ops ops 12")
	remember(t, c, wsA, memory.KindFact, "Ticket OPS-12 tracks the staging outage")
	remember(t, c, wsA, memory.KindFact, "Bob owns the billing service", "Bob")
	remember(t, c, wsA, memory.KindFact, "Billing invoices go out on the first Monday")
	remember(t, c, wsA, memory.KindFact, "The deploy wallet is 0x9fA3c1D2e4 on mainnet")
	remember(t, c, wsA, memory.KindTurn, "alice asked: who owns billing?")
	r := memory.Reader{Platform: "slack", Workspace: "TA", Channel: "general", User: "alice"}
	tests := []struct {
		query string
		kinds []memory.Kind
		want  string // the top hit
	}{
		{"what is OPS-12 about", nil, "Ticket OPS-12 tracks the staging outage"},
		{"who is bob", []memory.Kind{memory.KindFact}, "Bob owns the billing service"},
		{"which wallet is 0x9FA3C1D2E4", nil, "The deploy wallet is 0x9fA3c1D2e4 on mainnet"},
		{"when are invoices sent", nil, "Billing invoices go out on the first Monday"},
		{"billing owner", []memory.Kind{memory.KindTurn}, "alice asked: who owns billing?"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			hs := c.Recall(r, tc.query, 5, tc.kinds...)
			if len(hs) == 0 || hs[0].Text != tc.want {
				t.Fatalf("Recall(%q) = %q, want %q first", tc.query, texts(hs), tc.want)
			}
			for i := 1; i < len(hs); i++ {
				if hs[i].Score > hs[i-1].Score {
					t.Errorf("Recall(%q) scores not descending: %v", tc.query, hs)
				}
				if len(tc.kinds) > 0 && !slices.Contains(tc.kinds, hs[i].Kind) {
					t.Errorf("Recall(%q, %v) returned a %s", tc.query, tc.kinds, hs[i].Kind)
				}
			}
		})
	}
	if hs := c.Recall(r, "the and of", 5); len(hs) != 0 {
		t.Errorf("Recall(stopwords only) = %q, want nothing", texts(hs))
	}
}

func TestRebuildFromStore(t *testing.T) {
	ctx := context.Background()
	st := &memorytest.Store{}
	c := newCortex(t, memory.Options{Store: st})
	remember(t, c, wsA, memory.KindFact, "The staging cluster is kube-stg-2")
	old := remember(t, c, wsA, memory.KindFact, "Lunch is at noon")
	if _, err := c.Forget(ctx, memory.Filter{}, old.ID); err != nil {
		t.Fatal(err)
	}
	again := newCortex(t, memory.Options{Store: st})
	if again.Len() != 1 {
		t.Fatalf("Len after rebuild = %d, want 1", again.Len())
	}
	r := memory.Reader{Platform: "slack", Workspace: "TA"}
	if hs := again.Recall(r, "kube-stg-2", 5); len(hs) != 1 {
		t.Errorf("Recall after rebuild = %q, want the cluster fact", texts(hs))
	}
}

func TestRecallTool(t *testing.T) {
	c := newCortex(t, memory.Options{})
	alice := memory.Scope{Platform: "slack", Workspace: "TA", User: "alice"}
	remember(t, c, alice, memory.KindProfile, "Alice is the release manager of team Atlas")
	remember(t, c, alice, memory.KindPreference, "Alice prefers answers in French")
	remember(t, c, wsA, memory.KindFact, "Release 4.2 ships on Friday", "4.2")
	remember(t, c, wsA, memory.KindProcedure, "Goal: cut a release\nSteps: git__tag -> ci__run")
	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TB"}, memory.KindFact, "Release 9 of the other workspace")

	in := inbound("TA", "general", "alice", false, "release")
	ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: in})
	got, err := c.RecallTool(ctx, "when does the release ship")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "recall_tool.golden", got)

	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TA", User: "alice", DM: true}, memory.KindFact, "Alice is moving to Oslo")
	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TA", User: "alice"}, memory.KindFact, "Alice owns the Atlas roadmap")
	got, err = c.RecallTool(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "recall_tool_about.golden", got)
	if got, _ := c.RecallTool(ctx, "zebra"); got == "" {
		t.Errorf("RecallTool(no match) = empty, want the profile or a sentence")
	}
	if _, err := c.RecallTool(context.Background(), "release"); !errors.Is(err, memory.ErrNoTurn) {
		t.Errorf("RecallTool(no turn) = %v, want ErrNoTurn", err)
	}
	bob := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("TA", "general", "bob", false, "x")})
	if got, _ := c.RecallTool(bob, "zebra"); got != `No memories match "zebra".` {
		t.Errorf("RecallTool(bob, zebra) = %q, want the no-match sentence", got)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// loaderStore is a memorytest.Store that reads records by ID, as a shared store
// does, and counts whole scans.
type loaderStore struct {
	*memorytest.Store
	scans int
}

func (s *loaderStore) ScanMemories(ctx context.Context, fn func(memory.Record) error) error {
	s.scans++
	return s.Store.ScanMemories(ctx, fn)
}

func (s *loaderStore) LoadMemories(ctx context.Context, ids []string) ([]memory.Record, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var out []memory.Record
	err := s.Store.ScanMemories(ctx, func(r memory.Record) error {
		if want[r.ID] {
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// TestChangedElsewhere: two cortexes over one shared store, as two
// instances are; what one remembers or forgets the other recalls once
// told which records changed, reading only those.
func TestChangedElsewhere(t *testing.T) {
	ctx := context.Background()
	st := &loaderStore{Store: &memorytest.Store{}}
	here, there := newCortex(t, memory.Options{Store: st}), newCortex(t, memory.Options{Store: st})
	r := memory.Reader{Platform: "slack", Workspace: "TA"}
	fact := remember(t, there, wsA, memory.KindFact, "The staging cluster is kube-stg-2")
	if hs := here.Recall(r, "kube-stg-2", 5); len(hs) != 0 {
		t.Fatalf("recalled %q before being told", texts(hs))
	}
	scans := st.scans
	if err := here.Changed(ctx, fact.ID); err != nil {
		t.Fatal(err)
	}
	if hs := here.Recall(r, "kube-stg-2", 5); len(hs) != 1 || st.scans != scans {
		t.Errorf("after Changed: recalled %q with %d whole scans; want the fact, read by ID", texts(hs), st.scans-scans)
	}
	if _, err := there.Forget(ctx, memory.Filter{}, fact.ID); err != nil {
		t.Fatal(err)
	}
	if err := here.Changed(ctx, fact.ID); err != nil {
		t.Fatal(err)
	}
	if hs := here.Recall(r, "kube-stg-2", 5); len(hs) != 0 {
		t.Errorf("recalled %q after the other instance forgot it", texts(hs))
	}
	// Without IDs (notifications were lost), everything is read again.
	remember(t, there, wsA, memory.KindFact, "Deploys freeze on Fridays")
	if err := here.Changed(ctx); err != nil {
		t.Fatal(err)
	}
	if hs := here.Recall(r, "Fridays", 5); len(hs) != 1 || st.scans != scans+1 {
		t.Errorf("after a full reload: recalled %q with %d scans, want the fact and one scan", texts(hs), st.scans-scans)
	}
}

// TestCommonWordsLeftOut: in a large memory, a word most records hold
// (every turn excerpt's "asked") adds nothing to a search: the rare word
// decides, and a search of common words alone finds nothing, instead of
// walking every record.
func TestCommonWordsLeftOut(t *testing.T) {
	ctx := context.Background()
	st := &memorytest.Store{}
	var recs []memory.Record
	for i := range 2100 {
		recs = append(recs, memory.Record{ID: fmt.Sprint("r", i), Scope: wsA, Kind: memory.KindFact, Text: fmt.Sprintf("User asked about item %d", i), Created: t0, Updated: t0})
	}
	recs = append(recs, memory.Record{ID: "kube", Scope: wsA, Kind: memory.KindFact, Text: "User asked where staging runs: kube-stg-2", Created: t0, Updated: t0})
	if err := st.WriteMemories(ctx, recs, nil); err != nil {
		t.Fatal(err)
	}
	c := newCortex(t, memory.Options{Store: st})
	r := memory.Reader{Platform: "slack", Workspace: "TA"}
	if hs := c.Recall(r, "user asked kube-stg-2", 3); len(hs) == 0 || hs[0].ID != "kube" {
		t.Errorf("Recall(common words and a rare one) = %q, want the kube-stg-2 record first", texts(hs))
	}
	if hs := c.Recall(r, "user asked", 3); len(hs) != 0 {
		t.Errorf("Recall(common words only) = %q, want nothing", texts(hs))
	}
	if hs := c.Recall(r, "item 7", 3); len(hs) == 0 {
		t.Error("Recall(item 7) found nothing; a rare number still finds its record")
	}
}
