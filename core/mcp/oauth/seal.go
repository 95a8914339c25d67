package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// KeySize is the size of the key that seals grants at rest (AES-256).
const KeySize = 32

// ParseKey reads a sealing key written as 64 hexadecimal digits or as the
// base64 of 32 bytes (`openssl rand -hex 32` or `openssl rand -base64
// 32`). The error never quotes the value.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, errors.New("want 32 random bytes written as 64 hex digits (openssl rand -hex 32) or in base64 (openssl rand -base64 32)")
}

// Sealer encrypts grants at rest with AES-256-GCM. The associated data
// binds a sealed grant to its key in the store, so a sealed value copied
// under another key does not open.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a sealer for a [KeySize]-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, errors.New("oauth: the sealing key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// sealVersion prefixes sealed values, so the format can change.
const sealVersion = 1

// Seal encrypts plain for the store key ad: a version byte, a random
// nonce, then the ciphertext.
func (s *Sealer) Seal(plain, ad []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	out := append([]byte{sealVersion}, nonce...)
	return s.aead.Seal(out, nonce, plain, ad)
}

// ErrUnseal means a sealed value does not open: another NEO_SECRET_KEY
// sealed it, or it was altered.
var ErrUnseal = errors.New("oauth: a stored token does not decrypt with NEO_SECRET_KEY (was the key changed?); log in again")

// Open decrypts a value Seal made for ad.
func (s *Sealer) Open(sealed, ad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return nil, ErrUnseal
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], ad)
	if err != nil {
		return nil, ErrUnseal
	}
	return plain, nil
}
