package delegatetest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core/delegate/delegatetest"
)

// call sends one request and decodes the JSON answer.
func call(t *testing.T, d *delegatetest.Server, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, d.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestScriptedIntent(t *testing.T) {
	d := delegatetest.New(t)
	d.RequireToken("tok")
	d.Script(
		delegatetest.Intent{Match: "refund", Fail: "no refunds"},
		delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend?"}, {NodeID: "n2", Question: "Fee?", Options: []string{"pay", "skip"}}}, Answer: "settled"},
	)
	if code, _ := call(t, d, "POST", "/messages/async", "k1", `{"prose":"send 5 PAX"}`); code != http.StatusAccepted {
		t.Fatalf("submit = %d, want 202", code)
	}
	if _, out := call(t, d, "POST", "/messages/async", "k1", `{"prose":"send 5 PAX"}`); out["intent_id"] != "i1" {
		t.Errorf("submit replay = %v, want i1 again", out)
	}
	if _, out := call(t, d, "POST", "/messages/async", "", `{"prose":"a REFUND please"}`); out["intent_id"] != "i2" {
		t.Errorf("second submit = %v, want i2", out)
	}
	if _, out := call(t, d, "GET", "/messages/async/i2", "", ""); out["status"] != "failed" || out["error"] != "no refunds" {
		t.Errorf("status i2 = %v, want failed: no refunds (matched script)", out)
	}

	_, out := call(t, d, "GET", "/intents/i1/gates", "", "")
	pending, _ := out["pending"].([]any)
	if len(pending) != 1 || pending[0].(map[string]any)["node_id"] != "n1" {
		t.Fatalf("gates i1 = %v, want n1 pending", out)
	}
	if _, out := call(t, d, "GET", "/messages/async/i1", "", ""); out["status"] != "awaiting_approval" {
		t.Errorf("status i1 = %v, want awaiting_approval", out)
	}
	if code, _ := call(t, d, "POST", "/intents/i1/gates/n2/answer", "i1/n2", `{"approved":true}`); code != http.StatusConflict {
		t.Errorf("answer to a gate not pending = %d, want 409", code)
	}
	if code, _ := call(t, d, "POST", "/intents/i1/gates/n1/answer", "i1/n1", `{}`); code != http.StatusBadRequest {
		t.Errorf("answer without approved = %d, want 400", code)
	}
	for range 2 {
		if code, _ := call(t, d, "POST", "/intents/i1/gates/n1/answer", "i1/n1", `{"approved":true,"answer":"yes"}`); code != http.StatusOK {
			t.Errorf("answer n1 = %d, want 200", code)
		}
	}
	if d.Pending("i1") != "n2" {
		t.Errorf("Pending(i1) = %q, want n2", d.Pending("i1"))
	}
	call(t, d, "POST", "/intents/i1/gates/n2/answer", "i1/n2", `{"approved":true,"answer":"pay"}`)
	if _, out := call(t, d, "GET", "/messages/async/i1", "", ""); out["status"] != "completed" || out["result"].(map[string]any)["answer"] != "settled" {
		t.Errorf("status i1 = %v, want completed: settled", out)
	}
	want := []delegatetest.Answer{
		{IntentID: "i1", NodeID: "n1", Approved: true, Answer: "yes", Key: "i1/n1"},
		{IntentID: "i1", NodeID: "n2", Approved: true, Answer: "pay", Key: "i1/n2"},
	}
	if got := d.Answers(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Answers() = %+v, want %+v (the replay not applied)", got, want)
	}
	if got := d.Intents(); len(got) != 2 || got[0].Status != "completed" || got[0].Key != "k1" || got[1].Prose != "a REFUND please" {
		t.Errorf("Intents() = %+v", got)
	}
}

func TestDenyWithdrawCancel(t *testing.T) {
	d := delegatetest.New(t)
	d.RequireToken("tok")
	gate := []delegatetest.Gate{{NodeID: "n1"}}
	d.SetDefault(delegatetest.Intent{Gates: gate, Answer: "settled"})
	d.Script(delegatetest.Intent{Gates: gate, DeniedStatus: "cancelled"})
	for range 4 {
		call(t, d, "POST", "/messages/async", "", `{"prose":"x"}`)
	}
	call(t, d, "POST", "/intents/i1/gates/n1/answer", "", `{"approved":false}`)
	call(t, d, "POST", "/intents/i2/gates/n1/answer", "", `{"approved":false}`)
	if !d.Withdraw("i3", "n1") || d.Withdraw("i3", "n1") {
		t.Error("Withdraw(i3, n1) twice = want true then false")
	}
	d.Cancel("i4")
	tests := []struct{ id, status string }{{"i1", "cancelled"}, {"i2", "failed"}, {"i3", "failed"}, {"i4", "cancelled"}}
	for _, tt := range tests {
		if _, out := call(t, d, "GET", "/messages/async/"+tt.id, "", ""); out["status"] != tt.status {
			t.Errorf("status %s = %v, want %s", tt.id, out, tt.status)
		}
		if _, out := call(t, d, "GET", "/intents/"+tt.id+"/gates", "", ""); len(out["pending"].([]any)) != 0 {
			t.Errorf("gates %s = %v, want none pending", tt.id, out)
		}
	}
}

func TestRefusals(t *testing.T) {
	d := delegatetest.New(t)
	d.RequireToken("other")
	if code, out := call(t, d, "POST", "/messages/async", "", `{"prose":"x"}`); code != http.StatusUnauthorized {
		t.Errorf("submit with a wrong token = %d %v, want 401", code, out)
	}
	d.RequireToken("tok")
	if code, out := call(t, d, "POST", "/messages/async", "", `{"prose":"x"}`); code != http.StatusInternalServerError || !strings.Contains(out["error"].(string), "no scripted intent") {
		t.Errorf("unscripted submit = %d %v, want 500 naming the missing script", code, out)
	}
	if code, _ := call(t, d, "GET", "/messages/async/nope", "", ""); code != http.StatusNotFound {
		t.Errorf("status of an unknown intent = %d, want 404", code)
	}
	if n := len(d.Requests()); n != 3 {
		t.Errorf("Requests() = %d, want 3 (refused ones included)", n)
	}
}

func TestSlowAndWait(t *testing.T) {
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Polls: 2, Answer: "late"}, delegatetest.Intent{Never: true})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	go func() {
		resp, err := http.Post(d.URL()+"/messages/async", "application/json", strings.NewReader(`{"prose":"x"}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	if _, err := d.WaitIntents(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var statuses []any
	for range 3 {
		_, out := call(t, d, "GET", "/messages/async/i1", "", "")
		statuses = append(statuses, out["status"])
	}
	if statuses[0] != "running" || statuses[1] != "running" || statuses[2] != "completed" {
		t.Errorf("statuses = %v, want running running completed", statuses)
	}
	call(t, d, "POST", "/messages/async", "", `{"prose":"x"}`)
	for range 5 {
		if _, out := call(t, d, "GET", "/messages/async/i2", "", ""); out["status"] != "running" {
			t.Fatalf("never-finishing status = %v, want running", out)
		}
	}
	short, stop := context.WithCancel(ctx)
	stop()
	if _, err := d.WaitAnswers(short, 1); err == nil {
		t.Error("WaitAnswers(1) with none = nil error, want the ctx error")
	}
}
