package server

import (
	"crypto/rand"
	"math/big"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomBase62 returns n characters drawn uniformly from [0-9A-Za-z] by a
// cryptographic source. Base62 keeps IDs and keys free of characters that
// need escaping in URLs, shells or the key's "prefix_" convention.
func randomBase62(n int) string {
	b := make([]byte, n)
	limit := big.NewInt(int64(len(base62)))
	for i := range b {
		v, err := rand.Int(rand.Reader, limit)
		if err != nil {
			// crypto/rand does not fail on supported platforms; a server
			// that cannot make secrets must not go on.
			panic("server: crypto/rand failed: " + err.Error())
		}
		b[i] = base62[v.Int64()]
	}
	return string(b)
}
