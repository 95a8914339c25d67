package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/neobot/neobot/core"
)

func TestAsk(t *testing.T) {
	yes := core.GateAnswer{Approved: true, Answer: "yes", By: "U1"}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	called := false
	tests := []struct {
		name string
		ctx  context.Context
		a    core.Approver
		want core.GateAnswer
	}{
		{"nil approver denies", t.Context(), nil, core.GateAnswer{}},
		{"error denies", t.Context(), func(context.Context, core.GateRequest) (core.GateAnswer, error) {
			return yes, errors.New("timeout")
		}, core.GateAnswer{}},
		{"cancelled ctx denies without asking", cancelled, func(context.Context, core.GateRequest) (core.GateAnswer, error) {
			called = true
			return yes, nil
		}, core.GateAnswer{}},
		{"approval", t.Context(), func(context.Context, core.GateRequest) (core.GateAnswer, error) { return yes, nil }, yes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := core.Ask(tt.ctx, tt.a, core.GateRequest{NodeID: "n1"}); got != tt.want {
				t.Errorf("Ask = %+v, want %+v", got, tt.want)
			}
		})
	}
	if called {
		t.Error("Ask called the approver on a cancelled ctx")
	}
}

func TestApproves(t *testing.T) {
	tests := []struct {
		option string
		want   bool
	}{
		// An approving option must read the same to everyone: whole on
		// its button, no invisible or combining characters.
		{"Yes, send 5 PAX to 0x52908400098527886E0F7030069857D2E4169EE7", true},
		{"Yes, send 5 PAX to 0x52908400098527886E0F7030069857D2E4169EE7 and 500 PAX to 0x8617E340B3D01FA5F11F306F4090FD50E238070D", false},
		{"Y\u0336e\u0336s\u0336", false},         // struck through
		{"Yes\u200b", false},                     // zero-width space
		{"Yes, send \u202eXAP 005\u202c", false}, // right-to-left override
		{"Approve\x00", false},
		// A plain yes approves.
		{"yes", true},
		{"Yes", true},
		{"  YES  ", true},
		{"y", true},
		{"Y", true},
		{"approve", true},
		{"Approve spend", true},
		{"Approved", true},
		{"Confirm", true},
		{"Confirm transfer of 5 USDC", true},
		{"ok", true},
		{"OK!", true},
		{"Proceed", true},
		{"Proceed with the swap", true},
		{"Allow", true},
		{"Accept", true},
		{"Yes, send it", true},
		{"Yes - send 5 PAX to 0xabc", true},
		{"yes.", true},

		// Everything else denies.
		{"", false},
		{"   ", false},
		{"no", false},
		{"No", false},
		{" deny ", false},
		{"n", false},
		{"reject", false},
		{"decline", false},
		{"cancel", false},
		{"abort", false},
		{"stop", false},
		{"Don't send", false},
		{"Don’t send", false},
		{"Do not send", false},
		{"No, keep the money", false},
		{"Not now", false},
		{"Skip", false},
		{"Skip this one", false},
		{"Later", false},
		{"Wait", false},
		{"Send 5 PAX", false},
		{"send", false},
		{"Maybe", false},
		{"👍", false},
		{"Yes, but not today", false},
		{"OK, don't send yet", false},
		{"Approve? No", false},
		{"yes/no", false},
		{"Confirm cancellation", false},
		{"Proceed without sending", false},
		{"Accept nothing", false},
		{"I won't approve", false},
		{"yesterday", false},
		{"okay-ish", false},
		{"Allow? Never", false},
		{"Approve later", false},
		{"Yes, cancel it", false},
		{"Reject the spend", false},

		// Read in NFKC form: stylised letters are the letters they stand for.
		{"\uff39\uff45\uff53", true}, // full-width Yes
		{"\uff39\uff45\uff53, \uff44\uff4f \uff4e\uff4f\uff54 \uff53\uff45\uff4e\uff44", false}, // full-width "Yes, do not send"
		{"Yes, send 5 \u2167 tokens", true},                                                     // Roman numeral eight
		// Invisible and filler characters refuse the option.
		{"Yes, do n\u3164ot send", false}, // Hangul filler renders blank
		{"Yes, do n\u115fot send", false}, // Hangul choseong filler
		{"Yes, do n\u1160ot send", false}, // Hangul jungseong filler
		{"Yes, do n\uffa0ot send", false}, // half-width Hangul filler
		{"Yes, do n\u2800ot send", false}, // blank Braille pattern
		{"Yes, do n\u200bot send", false}, // zero-width space
		{"Yes, do n\u200cot send", false}, // zero-width non-joiner
		{"Yes, do n\u2060ot send", false}, // word joiner
		{"Yes, do n\u00adot send", false}, // soft hyphen
		{"Yes\ufe0f", false},              // variation selector
		{"Yes\U000e0020", false},          // tag space
		{"Yes\ue000", false},              // private use
		{"Yes\u034f", false},              // combining grapheme joiner
		{"Yes\u3164", false},
		// Putting it off is no.
		{"OK, postpone", false},
		{"Yes, pause", false},
		{"Yes, postponed to Friday", false},
		{"Yes, delay it", false},
		{"OK, defer", false},
		{"Yes, later", false},
		{"Yes, hold it", false},
		{"Yes, on hold", false},
		{"Yes, suspend the transfer", false},
		{"Yes, tomorrow", false},
		// Negations in other languages are no.
		{"Yes, nein", false},
		{"OK, nicht senden", false},
		{"Yes, non", false},
		{"OK, ne pas envoyer", false},
		{"OK, pas maintenant", false},
		{"Yes, nie wysyłaj", false},
		{"Yes, não envie", false},
		{"Yes, nao envie", false},
		{"OK, nunca", false},
		{"Yes, нет", false},
		{"OK, не отправлять", false},
		{"Yes, 不要发送", false},
		{"OK 没有", false},
		{"Yes 否", false},
		{"OK, いいえ", false},
		{"Yes, 送らない", false},
		{"Yes, 아니요", false},
		{"OK, 안 보내", false},
		{"Yes, später", false},
		{"OK, plus tard", false},
		{"Yes, niet versturen", false},
		// A plain yes still approves.
		{"Yes, send 5 USDC to Алиса", true},
		{"OK, envoyer", true},
		{"Yes, 发送", true},
		{"Approve (送信)", true},
	}
	for _, tt := range tests {
		if got := core.Approves(tt.option); got != tt.want {
			t.Errorf("Approves(%q) = %v, want %v", tt.option, got, tt.want)
		}
	}
}
