package rollup

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestNormalizeSortsAddsAndDropsEmpty(t *testing.T) {
	got, err := Normalize([]Count{
		{PathID: 9, Human: 1},
		{PathID: 2, AI: 3},
		{PathID: 9, Human: 2, AI: 5},
		{PathID: 4},        // no views: not a row
		{PathID: 2, AI: 1}, // same path again
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Count{{PathID: 2, AI: 4}, {PathID: 9, Human: 3, AI: 5}}
	if !slices.Equal(got, want) {
		t.Fatalf("Normalize = %v, want %v", got, want)
	}
}

func TestNormalizeRefusesBadCounts(t *testing.T) {
	for name, c := range map[string]Count{
		"path ID 0":      {PathID: 0, Human: 1},
		"negative ID":    {PathID: -3, Human: 1},
		"negative human": {PathID: 1, Human: -1},
		"negative ai":    {PathID: 1, AI: -1},
	} {
		if _, err := Normalize([]Count{c}); err == nil {
			t.Errorf("Normalize with %s: no error", name)
		}
	}
	if _, err := Normalize([]Count{{PathID: 1, Human: math.MaxInt64}, {PathID: 1, Human: 1}}); err == nil {
		t.Error("Normalize of a sum past int64: no error")
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var counts []Count
		id := int64(0)
		for range r.IntN(50) {
			id += 1 + r.Int64N(1000)
			counts = append(counts, Count{PathID: id, Human: r.Int64N(1 << r.IntN(63)), AI: r.Int64N(1 << r.IntN(63))})
		}
		counts = append(counts, Count{PathID: math.MaxInt64, Human: math.MaxInt64, AI: math.MaxInt64})
		got, err := Decode(nil, Encode(nil, counts))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, counts) {
			t.Fatalf("round trip of %v gave %v", counts, got)
		}
	}
	empty, err := Decode(nil, Encode(nil, nil))
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty roll decoded to %v, %v", empty, err)
	}
}

func TestDecodeRefusesDamagedRolls(t *testing.T) {
	good := Encode(nil, []Count{{PathID: 5, Human: 300, AI: 2}, {PathID: 7, AI: 1}})
	for name, roll := range map[string][]byte{
		"empty":            {},
		"newer format":     append([]byte{format + 1}, good[1:]...),
		"truncated entry":  good[:len(good)-1],
		"truncated varint": good[:3], // inside Human's two bytes
		"zero distance":    {format, 5, 1, 0, 0, 1, 0},
		"uvarint too long": append([]byte{format}, []byte(strings.Repeat("\xff", 10)+"\x01")...),
		// Two entries whose distances add up past int64.
		"ID past int64":    appendEntry(appendEntry([]byte{format}, math.MaxInt64, 1, 0), math.MaxInt64, 1, 0),
		"count past int64": appendEntry([]byte{format}, 1, math.MaxInt64+1, 0),
	} {
		if _, err := Decode(nil, roll); err == nil {
			t.Errorf("Decode of a roll with %s: no error", name)
		}
	}
}

func appendEntry(b []byte, dist, human, ai uint64) []byte {
	for _, v := range []uint64{dist, human, ai} {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		b = append(b, byte(v))
	}
	return b
}

func TestMergeAddsToAStoredRoll(t *testing.T) {
	roll, err := Merge(nil, []Count{{PathID: 2, Human: 1}, {PathID: 5, AI: 2}})
	if err != nil {
		t.Fatal(err)
	}
	roll, err = Merge(roll, []Count{{PathID: 1, AI: 7}, {PathID: 5, Human: 3, AI: 1}, {PathID: 9, Human: 4}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(nil, roll)
	if err != nil {
		t.Fatal(err)
	}
	want := []Count{{PathID: 1, AI: 7}, {PathID: 2, Human: 1}, {PathID: 5, Human: 3, AI: 3}, {PathID: 9, Human: 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("merged roll = %v, want %v", got, want)
	}
	if _, err := Merge(roll, []Count{{PathID: 9, Human: math.MaxInt64}}); err == nil {
		t.Error("Merge past int64: no error")
	}
	if _, err := Merge([]byte{format + 1}, nil); err == nil {
		t.Error("Merge into a roll of a newer format: no error")
	}
}

func FuzzDecodeNeverPanics(f *testing.F) {
	f.Add(Encode(nil, []Count{{PathID: 5, Human: 300, AI: 2}}))
	f.Add([]byte{format})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, roll []byte) {
		counts, err := Decode(nil, roll)
		if err != nil {
			return
		}
		// What decodes is in order and encodes back to the same bytes
		// unless the input used non-minimal varints.
		for i := 1; i < len(counts); i++ {
			if counts[i].PathID <= counts[i-1].PathID {
				t.Fatalf("decoded IDs out of order: %v", counts)
			}
		}
		again, err := Decode(nil, Encode(nil, counts))
		if err != nil || !slices.Equal(again, counts) {
			t.Fatalf("re-encoding %v gave %v, %v", counts, again, err)
		}
	})
}
