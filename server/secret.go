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

// Each use of the secret gets a key of its own derived from it (derive),
// so that no use can be turned against another: the exports' cursors here
// (Server.cursorKey), the dashboard's sessions in package dashboard.

// resolveSecret returns the secret of Config.Secret: secret, checked, or
// with none a random secret of this process's own.
func resolveSecret(secret []byte) ([]byte, error) {
	switch n := len(secret); {
	case n == 0:
		secret = make([]byte, SecretBytes)
		rand.Read(secret)
	case n != SecretBytes:
		return nil, fmt.Errorf("server: Config.Secret has %d bytes; it needs exactly %d random bytes", n, SecretBytes)
	}
	return secret, nil
}

// derive returns the key of secret for the use label.
func derive(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}
