package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

func testRatings(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	at := func(min int) time.Time { return epoch.Add(time.Duration(min) * time.Minute) }
	r := func(turn, user string, min int, up bool, reason string) core.Rating {
		return core.Rating{Thread: thread("1.1"), Turn: turn, User: user, At: at(min), Up: up, Reason: reason,
			Skill: "ops", Model: "m", Question: "how?", Answer: "like so"}
	}
	for _, x := range []core.Rating{
		r("E1", "U1", 1, true, ""),
		r("E2", "U1", 2, false, ""),
		r("E1", "U2", 3, true, ""),
		r("E2", "U1", 4, false, "it was wrong"), // the reason, asked for after the down
	} {
		if err := b.SaveRating(ctx, x); err != nil {
			t.Fatalf("SaveRating = %v", err)
		}
	}
	got, err := b.Ratings(ctx, at(2))
	if err != nil {
		t.Fatalf("Ratings = %v", err)
	}
	var lines []string
	for _, x := range got {
		lines = append(lines, fmt.Sprintf("%s %s %s %v %q %s/%s %q %q %s", x.Thread.Key(), x.Turn, x.User, x.Up, x.Reason, x.Skill, x.Model, x.Question, x.Answer, x.At.Format(time.RFC3339)))
	}
	want := []string{
		fmt.Sprintf("%s E1 U2 true \"\" ops/m \"how?\" \"like so\" %s", thread("1.1").Key(), at(3).Format(time.RFC3339)),
		fmt.Sprintf("%s E2 U1 false \"it was wrong\" ops/m \"how?\" \"like so\" %s", thread("1.1").Key(), at(4).Format(time.RFC3339)),
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("Ratings(since +2m) =\n%s\nwant (one per user and turn, the latest, oldest first)\n%s", lines, want)
	}
	if all, err := b.Ratings(ctx, time.Time{}); err != nil || len(all) != 3 {
		t.Errorf("Ratings(all) = %d ratings, %v; want 3", len(all), err)
	}
}
