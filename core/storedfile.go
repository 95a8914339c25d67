package core

import "time"

// StoredFile is a file neobot keeps for one person in the store, where
// every instance reads it: a web upload, or a file a tool returned in
// their conversation. It goes with its thread (deleted, or dropped by
// retention); an upload never sent in a thread goes after a day.
type StoredFile struct {
	ID string
	// Owner is who may read it back: the web user.
	Owner string
	// Thread is the key of the thread it belongs to: where a tool
	// returned it, or where its upload was sent; "" for an upload not
	// sent yet.
	Thread   string
	Name     string
	MIMEType string
	Data     []byte
	At       time.Time
}

// MaxStoredFile is the largest file a store keeps.
const MaxStoredFile = 16 << 20
