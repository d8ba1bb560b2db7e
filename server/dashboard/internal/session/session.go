// Package session seals a dashboard session into its cookie and derives
// its CSRF tokens.
//
// A session lives in its cookie, sealed, rather than in a table: replicas
// behind a load balancer then share sessions with no state of their own,
// and the server keeps nothing per browser. What makes that safe is what
// the cookie holds and what it does not:
//
//   - the store's reference to the API key (the SHA-256 the store looks
//     keys up by), never the key: the server looks the key up on every
//     request, so a revoked or expired key ends every session opened with
//     it;
//   - the times that bound the session (sign-in, last use, and the end
//     its sign-in gave it), which the server checks against its own
//     clock;
//   - a random ID, which the CSRF token is derived from, and by which the
//     store remembers a session signed out before its end.
//
// It is encrypted (AES-256-GCM), not only signed, so the browser's storage
// holds nothing of the key, not even its hash. The sealing key derives
// from a secret the server keeps outside its database, so a copy of the
// database, which holds every key's hash, cannot seal a session.
package session

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"
)

// Session is a signed-in browser's session, as its cookie holds it.
type Session struct {
	// ID is random: it names the session for signing out, and its CSRF
	// token is derived from it.
	ID [32]byte
	// KeyHash is the SHA-256 of the API key the session was opened with,
	// the store's reference to the key.
	KeyHash [32]byte
	// Opened is when the browser signed in, Seen its last request, and
	// Expires when the session ends however it is used (fixed at sign-in,
	// so that the server knows how long to remember a sign-out even if
	// its bounds change later); all in whole seconds.
	Opened, Seen, Expires time.Time
}

// NewID returns a random session ID.
func NewID() [32]byte {
	var id [32]byte
	rand.Read(id[:])
	return id
}

// Sealer seals sessions into cookie values and derives CSRF tokens, with
// keys derived from one secret, which every replica must share.
type Sealer struct {
	aead cipher.AEAD
	csrf []byte
}

// Sealing versions the cookie's layout; the additional data binds a sealed
// value to its use.
const (
	sealVersion = 2
	sessionLen  = 32 + 32 + 8 + 8 + 8
	sessionAD   = "docsapi dashboard session"
)

// NewSealer returns a Sealer whose keys derive from secret (at least 32
// bytes): one for sealing, one for CSRF tokens, each bound to its use.
func NewSealer(secret []byte) (*Sealer, error) {
	if len(secret) < 32 {
		return nil, errors.New("session: the secret needs at least 32 bytes")
	}
	block, err := aes.NewCipher(derive(secret, "docsapi dashboard session key"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead, csrf: derive(secret, "docsapi dashboard csrf key")}, nil
}

func derive(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// Seal returns the cookie value that holds s.
func (k *Sealer) Seal(s Session) string {
	plain := make([]byte, 0, sessionLen)
	plain = append(plain, s.ID[:]...)
	plain = append(plain, s.KeyHash[:]...)
	plain = binary.BigEndian.AppendUint64(plain, uint64(s.Opened.Unix()))
	plain = binary.BigEndian.AppendUint64(plain, uint64(s.Seen.Unix()))
	plain = binary.BigEndian.AppendUint64(plain, uint64(s.Expires.Unix()))
	out := make([]byte, 1+k.aead.NonceSize(), 1+k.aead.NonceSize()+sessionLen+k.aead.Overhead())
	out[0] = sealVersion
	rand.Read(out[1:])
	out = k.aead.Seal(out, out[1:], plain, []byte(sessionAD))
	return base64.RawURLEncoding.EncodeToString(out)
}

// Open returns the session a cookie value holds, and false for any value
// this Sealer did not seal, changed in any bit.
func (k *Sealer) Open(v string) (Session, bool) {
	// A sealed session has a fixed length; anything longer is not one,
	// and is refused before it costs a decoding.
	if len(v) > base64.RawURLEncoding.EncodedLen(1+k.aead.NonceSize()+sessionLen+k.aead.Overhead()) {
		return Session{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) < 1+k.aead.NonceSize() || b[0] != sealVersion {
		return Session{}, false
	}
	nonce, sealed := b[1:1+k.aead.NonceSize()], b[1+k.aead.NonceSize():]
	plain, err := k.aead.Open(nil, nonce, sealed, []byte(sessionAD))
	if err != nil || len(plain) != sessionLen {
		return Session{}, false
	}
	var s Session
	copy(s.ID[:], plain[:32])
	copy(s.KeyHash[:], plain[32:64])
	s.Opened = time.Unix(int64(binary.BigEndian.Uint64(plain[64:72])), 0).UTC()
	s.Seen = time.Unix(int64(binary.BigEndian.Uint64(plain[72:80])), 0).UTC()
	s.Expires = time.Unix(int64(binary.BigEndian.Uint64(plain[80:88])), 0).UTC()
	return s, true
}

// Token returns the CSRF token of id for purpose: an HMAC, so that a page
// of another origin, which can neither read the session's cookie nor its
// pages, cannot make one.
func (k *Sealer) Token(purpose string, id [32]byte) string {
	m := hmac.New(sha256.New, k.csrf)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(id[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckToken reports whether token is the CSRF token of id for purpose,
// in constant time.
func (k *Sealer) CheckToken(purpose string, id [32]byte, token string) bool {
	return hmac.Equal([]byte(token), []byte(k.Token(purpose, id)))
}

// EncodeID writes id as a cookie value: the sign-in form's nonce, which
// is not secret (its token is an HMAC the browser cannot make).
func EncodeID(id [32]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// DecodeID reads a value of EncodeID, and false for anything else.
func DecodeID(v string) ([32]byte, bool) {
	var id [32]byte
	if base64.RawURLEncoding.DecodedLen(len(v)) != len(id) {
		return id, false
	}
	n, err := base64.RawURLEncoding.Decode(id[:], []byte(v))
	return id, err == nil && n == len(id)
}
