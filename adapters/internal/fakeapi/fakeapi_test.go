package fakeapi

import (
	"context"
	"sync"
	"testing"
	"time"
)

type call struct{ name, arg string }

type reply struct {
	status int
	after  time.Duration
}

func newRecorder() (*sync.Mutex, *Recorder[call, reply]) {
	mu := new(sync.Mutex)
	return mu, New(mu, func(c call) string { return c.name }, func(d time.Duration) reply { return reply{429, d} })
}

func TestScriptsAnswerInOrderThenRunOut(t *testing.T) {
	mu, r := newRecorder()
	r.Script("post", reply{status: 500})
	r.RateLimit("post", 2, 3*time.Second)
	mu.Lock()
	defer mu.Unlock()
	want := []reply{{500, 0}, {429, 3 * time.Second}, {429, 3 * time.Second}}
	for i, w := range want {
		got, ok := r.NextLocked("post")
		if !ok || got != w {
			t.Fatalf("reply %d = %+v, %v; want %+v", i, got, ok, w)
		}
	}
	if got, ok := r.NextLocked("post"); ok {
		t.Errorf("reply after the script ran out = %+v, want none", got)
	}
	if _, ok := r.NextLocked("edit"); ok {
		t.Errorf("a script for post answered edit")
	}
}

func TestWaitCallSeesALaterCall(t *testing.T) {
	mu, r := newRecorder()
	got := make(chan call, 1)
	errc := make(chan error, 1)
	go func() {
		c, err := r.WaitCall(context.Background(), "post", func(c call) bool { return c.arg == "b" })
		got <- c
		errc <- err
	}()
	for _, c := range []call{{"post", "a"}, {"edit", "b"}, {"post", "b"}} {
		mu.Lock()
		r.RecordLocked(c)
		mu.Unlock()
	}
	if c, err := <-got, <-errc; err != nil || c != (call{"post", "b"}) {
		t.Errorf("WaitCall = %+v, %v; want the post with b", c, err)
	}
	if n := len(r.Calls("post")); n != 2 {
		t.Errorf("Calls(post) = %d calls, want 2", n)
	}
	if n := len(r.Calls("")); n != 3 {
		t.Errorf("Calls(\"\") = %d calls, want 3", n)
	}
}

func TestWaitCallEndsWithItsContext(t *testing.T) {
	_, r := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.WaitCall(ctx, "post", nil); err == nil {
		t.Errorf("WaitCall on a cancelled context = nil error")
	}
}
