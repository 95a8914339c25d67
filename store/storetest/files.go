package storetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/neobot/neobot/core"
)

// testFiles: a file comes back whole with its owner; an upload is sent in
// a thread and goes when the thread is deleted; a taken ID and a file
// over the cap are refused.
func testFiles(t *testing.T, b Backend) {
	ctx := t.Context()
	th := thread("files")
	data := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<10)
	up := core.StoredFile{ID: "up1", Owner: "alice", Name: "cat.png", MIMEType: "image/png", Data: data, At: epoch}
	if err := b.PutFile(ctx, up); err != nil {
		t.Fatalf("PutFile = %v", err)
	}
	if err := b.PutFile(ctx, up); err == nil {
		t.Errorf("PutFile(an ID in use) = nil, want an error")
	}
	if err := b.PutFile(ctx, core.StoredFile{ID: "big", Owner: "alice", Data: make([]byte, core.MaxStoredFile+1)}); err == nil {
		t.Errorf("PutFile(over MaxStoredFile) = nil, want an error")
	}
	got, err := b.File(ctx, "up1")
	if err != nil || got.Owner != "alice" || got.Thread != "" || got.Name != "cat.png" || got.MIMEType != "image/png" || !bytes.Equal(got.Data, data) || !got.At.Equal(epoch) {
		t.Fatalf("File(up1) = %+v, %v; want it as put", got, err)
	}
	if _, err := b.File(ctx, "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("File(nope) = %v, want ErrNotFound", err)
	}
	if err := b.SendFile(ctx, "nope", th.Key()); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("SendFile(nope) = %v, want ErrNotFound", err)
	}
	if _, err := b.AppendEntries(ctx, th, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.SendFile(ctx, "up1", th.Key()); err != nil {
		t.Fatalf("SendFile = %v", err)
	}
	tool := core.StoredFile{ID: "tool1", Owner: "alice", Thread: th.Key(), Name: "chart.svg", MIMEType: "image/svg+xml", Data: []byte("<svg/>"), At: epoch}
	if err := b.PutFile(ctx, tool); err != nil {
		t.Fatalf("PutFile(a tool's file) = %v", err)
	}
	if got, err := b.File(ctx, "up1"); err != nil || got.Thread != th.Key() {
		t.Errorf("File(up1) once sent = thread %q, %v; want %q", got.Thread, err, th.Key())
	}
	if err := b.DeleteThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"up1", "tool1"} {
		if _, err := b.File(ctx, id); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("File(%s) after DeleteThread = %v, want ErrNotFound (files go with their thread)", id, err)
		}
	}
}
