package storetest

import (
	"context"
	"testing"
	"time"
)

// AdminSessions keeps the admin page's Slack sign-ins, with the method
// set adapters/web needs of a store.
type AdminSessions interface {
	AdminSession(ctx context.Context, id string) ([]byte, error)
	PutAdminSession(ctx context.Context, id string, data []byte, expires time.Time) error
	RenewAdminSession(ctx context.Context, id string, data []byte) error
	DeleteAdminSession(ctx context.Context, id string) error
}

// RunAdminSessions runs the admin session part of the suite against
// stores from open.
func RunAdminSessions(t *testing.T, open func(t *testing.T) AdminSessions) {
	t.Run("AdminSessions", func(t *testing.T) { testAdminSessions(t, open(t)) })
}

func testAdminSessions(t *testing.T, s AdminSessions) {
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	if v, err := s.AdminSession(ctx, "a"); err != nil || v != nil {
		t.Fatalf("AdminSession(absent) = %q, %v; want nil, nil", v, err)
	}
	for _, put := range []struct {
		id, data string
		expires  time.Time
	}{{"a", "one", later}, {"b", "two", later}, {"a", "one again", later}, {"old", "gone", time.Now().Add(-time.Second)}} {
		if err := s.PutAdminSession(ctx, put.id, []byte(put.data), put.expires); err != nil {
			t.Fatalf("PutAdminSession(%s) = %v", put.id, err)
		}
	}
	for id, want := range map[string]string{"a": "one again", "b": "two", "old": ""} {
		if v, err := s.AdminSession(ctx, id); err != nil || string(v) != want {
			t.Errorf("AdminSession(%s) = %q, %v; want %q", id, v, err, want)
		}
	}
	if err := s.PutAdminSession(ctx, "c", nil, later); err == nil {
		t.Errorf("PutAdminSession(empty data) = nil, want an error")
	}
	for range 2 { // signing out twice is fine
		if err := s.DeleteAdminSession(ctx, "a"); err != nil {
			t.Fatalf("DeleteAdminSession = %v, want nil", err)
		}
	}
	if v, err := s.AdminSession(ctx, "a"); err != nil || v != nil {
		t.Errorf("AdminSession(signed out) = %q, %v; want nil", v, err)
	}
	// A re-check that ends after a sign-out does not bring it back.
	if err := s.RenewAdminSession(ctx, "a", []byte("checked")); err != nil {
		t.Fatalf("RenewAdminSession(signed out) = %v, want nil", err)
	}
	if v, err := s.AdminSession(ctx, "a"); err != nil || v != nil {
		t.Errorf("AdminSession after renewing a signed-out session = %q, %v; want nil", v, err)
	}
	if err := s.RenewAdminSession(ctx, "b", []byte("two, checked")); err != nil {
		t.Fatalf("RenewAdminSession = %v", err)
	}
	if v, err := s.AdminSession(ctx, "b"); err != nil || string(v) != "two, checked" {
		t.Errorf("AdminSession(another) = %q, %v; want it kept, renewed", v, err)
	}
}
