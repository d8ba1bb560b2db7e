package session

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func testSealer(t *testing.T, fill byte) *Sealer {
	t.Helper()
	k, err := NewSealer(bytes.Repeat([]byte{fill}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealedSessionOpensAsItWas(t *testing.T) {
	k := testSealer(t, 1)
	want := Session{ID: NewID(), Opened: time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC), Seen: time.Date(2026, 8, 14, 10, 30, 5, 0, time.UTC),
		Expires: time.Date(2026, 8, 14, 21, 0, 0, 0, time.UTC)}
	want.KeyHash[0], want.KeyHash[31] = 7, 9
	got, ok := k.Open(k.Seal(want))
	if !ok || got != want {
		t.Fatalf("Open(Seal(s)) = %+v, %v; want %+v", got, ok, want)
	}
	if a, b := k.Seal(want), k.Seal(want); a == b {
		t.Error("two seals of one session are equal: the nonce is not fresh")
	}
}

// The cookie is the browser's storage: it must hold nothing of the key,
// not even the hash the store knows the key by.
func TestSealedSessionHidesTheKeyHash(t *testing.T) {
	k := testSealer(t, 1)
	s := Session{ID: NewID()}
	copy(s.KeyHash[:], bytes.Repeat([]byte{0xab}, 32))
	raw, err := base64.RawURLEncoding.DecodeString(k.Seal(s))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, s.KeyHash[:8]) || bytes.Contains(raw, s.ID[:8]) {
		t.Error("the sealed session shows its key hash or ID in the clear")
	}
}

func TestOpenRefusesWhatItDidNotSeal(t *testing.T) {
	k := testSealer(t, 1)
	sealed := k.Seal(Session{ID: NewID(), Opened: time.Unix(1, 0), Seen: time.Unix(2, 0)})
	raw, _ := base64.RawURLEncoding.DecodeString(sealed)
	for i := range raw {
		changed := bytes.Clone(raw)
		changed[i] ^= 1
		if _, ok := k.Open(base64.RawURLEncoding.EncodeToString(changed)); ok {
			t.Fatalf("a seal with bit 0 of byte %d flipped opens", i)
		}
	}
	for name, v := range map[string]string{
		"another secret's": testSealer(t, 2).Seal(Session{}),
		"empty":            "",
		"not base64":       "!!!" + sealed[3:],
		"truncated":        sealed[:len(sealed)-4],
		"too long":         sealed + strings.Repeat("A", 8),
	} {
		if _, ok := k.Open(v); ok {
			t.Errorf("the %s value opens", name)
		}
	}
}

func TestTokensAreBoundToPurposeAndID(t *testing.T) {
	k := testSealer(t, 1)
	id, other := NewID(), NewID()
	tok := k.Token("session", id)
	switch {
	case !k.CheckToken("session", id, tok):
		t.Error("the token does not check")
	case k.CheckToken("login", id, tok):
		t.Error("a session's token checks as a sign-in token")
	case k.CheckToken("session", other, tok):
		t.Error("a session's token checks for another session")
	case k.CheckToken("session", id, ""):
		t.Error("an empty token checks")
	case testSealer(t, 2).CheckToken("session", id, tok):
		t.Error("a token checks under another secret")
	}
}

func TestIDsRoundTripAsCookieValues(t *testing.T) {
	id := NewID()
	if got, ok := DecodeID(EncodeID(id)); !ok || got != id {
		t.Errorf("DecodeID(EncodeID(id)) = %x, %v", got, ok)
	}
	for _, v := range []string{"", "short", EncodeID(id) + "A", "!" + EncodeID(id)[1:]} {
		if _, ok := DecodeID(v); ok {
			t.Errorf("DecodeID(%q) succeeds", v)
		}
	}
}

func TestNewSealerWantsALongSecret(t *testing.T) {
	if _, err := NewSealer(make([]byte, 31)); err == nil {
		t.Error("a 31-byte secret is accepted")
	}
}
