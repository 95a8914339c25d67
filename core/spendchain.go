package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
)

// The spend ledger is an append-only chain: every write of a call (its
// plan, each change of state, its outcome) appends one LedgerEntry that
// holds the call's whole record as written and the hash of the entry
// before it. docs/spending.md ("The chain") describes the encoding for
// auditors; ChainVersion, LedgerEntry.Sum and ChainCheck are its
// definition.

// ChainVersion is the first field of every entry's hashed encoding: it
// names the encoding, so a later one cannot be mistaken for it.
const ChainVersion = "neobot-spend-ledger-1"

// LedgerEntry is one entry of the spend ledger's chain: one write of one
// call, in the order every instance agrees on.
type LedgerEntry struct {
	// Seq is the entry's place in the chain, from 1, without gaps.
	Seq uint64 `json:"seq"`
	// Prev is the previous entry's Hash; "" for the first entry.
	Prev string `json:"prev"`
	// Hash is [LedgerEntry.Sum] of the entry as it was appended.
	Hash string `json:"hash"`
	// Spend and State are the call's ID and its state after the write.
	Spend string     `json:"spend"`
	State SpendState `json:"state"`
	// Record is the call as written ([Spend.Record]), byte for byte: the
	// hash covers these bytes, never a re-encoding of them.
	Record string `json:"record"`
}

// Sum is the entry's hash: SHA-256, as 64 lowercase hex digits, of the
// netstrings ("<length in decimal>:<bytes>,") of ChainVersion, Seq in
// decimal, Prev, Spend, State and Record, in that order. e.Hash is not
// read.
func (e LedgerEntry) Sum() string {
	var b bytes.Buffer
	for _, f := range []string{ChainVersion, strconv.FormatUint(e.Seq, 10), e.Prev, e.Spend, string(e.State), e.Record} {
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
		b.WriteByte(',')
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// NextEntry is the entry that records s after the chain's last entry,
// whose Seq and Hash are given (0 and "" for an empty chain). It returns
// s with its Seq and Hash set to the new entry's.
func NextEntry(lastSeq uint64, lastHash string, s Spend) (LedgerEntry, Spend, error) {
	raw, err := s.Record()
	if err != nil {
		return LedgerEntry{}, s, err
	}
	e := LedgerEntry{Seq: lastSeq + 1, Prev: lastHash, Spend: s.ID, State: s.State, Record: string(raw)}
	e.Hash = e.Sum()
	s.Seq, s.Hash = e.Seq, e.Hash
	return e, s, nil
}

// ChainBreak names the first place where a spend ledger differs from the
// chain neobot appended: an entry edited, removed or inserted, or a
// call's current record that is not the one its last entry holds.
type ChainBreak struct {
	// Seq is the entry where the chain breaks; 0 when the break is a
	// call's current record.
	Seq uint64 `json:"seq,omitempty"`
	// Spend is the call concerned, when one is known.
	Spend string `json:"spend,omitempty"`
	// Problem says what was found, for the operator.
	Problem string `json:"problem"`
}

// Error names the entry or the call, and what is wrong with it.
func (b *ChainBreak) Error() string {
	switch {
	case b.Seq > 0 && b.Spend != "":
		return fmt.Sprintf("entry %d (spend %s): %s", b.Seq, b.Spend, b.Problem)
	case b.Seq > 0:
		return fmt.Sprintf("entry %d: %s", b.Seq, b.Problem)
	}
	return fmt.Sprintf("spend %s: %s", b.Spend, b.Problem)
}

// ChainCheck verifies a spend ledger: feed it every entry in the order
// stored (Entry), then every call's current record (Record), then ask
// Done. The first break found is kept; later input is ignored.
type ChainCheck struct {
	entries uint64
	last    string // the previous entry's hash, as stored
	// latest holds, per call, the seq and the record's SHA-256 of its
	// last entry; seen marks the calls whose current record was fed.
	latest map[string]latestEntry
	seen   map[string]bool
	brk    *ChainBreak
}

type latestEntry struct {
	seq    uint64
	record [sha256.Size]byte
}

// Entry checks the next entry as stored: its place, its link to the
// entry before it, and its hash.
func (c *ChainCheck) Entry(e LedgerEntry) {
	if c.brk != nil {
		return
	}
	want := c.entries + 1
	switch {
	case e.Seq > want:
		c.brk = &ChainBreak{Seq: want, Problem: fmt.Sprintf("missing: the chain goes from entry %d to entry %d, so %s removed", want-1, e.Seq, removed(want, e.Seq))}
		return
	case e.Seq < want:
		c.brk = &ChainBreak{Seq: e.Seq, Spend: e.Spend, Problem: fmt.Sprintf("out of place: found after entry %d, so it was inserted or renumbered", want-1)}
		return
	case e.Sum() != e.Hash:
		c.brk = &ChainBreak{Seq: e.Seq, Spend: e.Spend, Problem: "edited: its content no longer matches its hash"}
		return
	case e.Prev != c.last && want == 1:
		c.brk = &ChainBreak{Seq: e.Seq, Spend: e.Spend, Problem: "the first entry links to an earlier one, so entries before it were removed"}
		return
	case e.Prev != c.last:
		c.brk = &ChainBreak{Seq: e.Seq, Spend: e.Spend, Problem: fmt.Sprintf("does not link to entry %d: an entry was inserted before it, or entry %d was replaced (its hash changed)", want-1, want-1)}
		return
	}
	c.entries, c.last = e.Seq, e.Hash
	if c.latest == nil {
		c.latest = map[string]latestEntry{}
	}
	c.latest[e.Spend] = latestEntry{seq: e.Seq, record: sha256.Sum256([]byte(e.Record))}
}

func removed(from, to uint64) string {
	if to-from == 1 {
		return fmt.Sprintf("entry %d was", from)
	}
	return fmt.Sprintf("entries %d to %d were", from, to-1)
}

// Record checks a call's current record against its last entry.
func (c *ChainCheck) Record(id string, record []byte) {
	if c.brk != nil {
		return
	}
	l, ok := c.latest[id]
	switch {
	case !ok:
		c.brk = &ChainBreak{Spend: id, Problem: "its record is in the ledger but no chain entry holds it, so it was inserted (or its entries removed)"}
		return
	case l.record != sha256.Sum256(record):
		c.brk = &ChainBreak{Spend: id, Problem: fmt.Sprintf("its current record was edited: it differs from its last chain entry, %d", l.seq)}
		return
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[id] = true
}

// Done returns the first break found, as a *ChainBreak, or nil when the
// chain holds together and every call's record is its last entry's. It
// also reports how many entries were checked.
func (c *ChainCheck) Done() (entries uint64, err error) {
	if c.brk == nil {
		for id, l := range c.latest {
			if !c.seen[id] && (c.brk == nil || l.seq < c.brk.Seq) {
				c.brk = &ChainBreak{Seq: l.seq, Spend: id, Problem: "the chain holds this call but its current record was removed"}
			}
		}
	}
	if c.brk != nil {
		return c.entries, c.brk
	}
	return c.entries, nil
}
