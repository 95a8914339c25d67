package storetest

import (
	"context"
	"testing"
)

func testPostures(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	const model, ep = "accounts/fireworks/models/qwen3", "https://api.fireworks.ai/inference/v1/chat/completions"
	if got, err := b.ModelPosture(ctx, model, ep); err != nil || got != "" {
		t.Fatalf("ModelPosture before any save = %q, %v; want \"\", nil", got, err)
	}
	for _, p := range []string{"no", "yes"} {
		if err := b.SaveModelPosture(ctx, model, ep, p); err != nil {
			t.Fatalf("SaveModelPosture(%s) = %v", p, err)
		}
		if got, err := b.ModelPosture(ctx, model, ep); err != nil || got != p {
			t.Errorf("ModelPosture after saving %q = %q, %v", p, got, err)
		}
	}
	// Per model and endpoint: the same model elsewhere is another model.
	if got, err := b.ModelPosture(ctx, model, "http://127.0.0.1:8000/v1/chat/completions"); err != nil || got != "" {
		t.Errorf("ModelPosture at another endpoint = %q, %v; want nothing", got, err)
	}
	if got, err := b.ModelPosture(ctx, model+"-b", ep); err != nil || got != "" {
		t.Errorf("ModelPosture of another model = %q, %v; want nothing", got, err)
	}
}
