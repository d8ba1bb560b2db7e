package rollup

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func TestSumSegmentAddsUpEveryPathOrOne(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		counts := randomCounts(r, r.IntN(60))
		// Sums of random counts may pass int64; halve them so they fit.
		for i := range counts {
			counts[i].Human, counts[i].AI, counts[i].Bot = counts[i].Human/64+1, counts[i].AI/64, counts[i].Bot/64
		}
		seg := Encode(nil, counts)
		var all views
		for _, c := range counts {
			all.human, all.ai, all.bot = all.human+c.Human, all.ai+c.AI, all.bot+c.Bot
			got, err := sumSegment(seg, c.Path)
			if err != nil || got != (views{c.Human, c.AI, c.Bot}) {
				t.Fatalf("sumSegment(%q) = %+v, %v; want %+v", c.Path, got, err, c)
			}
		}
		if got, err := sumSegment(seg, ""); err != nil || got != all {
			t.Fatalf("sumSegment of every path = %+v, %v; want %+v", got, err, all)
		}
		if got, err := sumSegment(seg, "/no such path"); err != nil || got != (views{}) {
			t.Fatalf("sumSegment of a missing path = %+v, %v; want nothing", got, err)
		}
	}
}

func TestSumSegmentRefusesDamagedSegments(t *testing.T) {
	for name, seg := range damagedSegments() {
		if _, err := sumSegment(seg, ""); err == nil {
			t.Errorf("sumSegment of a segment with %s: no error", name)
		}
		if _, err := sumSegment(seg, "/ab"); err == nil {
			t.Errorf("sumSegment of /ab in a segment with %s: no error", name)
		}
	}
	past := Encode(nil, []Count{{Path: "/a", Human: math.MaxInt64}, {Path: "/b", Human: 1}})
	if _, err := sumSegment(past, ""); err == nil {
		t.Error("sumSegment of a sum past int64: no error")
	}
}

func TestSeriesPutsEachRollInItsPoint(t *testing.T) {
	from := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	q := store.SeriesQuery{ProjectID: "p", From: from, To: from.Add(3 * 24 * time.Hour), Interval: 24 * time.Hour, Path: "/a"}
	s := NewSeries(q)
	if s.Kind() != Daily || s.Range() != [2]int64{from.Unix(), from.Unix() + 3*Day} {
		t.Fatalf("a daily series reads %v rolls over %v", s.Kind(), s.Range())
	}
	for _, add := range []struct {
		at     int64
		counts []Count
	}{
		{from.Unix(), []Count{{Path: "/a", Human: 1, Bot: 2}, {Path: "/b", Human: 50}}},
		{from.Unix(), []Count{{Path: "/a", AI: 3}}}, // a second segment of the same roll
		{from.Unix() + 2*Day, []Count{{Path: "/a", Human: 4}}},
	} {
		if err := s.Add(add.at, Encode(nil, add.counts)); err != nil {
			t.Fatal(err)
		}
	}
	want := []store.SeriesPoint{
		{At: from, Human: 1, AI: 3, Bot: 2},
		{At: from.Add(24 * time.Hour)},
		{At: from.Add(48 * time.Hour), Human: 4},
	}
	if got := s.Points(); !slices.Equal(got, want) {
		t.Fatalf("Points = %v, want %v", got, want)
	}
	for _, at := range []int64{from.Unix() - Day, from.Unix() + Hour, from.Unix() + 3*Day} {
		if err := s.Add(at, Encode(nil, []Count{{Path: "/a", Human: 1}})); err == nil {
			t.Errorf("a roll at %d, not one of the series': no error", at)
		}
	}
	if err := s.Add(from.Unix(), Encode(nil, []Count{{Path: "/a", Human: math.MaxInt64}})); err == nil {
		t.Error("a point past int64: no error")
	}
	hourly := NewSeries(store.SeriesQuery{ProjectID: "p", From: from, To: from.Add(2 * time.Hour), Interval: time.Hour})
	if hourly.Kind() != Hourly || hourly.Range() != [2]int64{from.Unix(), from.Unix() + 2*Hour} {
		t.Fatalf("an hourly series reads %v rolls over %v", hourly.Kind(), hourly.Range())
	}
}

// BenchmarkSumSegment sums a day roll of 5,000 paths: a 90-day series
// of such a project sums 90 of them.
func BenchmarkSumSegment(b *testing.B) {
	var counts []Count
	for i := range 5000 {
		counts = append(counts, Count{Path: fmt.Sprintf("/docs/section-%03d/page-%05d", i%97, i), Human: int64(i%300 + 1), AI: int64(i % 50), Bot: int64(i % 3)})
	}
	counts, err := Normalize(counts)
	if err != nil {
		b.Fatal(err)
	}
	seg := Encode(nil, counts)
	b.SetBytes(int64(len(seg)))
	for b.Loop() {
		if _, err := sumSegment(seg, ""); err != nil {
			b.Fatal(err)
		}
	}
}
