package memory

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"time"

	"github.com/neobot/neobot/core"
)

// Kind says what a record is for.
type Kind string

// Record kinds.
const (
	// KindFact is something true about the world, a project or a team.
	KindFact Kind = "fact"
	// KindPreference is how a user likes things done.
	KindPreference Kind = "preference"
	// KindProfile describes a user: role, team, time zone.
	KindProfile Kind = "profile"
	// KindProcedure is a tool sequence that completed a goal.
	KindProcedure Kind = "procedure"
	// KindTurn is an excerpt of a past exchange.
	KindTurn Kind = "turn"
)

// Valid reports whether k is one of the record kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindFact, KindPreference, KindProfile, KindProcedure, KindTurn:
		return true
	}
	return false
}

// Scope says where a record may be recalled. Platform and Workspace are
// always set: nothing crosses workspaces. Within a workspace:
//   - DM: only in a direct message with User.
//   - User set: only in conversations with that user (their own memory).
//   - Channel set: only in that channel (with User: only that user's, there;
//     what they said about themselves in a private place).
//   - neither: anywhere in the workspace.
type Scope struct {
	Platform  string `json:"platform"`
	Workspace string `json:"workspace"`
	User      string `json:"user,omitempty"`
	Channel   string `json:"channel,omitempty"`
	DM        bool   `json:"dm,omitempty"`
}

// Reader is who is recalling: the conversation memory is read for.
type Reader struct {
	Platform  string
	Workspace string
	User      string
	Channel   string
	DM        bool
}

// ReaderOf returns the reader of an inbound message's conversation. In a
// private thread the thread is the channel: its members read what was said
// there, not what the wider channel knows.
func ReaderOf(in core.Inbound) Reader {
	r := Reader{
		Platform: in.Thread.Platform, Workspace: in.Thread.Workspace,
		User: in.User, Channel: in.Thread.Channel, DM: in.DM,
	}
	if in.Private {
		r.Channel = in.Thread.ID
	}
	return r
}

// Visible reports whether a record with scope s may be recalled by r. This
// is the one place the scope rules live; every read goes through it.
func (s Scope) Visible(r Reader) bool {
	if s.Workspace == "" || s.Platform != r.Platform || s.Workspace != r.Workspace {
		return false
	}
	if s.DM {
		return r.DM && s.User != "" && s.User == r.User
	}
	if s.User != "" && s.User != r.User {
		return false
	}
	if s.Channel != "" && s.Channel != r.Channel {
		return false
	}
	return true
}

// Record is one memory.
type Record struct {
	ID    string `json:"id"`
	Scope Scope  `json:"scope"`
	Kind  Kind   `json:"kind"`
	Text  string `json:"text"`
	// Entities are names and identifiers the record is about (people,
	// projects, addresses); they are indexed as exact identifiers.
	Entities []string  `json:"entities,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	// Supersedes is the ID of the record this one replaced, if any.
	Supersedes string `json:"supersedes,omitempty"`
	// Source is where a fact was learned: the thread, the message's event
	// ID and its author, whose own words it came from.
	Source string `json:"source,omitempty"`
}

// Store keeps records durably. The store package implements it over bbolt;
// the cortex's index is derived from it.
type Store interface {
	// WriteMemories stores put (replacing records with the same ID) and
	// deletes the records with IDs in del, atomically.
	WriteMemories(ctx context.Context, put []Record, del []string) error
	// ScanMemories calls fn with every stored record, in no set order,
	// stopping at fn's first error.
	ScanMemories(ctx context.Context, fn func(Record) error) error
}

// LaterStore is a Store that can take a write without waiting for it to
// be durable: it commits shortly after, with other writes when it can. A
// turn's write-back uses it: a crash before the commit loses the
// write-back, as a crash while the write-back runs does, and the turn's
// reply no longer pays a commit of its own for it. Writes a person waits
// on (remember, forget) never use it.
type LaterStore interface {
	// WriteMemoriesLater is WriteMemories without the wait. Its error
	// covers what can be checked at once (an empty ID, a record that does
	// not encode); a failing commit is the store's to report.
	WriteMemoriesLater(put []Record, del []string) error
}

// Loader is a Store that reads records by ID: a store several processes
// share (PostgreSQL), whose changes a cortex learns of by ID.
type Loader interface {
	LoadMemories(ctx context.Context, ids []string) ([]Record, error)
}

// newID returns a record ID that sorts by creation: 7 bytes of the wall
// clock in microseconds, then 4 random ones from the runtime's ChaCha8
// generator. Records written together then land side by side in the
// store's tree, so a commit writes one leaf for several of them; and no
// system call is made (crypto/rand makes one per ID here). An ID only has
// to be unique; it guards nothing.
func newID() string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMicro())<<8)
	binary.BigEndian.PutUint32(b[7:11], rand.Uint32())
	return "m" + hex.EncodeToString(b[:11])
}
