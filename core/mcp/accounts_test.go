package mcp

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/neobot/neobot/core/mcp/oauth/oauthtest"
)

// TestAccounts: a person's own page lists the per_user servers, says
// which they connected, connects them through their own link and
// disconnects them; someone else's connection is not theirs.
func TestAccounts(t *testing.T) {
	prot := oauthtest.New(t, NewServer("notes", "1.0.0", testTools(0)...).Handler())
	tokens := &memTokens{m: map[string][]byte{}}
	m := start(t, Options{
		Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthPerUser, Version: "1.0.0", Tools: testToolNames}),
		OAuth:    &OAuth{Tokens: tokens, Key: bytes.Repeat([]byte{9}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback", Links: directLinks{}},
	})
	ctx := context.Background()
	alice := Place{Platform: "slack", Workspace: "T1", User: "UALICE"}
	bob := Place{Platform: "slack", Workspace: "T1", User: "UBOB"}
	connected := func(p Place) bool {
		t.Helper()
		accts, err := m.Accounts(ctx, p)
		if err != nil || len(accts) != 1 || accts[0].Alias != "notes" {
			t.Fatalf("Accounts(%s) = %+v, %v; want notes", p.User, accts, err)
		}
		return accts[0].Connected
	}
	if connected(alice) {
		t.Fatal("Alice is connected before connecting")
	}
	link, err := m.Connect(ctx, "notes", alice)
	if err != nil {
		t.Fatal(err)
	}
	code, state := openLogin(t, link)
	if _, user, err := m.FinishLogin(ctx, state, code, ""); err != nil || user != alice.UserValue() {
		t.Fatalf("FinishLogin = %q, %v; want Alice's", user, err)
	}
	if !connected(alice) || connected(bob) {
		t.Errorf("after Alice connects: Alice %v, Bob %v; want only Alice", connected(alice), connected(bob))
	}
	if err := m.Disconnect(ctx, "notes", alice); err != nil {
		t.Fatal(err)
	}
	if connected(alice) {
		t.Error("Alice is still connected after Disconnect")
	}
	if _, err := m.Connect(ctx, "nope", alice); !errors.Is(err, ErrNotPerUser) {
		t.Errorf("Connect(unknown server) = %v, want ErrNotPerUser", err)
	}
}
