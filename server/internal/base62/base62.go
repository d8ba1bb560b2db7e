// Package base62 makes the server's random IDs and secrets (jobs, keys,
// site tokens, request ids) of the characters [0-9A-Za-z], which need no
// escaping in URLs, shells or the keys' "prefix_" convention.
package base62

import (
	"crypto/rand"
	"math/big"
)

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random returns n characters drawn uniformly from the alphabet by a
// cryptographic source.
func Random(n int) string {
	b := make([]byte, n)
	limit := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, limit)
		if err != nil {
			// crypto/rand does not fail on supported platforms; a server
			// that cannot make secrets must not go on.
			panic("server: crypto/rand failed: " + err.Error())
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

// Is reports whether c is one of the alphabet's characters: an ASCII
// letter or digit.
func Is(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
