package ulid

import (
	"strings"
	"testing"
	"time"
)

func TestNewIsValidAndHoldsItsTime(t *testing.T) {
	at := time.Date(2026, 11, 28, 23, 59, 58, 123_000_000, time.UTC)
	id := New(at)
	if !Valid(id) {
		t.Fatalf("New gave %q, which Valid refuses", id)
	}
	if got := Time(id); !got.Equal(at) {
		t.Errorf("Time(%q) = %v, want %v", id, got, at)
	}
	if New(at) == id {
		t.Error("two IDs of the same millisecond are equal: the random part is missing")
	}
}

func TestLaterSortsAfter(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	prev := New(at)
	for _, d := range []time.Duration{time.Millisecond, time.Second, time.Hour, 24 * 365 * time.Hour} {
		next := New(at.Add(d))
		if next <= prev {
			t.Errorf("the ID of %v later, %q, does not sort after %q", d, next, prev)
		}
		prev = next
	}
}

func TestEncodeKnownValue(t *testing.T) {
	// The specification's example bits: all ones encode as 7ZZ...Z.
	var b [16]byte
	for i := range b {
		b[i] = 0xff
	}
	if got, want := encode(b), "7"+strings.Repeat("Z", 25); got != want {
		t.Errorf("encode(all ones) = %q, want %q", got, want)
	}
	b = [16]byte{15: 1}
	if got, want := encode(b), strings.Repeat("0", 25)+"1"; got != want {
		t.Errorf("encode(1) = %q, want %q", got, want)
	}
}

func TestValid(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"01ARZ3NDEKTSV4RRFFQ69G5FAV", true},
		{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", true},
		{"8ZZZZZZZZZZZZZZZZZZZZZZZZZ", false}, // past 48 bits of time
		{"01arz3ndektsv4rrffq69g5fav", false}, // lower case
		{"01ARZ3NDEKTSV4RRFFQ69G5FA", false},  // 25 characters
		{"01ARZ3NDEKTSV4RRFFQ69G5FAVX", false},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAU", false}, // U is not in the alphabet
		{"01ARZ3NDEKTSV4RRFFQ69G5FA-", false},
		{"", false},
	} {
		if got := Valid(c.s); got != c.want {
			t.Errorf("Valid(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}
