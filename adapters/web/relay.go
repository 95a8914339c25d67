package web

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Relay carries what one instance's web shows to the other instances
// serving the web from the same database, so a browser connected to any
// of them sees each conversation whole: whichever instance took its
// messages, runs its turns or asks its approvals. cmd/neobot implements
// it with PostgreSQL notifications; the receiving instances call
// [Adapter.Receive].
type Relay interface {
	// Relay hands note to every instance, this one included, each
	// calling [Adapter.Receive] with the notes in one order for all. It
	// may fail (the note is then shown here alone, and logged); it must
	// not block long.
	Relay(ctx context.Context, note []byte) error
}

// maxNote bounds an encoded note: PostgreSQL refuses a notification
// payload of 8,000 bytes or more, and the relay adds its own header.
const maxNote = 7000

// note is one thing an instance's web tells the others.
type note struct {
	// Conv is the conversation; User its owner (for a created one).
	Conv string `json:"conv"`
	User string `json:"user,omitempty"`
	// Created is set on a conversation created and not yet stored.
	Created time.Time `json:"created,omitzero"`
	// Type and Data are an event of the conversation's stream; ID is the
	// event's ID on every instance (see feed.mint).
	Type string          `json:"type,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	ID   string          `json:"id,omitempty"`
	// Shown is set on a note its own instance showed before sending (an
	// event too big to relay, sent as a reset): it skips it on receipt.
	Shown string `json:"shown,omitempty"`
	// Stop is set when the conversation's owner pressed Stop: whichever
	// instance runs the turn keeps the words written so far.
	Stop bool `json:"stop,omitempty"`
}

// relayed reports whether the other instances are told of events of typ:
// not the pieces of an answer being written, which only the instance
// running the turn streams (its final answer event is relayed).
func relayed(typ string) bool {
	return typ != EventAnswerDelta && typ != EventAnswerRetract
}

// relaying is how many notes may wait for the relay; past it, notes are
// dropped (and counted in the log) rather than holding a turn up.
const relaying = 1024

// tell queues n for every instance, this one included; Run sends it.
// An event too big to relay is shown here at once and becomes a reset
// for the others: their browsers reload the conversation from the store
// (an answer is stored before it is shown). A note that cannot be sent
// is shown here, so this instance's browsers still see it.
func (a *Adapter) tell(n note) {
	if a.opts.Relay == nil {
		return
	}
	raw, err := json.Marshal(n)
	if err == nil && len(raw) > maxNote {
		a.showHere(n)
		raw, err = json.Marshal(note{Conv: n.Conv, Type: EventReset, Data: json.RawMessage(`{}`), ID: a.feed.mint(), Shown: a.feed.epoch})
	}
	if err != nil {
		a.log.Error().Err(err).Msg("web: encode a note for the other instances")
		a.showHere(n)
		return
	}
	select {
	case a.notes <- raw:
	default:
		a.showHere(n)
		// Logged at the first drop and every hundredth after: a relay
		// that is down must not flood the log.
		if d := a.dropped.Add(1); d%100 == 1 {
			a.log.Warn().Int64("dropped", d).Str("conversation", n.Conv).Msg("web: the relay to the other instances is behind; notes are dropped (their browsers see them on reload)")
		}
	}
}

// relay sends the queued notes until ctx ends. Failures are logged at
// the first and every hundredth after, as drops are.
func (a *Adapter) relay(ctx context.Context) {
	var failed int64
	for {
		select {
		case <-ctx.Done():
			return
		case raw := <-a.notes:
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := a.opts.Relay.Relay(sctx, raw); err != nil && ctx.Err() == nil {
				if failed++; failed%100 == 1 {
					a.log.Warn().Err(err).Int64("failed", failed).Msg("web: tell the other instances; their browsers see it on reload")
				}
				var n note
				if json.Unmarshal(raw, &n) == nil && n.Shown == "" {
					a.showHere(n)
				}
			}
			cancel()
		}
	}
}

// tellStop tells every instance, before the stop is journaled, that
// conv's owner pressed Stop: the note is sent now, not queued, so it
// reaches the instance running the turn before the stop itself does (the
// database delivers notifications in the order they were committed).
func (a *Adapter) tellStop(ctx context.Context, conv string) {
	if a.opts.Relay == nil {
		return
	}
	raw, err := json.Marshal(note{Conv: conv, Stop: true})
	if err == nil {
		err = a.opts.Relay.Relay(ctx, raw)
	}
	if err != nil {
		a.log.Warn().Err(err).Str("conversation", conv).Msg("web: tell the other instances of a Stop; a turn running on another may take the words back")
	}
}

// showHere publishes n's event in this instance's feed alone.
func (a *Adapter) showHere(n note) {
	if n.Type != "" {
		a.feed.publishAs(n.Conv, n.ID, n.Type, n.Data)
	}
}

// Receive takes a note an instance's web relayed, this one's included
// (the relay delivers every note to every instance, in one order): an
// event joins the conversation's stream here, under the ID it has on
// every instance; a created conversation becomes its owner's here too,
// and an approval is listed for the approvers here.
func (a *Adapter) Receive(ctx context.Context, raw []byte) error {
	var n note
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("web: a relayed note: %w", err)
	}
	if n.Shown != "" && n.Shown == a.feed.epoch {
		return nil // shown here before it was sent
	}
	if n.Stop {
		a.stopping.Store(n.Conv, true)
		return nil
	}
	if len(n.Conv) != 24 {
		return fmt.Errorf("web: a relayed note for conversation %q", n.Conv)
	}
	if !n.Created.IsZero() {
		if userRe.MatchString(n.User) && a.created.owner(n.Conv) == "" { // not one created here
			a.created.add(n.Conv, n.User, n.Created)
		}
		return nil
	}
	if n.Type == "" {
		return fmt.Errorf("web: a relayed note for conversation %s with no event", n.Conv)
	}
	switch n.Type {
	case EventGateInvoked:
		var d gateData
		if err := json.Unmarshal(n.Data, &d); err != nil {
			return fmt.Errorf("web: a relayed approval: %w", err)
		}
		// The gate itself, from the shared store: who may answer it is
		// not taken from a note.
		if a.opts.Gates != nil {
			g, err := a.opts.Gates.Load(ctx, d.Token)
			if err != nil {
				return fmt.Errorf("web: a relayed approval: %w", err)
			}
			a.pending.add(g)
		}
	case EventGateDecided:
		var d decidedData
		if err := json.Unmarshal(n.Data, &d); err != nil {
			return fmt.Errorf("web: a relayed decision: %w", err)
		}
		a.pending.remove(d.Token)
	}
	a.feed.publishAs(n.Conv, n.ID, n.Type, n.Data)
	return nil
}
