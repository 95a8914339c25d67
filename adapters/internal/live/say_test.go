package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// thread is a fake Platform: its messages by ID, in posting order, and
// the calls made. failPost fails the post with that number (1 for the
// first), failEdit every edit of that message.
type thread struct {
	ids      []string
	content  map[string]string
	posts    int
	failPost int
	failEdit string
}

func newThread() *thread { return &thread{content: map[string]string{}} }

func (th *thread) Post(_ context.Context, content string) (string, error) {
	th.posts++
	if th.posts == th.failPost {
		return "", errors.New("post refused")
	}
	id := fmt.Sprint("m", len(th.ids)+1)
	th.ids = append(th.ids, id)
	th.content[id] = content
	return id, nil
}

func (th *thread) Edit(_ context.Context, id, content string) error {
	if _, ok := th.content[id]; !ok || id == th.failEdit {
		return errors.New("no such message")
	}
	th.content[id] = content
	return nil
}

func (th *thread) Delete(_ context.Context, id string) error {
	delete(th.content, id)
	th.ids = slices.DeleteFunc(th.ids, func(x string) bool { return x == id })
	return nil
}

// shown is what the thread shows, in order.
func (th *thread) shown() []string {
	out := make([]string, len(th.ids))
	for i, id := range th.ids {
		out[i] = th.content[id]
	}
	return out
}

// render splits text into pieces of at most n words; Writing's are one
// word shorter, to leave room for Mark's "+".
func render(n int) Render {
	pieces := func(text string, n int) []string {
		words := strings.Fields(text)
		var out []string
		for len(words) > 0 {
			k := min(n, len(words))
			out = append(out, strings.Join(words[:k], " "))
			words = words[k:]
		}
		return out
	}
	return Render{
		Final:   func(text string) []string { return pieces(text, n) },
		Writing: func(text string) []string { return pieces(text, n-1) },
		Mark:    func(piece string) string { return piece + " +" },
	}
}

func TestSay(t *testing.T) {
	for _, tt := range []struct {
		name        string
		placeholder bool // the thread shows a status message, m1
		failPost    int
		failEdit    string
		text        string
		want        []string
		wantErr     bool
	}{
		{"one message, in the placeholder", true, 0, "", "a b c", []string{"a b c"}, false},
		{"one message, no placeholder", false, 0, "", "a b c", []string{"a b c"}, false},
		{"one message, the placeholder deleted", true, 0, "m1", "a b c", []string{"status", "a b c"}, false},
		{"nothing to say", false, 0, "", " ", []string{}, false},
		{"several messages, made final", true, 0, "", "a b c d e f", []string{"a b", "c d", "e f"}, false},
		// The second part refused: the first stays marked, for Tidy.
		{"several messages, cut short", true, 1, "", "a b c d e f", []string{"a b +"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			th := newThread()
			placeholder := ""
			if tt.placeholder {
				placeholder, _ = th.Post(t.Context(), "status")
			}
			th.posts, th.failPost, th.failEdit = 0, tt.failPost, tt.failEdit
			err := Say(t.Context(), th, render(3), placeholder, tt.text)
			if (err != nil) != tt.wantErr {
				t.Errorf("Say = %v, want error %v", err, tt.wantErr)
			}
			if got := th.shown(); !slices.Equal(got, tt.want) {
				t.Errorf("thread shows %q, want %q", got, tt.want)
			}
		})
	}
}

// finishing is a thread whose finished answer's last message is marked
// "[buttons]", as a Finisher puts the feedback buttons there.
type finishing struct{ *thread }

func (f finishing) PostLast(ctx context.Context, content string) (string, error) {
	return f.Post(ctx, content+" [buttons]")
}

func (f finishing) EditLast(ctx context.Context, id, content string) error {
	return f.Edit(ctx, id, content+" [buttons]")
}

// TestFinisherGetsTheLastMessage: the finished answer's last message,
// and only it, goes through the Finisher: said whole, said in several
// messages, and replacing messages written before.
func TestFinisherGetsTheLastMessage(t *testing.T) {
	th := finishing{newThread()}
	if err := Say(context.Background(), th, render(3), "", "one two three four five"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(th.shown(), "|"); got != "one two|three four|five [buttons]" {
		t.Errorf("said in two messages = %q", got)
	}
	th = finishing{newThread()}
	if err := Say(context.Background(), th, render(3), "", "short"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(th.shown(), "|"); got != "short [buttons]" {
		t.Errorf("said in one message = %q", got)
	}
	th = finishing{newThread()}
	ids := []string{}
	for _, c := range []string{"a +", "b +", "c +"} {
		id, _ := th.Post(context.Background(), c)
		ids = append(ids, id)
	}
	if err := Replace(context.Background(), th, ids, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(th.shown(), "|"); got != "a|b [buttons]" {
		t.Errorf("replaced = %q, want two messages, the buttons on the last", got)
	}
}
