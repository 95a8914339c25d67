package storetest

import (
	"bytes"
	"context"
	"testing"
)

// SlackInstalls keeps "Add to Slack" installations, sealed, with the
// method set adapters/slack needs of a store.
type SlackInstalls interface {
	SlackInstall(ctx context.Context, key string) ([]byte, error)
	PutSlackInstall(ctx context.Context, key string, sealed []byte) error
	DeleteSlackInstall(ctx context.Context, key string) error
}

// RunSlackInstalls runs the installation part of the suite against stores
// from open.
func RunSlackInstalls(t *testing.T, open func(t *testing.T) SlackInstalls) {
	t.Run("SlackInstalls", func(t *testing.T) { testSlackInstalls(t, open(t)) })
}

func testSlackInstalls(t *testing.T, s SlackInstalls) {
	ctx := context.Background()
	if v, err := s.SlackInstall(ctx, "team/T1"); err != nil || v != nil {
		t.Fatalf("SlackInstall(absent) = %q, %v; want nil, nil", v, err)
	}
	for _, put := range []struct {
		key   string
		value []byte
	}{{"team/T1", []byte{1, 0, 2}}, {"enterprise/E1", []byte("org")}, {"team/T1", []byte{3, 0, 4}}} {
		if err := s.PutSlackInstall(ctx, put.key, put.value); err != nil {
			t.Fatalf("PutSlackInstall(%s) = %v", put.key, err)
		}
	}
	if v, err := s.SlackInstall(ctx, "team/T1"); err != nil || !bytes.Equal(v, []byte{3, 0, 4}) {
		t.Fatalf("SlackInstall = %v, %v; want the reinstall's value [3 0 4]", v, err)
	}
	if err := s.PutSlackInstall(ctx, "team/T2", nil); err == nil {
		t.Errorf("PutSlackInstall(empty value) = nil, want an error")
	}
	for range 2 { // deleting twice is fine: Slack may say so twice
		if err := s.DeleteSlackInstall(ctx, "team/T1"); err != nil {
			t.Fatalf("DeleteSlackInstall = %v, want nil", err)
		}
	}
	if v, err := s.SlackInstall(ctx, "team/T1"); err != nil || v != nil {
		t.Fatalf("SlackInstall(uninstalled) = %q, %v; want nil, nil", v, err)
	}
	if v, err := s.SlackInstall(ctx, "enterprise/E1"); err != nil || string(v) != "org" {
		t.Fatalf("SlackInstall(other install) = %q, %v; want it kept", v, err)
	}
}
