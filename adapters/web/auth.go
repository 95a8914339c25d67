package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// userRe is what a web user name may be: it becomes a thread's channel
// and the requester of its turns.
var userRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,31}$`)

// NewToken returns a fresh bearer token and the SHA-256 hash that a
// settings file keeps instead of it.
func NewToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("web: new token: %w", err)
	}
	token = "neo_" + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken is the hex SHA-256 of token, as NEO_WEB_USERS keeps it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ParseUsers reads NEO_WEB_USERS entries, each "name=<sha256 hex of the
// token>".
func ParseUsers(entries []string) (map[string]string, error) {
	out := map[string]string{} // hash -> user
	var errs []error
	for _, e := range entries {
		name, hash, ok := strings.Cut(strings.TrimSpace(e), "=")
		hash = strings.ToLower(hash)
		switch {
		case !ok || !userRe.MatchString(name):
			errs = append(errs, fmt.Errorf("%q is not name=<token hash>; names are 1-32 lowercase letters, digits, '.', '_' or '-' (run neobot web token NAME)", clip(e)))
		case len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "":
			errs = append(errs, fmt.Errorf("user %s: the token must be given as its SHA-256 hash, 64 hex digits, never the token itself (run neobot web token %s)", name, name))
		default:
			out[hash] = name
		}
	}
	return out, errors.Join(errs...)
}

// clip keeps a bad entry short in an error, and never shows more than the
// start of what may be a token pasted by mistake.
func clip(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// auth knows who a bearer token belongs to: the configured users, the
// sessions opened by login codes, and the codes not used yet.
type auth struct {
	users map[string]string // token hash -> user

	mu       sync.Mutex
	sessions map[string]string    // token hash -> user
	codes    map[string]loginCode // code hash -> code
	now      func() time.Time
}

type loginCode struct {
	user    string
	expires time.Time
}

// loginTTL is how long a login link works.
const loginTTL = 15 * time.Minute

func newAuth(users map[string]string, now func() time.Time) *auth {
	return &auth{users: users, sessions: map[string]string{}, codes: map[string]loginCode{}, now: now}
}

// user returns the user whose bearer token r carries, or "" for none.
func (a *auth) user(r *http.Request) string {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return ""
	}
	h := HashToken(strings.TrimSpace(token))
	if u := a.lookup(a.users, h); u != "" {
		return u
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lookup(a.sessions, h)
}

// lookup finds hash in m comparing in constant time, so a token's hash is
// not guessed byte by byte from response times.
func (a *auth) lookup(m map[string]string, hash string) string {
	found := ""
	for h, u := range m {
		if subtle.ConstantTimeCompare([]byte(h), []byte(hash)) == 1 {
			found = u
		}
	}
	return found
}

// LoginCode returns a one-time code that signs user in once, within
// loginTTL.
func (a *auth) loginCode(user string) (string, error) {
	code, hash, err := NewToken()
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.codes[hash] = loginCode{user: user, expires: a.now().Add(loginTTL)}
	return code, nil
}

// exchange trades a login code for a session token; a code works once.
func (a *auth) exchange(code string) (token, user string, err error) {
	h := HashToken(code)
	a.mu.Lock()
	c, ok := a.codes[h]
	delete(a.codes, h)
	a.mu.Unlock()
	if !ok || !a.now().Before(c.expires) {
		return "", "", errors.New("this login link was used already or has expired; ask for a new one (restart neobot web)")
	}
	token, hash, err := NewToken()
	if err != nil {
		return "", "", err
	}
	a.mu.Lock()
	a.sessions[hash] = c.user
	a.mu.Unlock()
	return token, c.user, nil
}
