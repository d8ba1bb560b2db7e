package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
)

// The secret (Config.Secret) is what the database does not hold: every
// key that seals something a client carries back (a session cookie, a
// cursor) derives from it, so that a copy of the database (a backup, a
// dump, a replica) seals nothing. Keys are stored hashed for the same
// reason: a leaked database must grant nothing.

// SecretBytes is the length of Config.Secret: 256 random bits.
const SecretBytes = 32

// serverKeys are the keys derived from the secret, one for each use, so
// that no use can be turned against another.
// (The dashboard derives the key of its sessions and CSRF tokens itself,
// in package dashboard.)
type serverKeys struct {
	cursor []byte // the HMAC key of the exports' cursors
}

// newServerKeys derives the keys from secret; with none, from a random
// secret of this process's own. It returns the secret too, for the
// dashboard.
func newServerKeys(secret []byte) (serverKeys, []byte, error) {
	switch n := len(secret); {
	case n == 0:
		secret = make([]byte, SecretBytes)
		rand.Read(secret)
	case n != SecretBytes:
		return serverKeys{}, nil, fmt.Errorf("server: Config.Secret has %d bytes; it needs exactly %d random bytes", n, SecretBytes)
	}
	return serverKeys{cursor: derive(secret, "docsapi cursors")}, secret, nil
}

// derive returns the key of secret for the use label.
func derive(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}
