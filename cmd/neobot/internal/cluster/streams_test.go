package cluster

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestStreamsAcrossInstances: a person's live streams are counted across
// the instances of one database, and an instance's end (its claims'
// session closed) ends the streams it held.
func TestStreamsAcrossInstances(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	instance := func() *Cluster {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := New(db, db.Claims(), Intervals{}, zerolog.Nop())
		t.Cleanup(func() { c.Close(); _ = db.Close() })
		return c
	}
	a, b := instance(), instance()
	open := func(c *Cluster, name, user string, want bool) func() {
		t.Helper()
		release, ok, err := c.OpenStream(ctx, user, 2)
		if err != nil || ok != want {
			t.Fatalf("OpenStream(%s) on %s = %v, %v; want %v", user, name, ok, err, want)
		}
		return release
	}
	open(a, "a", "web/default/alice", true)
	release := open(b, "b", "web/default/alice", true)
	open(a, "a", "web/default/alice", false)
	open(b, "b", "web/default/alice", false)
	open(b, "b", "web/default/bob", true) // another person's are their own
	release()
	release() // twice ends one stream
	open(a, "a", "web/default/alice", true)
	open(b, "b", "web/default/alice", false)

	a.Close() // the instance ends: its two streams with it
	open(b, "b", "web/default/alice", true)
	open(b, "b", "web/default/alice", true)
	open(b, "b", "web/default/alice", false)
}
