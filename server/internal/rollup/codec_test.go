package rollup

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestNormalizeSortsAddsAndDropsEmpty(t *testing.T) {
	got, err := Normalize([]Count{
		{Path: "/b", Human: 1},
		{Path: "/B", AI: 3},
		{Path: "/b", Human: 2, AI: 5},
		{Path: "/a"},        // no views: not a row
		{Path: "/B", AI: 1}, // same path again
		{Path: "/bots", Bot: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Byte order: "/B" before "/b".
	want := []Count{{Path: "/B", AI: 4}, {Path: "/b", Human: 3, AI: 5}, {Path: "/bots", Bot: 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("Normalize = %v, want %v", got, want)
	}
}

func TestNormalizeRefusesBadCounts(t *testing.T) {
	for name, c := range map[string]Count{
		"empty path":     {Path: "", Human: 1},
		"negative human": {Path: "/a", Human: -1},
		"negative ai":    {Path: "/a", AI: -1},
		"negative bot":   {Path: "/a", Bot: -1},
	} {
		if _, err := Normalize([]Count{c}); err == nil {
			t.Errorf("Normalize with %s: no error", name)
		}
	}
	if _, err := Normalize([]Count{{Path: "/a", Human: math.MaxInt64}, {Path: "/a", Human: 1}}); err == nil {
		t.Error("Normalize of a sum past int64: no error")
	}
}

// randomCounts returns normalized counts of paths that share prefixes,
// extend one another and hold bytes of every value.
func randomCounts(r *rand.Rand, n int) []Count {
	parts := []string{"/", "/docs", "/docs/", "a", "b", "\x00", "\xff", "é", "/x", "-", "0"}
	var cs []Count
	for range n {
		var sb strings.Builder
		sb.WriteString("/")
		for range r.IntN(6) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		cs = append(cs, Count{Path: sb.String(), Human: r.Int64N(1 << r.IntN(63)), AI: r.Int64N(1 << r.IntN(63)), Bot: r.Int64N(1 << r.IntN(63))})
	}
	cs, err := Normalize(cs)
	if err != nil {
		panic(err)
	}
	return cs
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		counts := randomCounts(r, r.IntN(60))
		counts = append(counts, Count{Path: "\xff\xff", Human: math.MaxInt64, AI: math.MaxInt64 - 1, Bot: math.MaxInt64 - 2})
		seg := Encode(nil, counts)
		got, err := Decode(seg)
		if err != nil {
			t.Fatalf("Decode of %q: %v", counts, err)
		}
		if !slices.Equal(got, counts) {
			t.Fatalf("round trip of %v gave %v", counts, got)
		}
		if n, err := Entries(seg); err != nil || n != len(counts) {
			t.Fatalf("Entries = %d, %v; want %d", n, err, len(counts))
		}
	}
	empty, err := Decode(Encode(nil, nil))
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty segment decoded to %v, %v", empty, err)
	}
}

func TestFrontCodingKeepsSegmentsSmall(t *testing.T) {
	var counts []Count
	for i := range 5000 {
		counts = append(counts, Count{Path: fmt.Sprintf("/docs/section-%03d/page-%05d", i%97, i), Human: int64(i%100 + 1)})
	}
	counts, _ = Normalize(counts)
	if n := len(Encode(nil, counts)); n > 10*len(counts) {
		t.Fatalf("5,000 paths of 27 bytes take %d bytes, more than 10 a path", n)
	}
}

// segmentBody is a segment of the given header and entries' bytes.
func segmentBody(entries, names int, b ...byte) []byte {
	return append(appendHeader(nil, entries, names), b...)
}

// damagedSegments are segments that every reader must refuse, by what is
// wrong with each.
func damagedSegments() map[string][]byte {
	good := Encode(nil, []Count{{Path: "/ab", Human: 300, AI: 2}, {Path: "/ac", AI: 1}})
	body := segmentBody
	return map[string][]byte{
		"empty":            {},
		"older format":     append([]byte{format - 1}, good[1:]...),
		"newer format":     append([]byte{format + 1}, good[1:]...),
		"truncated entry":  good[:len(good)-1],
		"truncated path":   good[:6],
		"no header":        {format},
		"too few entries":  body(3, 6, 0, 3, '/', 'a', 'b', 1, 0, 0, 2, 1, 'c', 0, 1, 0),
		"names mismatch":   body(2, 7, 0, 3, '/', 'a', 'b', 1, 0, 0, 2, 1, 'c', 0, 1, 0),
		"empty path":       body(1, 0, 0, 0, 1, 0, 0),
		"empty rest":       body(2, 6, 0, 3, '/', 'a', 'b', 1, 0, 0, 3, 0, 0, 1, 0),
		"same path twice":  body(2, 6, 0, 3, '/', 'a', 'b', 1, 0, 0, 0, 3, '/', 'a', 'b', 1, 0, 0),
		"out of order":     body(2, 6, 0, 3, '/', 'a', 'c', 1, 0, 0, 2, 1, 'b', 0, 1, 0),
		"shared too long":  body(2, 7, 0, 3, '/', 'a', 'c', 1, 0, 0, 4, 1, 'b', 0, 1, 0),
		"first shares":     body(1, 3, 1, 2, 'a', 'b', 1, 0, 0),
		"no views":         body(1, 2, 0, 2, '/', 'a', 0, 0, 0),
		"no bot count":     body(1, 2, 0, 2, '/', 'a', 1, 0),
		"count past int64": appendUvarints(body(1, 2, 0, 2, '/', 'a'), math.MaxInt64+1, 0, 0),
		"bots past int64":  appendUvarints(body(1, 2, 0, 2, '/', 'a'), 0, 0, math.MaxInt64+1),
		"huge header":      body(1<<40, 1<<50, 0, 2, '/', 'a', 1, 0, 0),
		"varint too long":  append(body(1, 2, 0, 2, '/', 'a'), bytes.Repeat([]byte{0xff}, 10)...),
	}
}

func TestDecodeRefusesDamagedSegments(t *testing.T) {
	for name, seg := range damagedSegments() {
		if _, err := Decode(seg); err == nil {
			t.Errorf("Decode of a segment with %s: no error", name)
		}
	}
	// The table's entries are spelled right: the same bytes, undamaged,
	// decode.
	if got, err := Decode(segmentBody(2, 6, 0, 3, '/', 'a', 'b', 1, 0, 0, 2, 1, 'c', 0, 1, 7)); err != nil ||
		!slices.Equal(got, []Count{{Path: "/ab", Human: 1}, {Path: "/ac", AI: 1, Bot: 7}}) {
		t.Errorf("Decode of a sound segment = %v, %v", got, err)
	}
	// Two segments whose sums pass int64 fail the tally, not wrap.
	var tally Tally
	defer tally.Release()
	if err := tally.Add(Encode(nil, []Count{{Path: "/a", Human: math.MaxInt64}})); err != nil {
		t.Fatal(err)
	}
	if err := tally.Add(Encode(nil, []Count{{Path: "/b", Human: 1}})); err == nil {
		t.Error("totals past int64: no error")
	}
}

func appendUvarints(b []byte, vs ...uint64) []byte {
	for _, v := range vs {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		b = append(b, byte(v))
	}
	return b
}

func TestMergeSegmentsAddsUp(t *testing.T) {
	a := Encode(nil, []Count{{Path: "/b", Human: 1}, {Path: "/e", AI: 2, Bot: 5}})
	b := Encode(nil, []Count{{Path: "/a", AI: 7}, {Path: "/e", Human: 3, AI: 1, Bot: 1}})
	seg, n, err := MergeSegments([][]byte{a, b}, []Count{{Path: "/e", Human: 1}, {Path: "/z", Human: 4}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(seg)
	if err != nil {
		t.Fatal(err)
	}
	want := []Count{{Path: "/a", AI: 7}, {Path: "/b", Human: 1}, {Path: "/e", Human: 4, AI: 3, Bot: 6}, {Path: "/z", Human: 4}}
	if !slices.Equal(got, want) || n != len(want) {
		t.Fatalf("merged = %v (%d entries), want %v", got, n, want)
	}
	if _, _, err := MergeSegments([][]byte{seg}, []Count{{Path: "/z", Human: math.MaxInt64}}); err == nil {
		t.Error("MergeSegments past int64: no error")
	}
	if _, _, err := MergeSegments([][]byte{seg}, []Count{{Path: "/e", Bot: math.MaxInt64}}); err == nil {
		t.Error("MergeSegments of bots past int64: no error")
	}
	if _, _, err := MergeSegments([][]byte{{format + 1}}, nil); err == nil {
		t.Error("MergeSegments of a segment of another format: no error")
	}
}

func FuzzDecodeNeverPanics(f *testing.F) {
	f.Add(Encode(nil, []Count{{Path: "/a/b", Human: 300, AI: 2}, {Path: "/a/c", AI: 1}, {Path: "/a/d", Bot: 1}}))
	f.Add([]byte{format})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, seg []byte) {
		counts, err := Decode(seg)
		if err != nil {
			return
		}
		// What decodes is in order, has views, and encodes back to
		// what decodes to the same counts.
		for i, c := range counts {
			if i > 0 && counts[i-1].Path >= c.Path || c.Human+c.AI+c.Bot == 0 {
				t.Fatalf("decoded counts out of order or empty: %q", counts)
			}
		}
		again, err := Decode(Encode(nil, counts))
		if err != nil || !slices.Equal(again, counts) {
			t.Fatalf("re-encoding %v gave %v, %v", counts, again, err)
		}
	})
}
