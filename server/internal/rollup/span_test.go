package rollup

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestSplit(t *testing.T) {
	// 2026-03-10 is a Tuesday: the week of the 16th starts on a Monday.
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	at := func(d, h int) time.Time { return day.AddDate(0, 0, d).Add(time.Duration(h) * time.Hour) }
	u := func(d, h int) int64 { return at(d, h).Unix() }
	const open, end = math.MinInt64, math.MaxInt64
	type r = [2]int64
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     Span
	}{
		{"whole days", at(0, 0), at(3, 0), Span{Days: []r{{u(0, 0), u(3, 0)}}}},
		{"one whole day", at(0, 0), at(1, 0), Span{Days: []r{{u(0, 0), u(1, 0)}}}},
		{"30 days", at(0, 0), at(30, 0), Span{
			Days:  []r{{u(0, 0), u(6, 0)}, {u(27, 0), u(30, 0)}},
			Weeks: r{u(6, 0), u(27, 0)}}},
		{"one whole week", at(6, 0), at(13, 0), Span{Weeks: r{u(6, 0), u(13, 0)}}},
		{"a week and a day, not aligned", at(5, 0), at(13, 0), Span{
			Days: []r{{u(5, 0), u(6, 0)}}, Weeks: r{u(6, 0), u(13, 0)}}},
		{"seven days, not a week", at(0, 0), at(7, 0), Span{Days: []r{{u(0, 0), u(7, 0)}}}},
		{"ragged both ends", at(0, 5), at(3, 2), Span{
			Hours: [][2]int64{{u(0, 5), u(1, 0)}, {u(3, 0), u(3, 2)}},
			Days:  []r{{u(1, 0), u(3, 0)}}}},
		{"ragged around weeks", at(5, 5), at(13, 2), Span{
			Hours: [][2]int64{{u(5, 5), u(6, 0)}, {u(13, 0), u(13, 2)}},
			Weeks: r{u(6, 0), u(13, 0)}}},
		{"ragged start", at(0, 23), at(2, 0), Span{
			Hours: [][2]int64{{u(0, 23), u(1, 0)}}, Days: []r{{u(1, 0), u(2, 0)}}}},
		{"ragged end", at(0, 0), at(1, 1), Span{
			Hours: [][2]int64{{u(1, 0), u(1, 1)}}, Days: []r{{u(0, 0), u(1, 0)}}}},
		{"inside one day", at(0, 3), at(0, 9), Span{Hours: [][2]int64{{u(0, 3), u(0, 9)}}}},
		{"across midnight, no whole day", at(0, 20), at(1, 4), Span{Hours: [][2]int64{{u(0, 20), u(1, 4)}}}},
		{"23 hours", at(0, 1), at(1, 0), Span{Hours: [][2]int64{{u(0, 1), u(1, 0)}}}},
		{"one hour", at(0, 7), at(0, 8), Span{Hours: [][2]int64{{u(0, 7), u(0, 8)}}}},
		{"empty", at(0, 7), at(0, 7), Span{}},
		{"reversed", at(2, 0), at(1, 0), Span{}},
		{"open start", time.Time{}, at(8, 6), Span{
			Hours: [][2]int64{{u(8, 0), u(8, 6)}}, Days: []r{{u(6, 0), u(8, 0)}}, Weeks: r{open, u(6, 0)}}},
		{"open end", at(1, 6), time.Time{}, Span{
			Hours: [][2]int64{{u(1, 6), u(2, 0)}}, Days: []r{{u(2, 0), u(6, 0)}}, Weeks: r{u(6, 0), end}}},
		{"open both", time.Time{}, time.Time{}, Span{Weeks: r{open, end}}},
		{"in another zone", at(0, 5).In(time.FixedZone("X", 5*3600+1800)), at(3, 2), Span{
			Hours: [][2]int64{{u(0, 5), u(1, 0)}, {u(3, 0), u(3, 2)}}, Days: []r{{u(1, 0), u(3, 0)}}}},
		{"before 1970", time.Date(1969, 12, 30, 22, 0, 0, 0, time.UTC), time.Date(1970, 1, 1, 3, 0, 0, 0, time.UTC), Span{
			Hours: [][2]int64{{-26 * Hour, -Day}, {0, 3 * Hour}}, Days: []r{{-Day, 0}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.from, tc.to)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Split = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSplitCoversEachHourOnce(t *testing.T) {
	// Every hour of a 24-day window lands in exactly one part of the span
	// of every range inside the window: in its weeks, in one of its day
	// ranges or in one of its hour ranges, never twice, never outside.
	base := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC).Unix()
	in := func(t, lo, hi int64) bool { return lo <= t && t < hi }
	const window = 24 * 24
	for from := int64(0); from <= window; from += 5 {
		for to := from; to <= window; to += 3 {
			s := Split(time.Unix(base+from*Hour, 0), time.Unix(base+to*Hour, 0))
			parts := slices.Concat(s.Days, s.Hours)
			for h := int64(0); h < window; h++ {
				at := base + h*Hour
				n := 0
				if in(at, s.Weeks[0], s.Weeks[1]) {
					n++
				}
				for _, r := range parts {
					if in(at, r[0], r[1]) {
						n++
					}
				}
				want := 0
				if from <= h && h < to {
					want = 1
				}
				if n != want {
					t.Fatalf("range [%d,%d): hour %d counted %d times, want %d (span %+v)", from, to, h, n, want, s)
				}
			}
			for _, r := range s.Hours {
				if ceilTo(r[0], Day, 0)+Day <= r[1] {
					t.Fatalf("range [%d,%d): hour range %v holds a whole UTC day", from, to, r)
				}
			}
			for _, r := range s.Days {
				if ceilTo(r[0], Week, weekOffset)+Week <= r[1] {
					t.Fatalf("range [%d,%d): day range %v holds a whole week", from, to, r)
				}
			}
		}
	}
}

func TestRoundingSaturatesAndKeepsWeeksOnMondays(t *testing.T) {
	if got := ceilTo(math.MaxInt64-5, Day, 0); got != math.MaxInt64 {
		t.Fatalf("ceilTo near the end = %d, want MaxInt64", got)
	}
	if got := DayOf(5*Day + 7*Hour); got != 5*Day {
		t.Fatalf("DayOf = %d, want %d", got, 5*Day)
	}
	for _, d := range []time.Time{
		time.Date(2026, 3, 15, 23, 0, 0, 0, time.UTC), // a Sunday
		time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC),  // a Monday
		time.Date(1969, 12, 31, 5, 0, 0, 0, time.UTC),
	} {
		w := time.Unix(WeekOf(d.Unix()), 0).UTC()
		if w.Weekday() != time.Monday || w.Hour() != 0 || w.After(d) || d.Sub(w) >= 7*24*time.Hour {
			t.Errorf("WeekOf(%v) = %v, want the Monday before", d, w)
		}
	}
}

func TestSpanRangesInOrderAndStopsAtAnError(t *testing.T) {
	s := Span{Hours: [][2]int64{{1, 2}, {9, 10}}, Days: [][2]int64{{3, 4}}, Weeks: [2]int64{5, 8}}
	var got []string
	err := s.Ranges(func(k Kind, at [2]int64) error {
		got = append(got, fmt.Sprint(k.Column(), " ", at))
		return nil
	})
	if want := "[week [5 8] day [3 4] hour [1 2] hour [9 10]]"; err != nil || fmt.Sprint(got) != want {
		t.Fatalf("Ranges = %v, %v; want %s", got, err, want)
	}
	got = nil
	s.Weeks = [2]int64{8, 8} // empty
	stop := errors.New("stop")
	err = s.Ranges(func(k Kind, at [2]int64) error {
		got = append(got, k.Column())
		return stop
	})
	if err != stop || fmt.Sprint(got) != "[day]" {
		t.Fatalf("Ranges with empty weeks and an error = %v, %v; want [day], stop", got, err)
	}
}
