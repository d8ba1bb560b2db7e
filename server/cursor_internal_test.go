package server

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// A sealed position opens only with its key and scope, and any change to
// the cursor, in any bit, is refused.
func TestCursorSealing(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	sc := scope("feedback", "alpha", "", "", "", "pending")
	pos := new(position).int(1_786_000_000_000_000).str("fb_abc").b
	c := sealCursor(key, sc, pos)
	got, err := openCursor(key, sc, c)
	if err != nil || !bytes.Equal(got, pos) {
		t.Fatalf("openCursor = %x, %v; want %x", got, err, pos)
	}
	for name, other := range map[string][]byte{
		"another project": scope("feedback", "beta", "", "", "", "pending"),
		"another filter":  scope("feedback", "alpha", "", "", "", "resolved"),
		"parts run on":    scope("feedback", "alph", "a", "", "", "pending"),
		"another export":  scope("searches", "alpha", "", ""),
	} {
		if _, err := openCursor(key, other, c); err != errBadCursor {
			t.Errorf("%s: %v, want errBadCursor", name, err)
		}
	}
	if _, err := openCursor(bytes.Repeat([]byte{8}, 32), sc, c); err != errBadCursor {
		t.Errorf("another key: %v, want errBadCursor", err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	for i := range raw {
		for bit := range 8 {
			b := bytes.Clone(raw)
			b[i] ^= 1 << bit
			if _, err := openCursor(key, sc, base64.RawURLEncoding.EncodeToString(b)); err == nil {
				t.Fatalf("flipping bit %d of byte %d went unnoticed", bit, i)
			}
		}
	}
	for _, bad := range []string{"", "a", "====", string(bytes.Repeat([]byte("A"), maxCursorLength+1))} {
		if _, err := openCursor(key, sc, bad); err == nil {
			t.Errorf("cursor %.20q accepted", bad)
		}
	}
	r := &positionReader{b: pos}
	if v, s := r.int(), r.str(); v != 1_786_000_000_000_000 || s != "fb_abc" || r.done() != nil {
		t.Errorf("read back %d %q %v", v, s, r.done())
	}
}
