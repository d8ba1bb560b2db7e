package rollup

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"
)

func TestFourWeekOfStartsOnEveryFourthMonday(t *testing.T) {
	first := time.Date(1970, 1, 5, 0, 0, 0, 0, time.UTC) // the first Monday
	for _, d := range []time.Time{
		first,
		first.Add(-time.Hour),
		time.Date(2026, 3, 15, 23, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 5, 0, 0, 0, time.UTC),
	} {
		f := time.Unix(FourWeekOf(d.Unix()), 0).UTC()
		if f.Weekday() != time.Monday || f.Hour() != 0 || f.After(d) || d.Sub(f) >= 28*24*time.Hour || f.Sub(first)%(28*24*time.Hour) != 0 {
			t.Errorf("FourWeekOf(%v) = %v, want the start of its four weeks", d, f)
		}
		// A four-week roll is exactly four week rolls.
		if w := WeekOf(d.Unix()); FourWeekOf(w) != FourWeekOf(d.Unix()) || FourWeekOf(FourWeekOf(w)) != FourWeekOf(w) {
			t.Errorf("the week of %v is not inside its four weeks", d)
		}
	}
}

func TestSplitViews(t *testing.T) {
	// 2026-03-16 is a Monday that starts four weeks (FourWeekOf).
	start := time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)
	if FourWeekOf(start.Unix()) != start.Unix() {
		t.Fatalf("%v does not start four weeks", start)
	}
	at := func(d, h int) time.Time { return start.AddDate(0, 0, d).Add(time.Duration(h) * time.Hour) }
	u := func(d, h int) int64 { return at(d, h).Unix() }
	const open, end = math.MinInt64, math.MaxInt64
	type r = [2]int64
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     ViewSpan
	}{
		{"four whole weeks", at(0, 0), at(28, 0), ViewSpan{FourWeeks: r{u(0, 0), u(28, 0)}}},
		{"27 days", at(0, 0), at(27, 0), ViewSpan{Days: []r{{u(21, 0), u(27, 0)}}, Weeks: []r{{u(0, 0), u(21, 0)}}}},
		{"four weeks, not aligned", at(7, 0), at(35, 0), ViewSpan{Weeks: []r{{u(7, 0), u(35, 0)}}}},
		{"a year, ragged", at(-10, 5), at(355, 13), ViewSpan{
			Hours:     []r{{u(-10, 5), u(-9, 0)}, {u(355, 0), u(355, 13)}},
			Days:      []r{{u(-9, 0), u(-7, 0)}, {u(350, 0), u(355, 0)}},
			Weeks:     []r{{u(-7, 0), u(0, 0)}, {u(336, 0), u(350, 0)}},
			FourWeeks: r{u(0, 0), u(336, 0)}}},
		{"inside one day", at(3, 2), at(3, 9), ViewSpan{Hours: []r{{u(3, 2), u(3, 9)}}}},
		{"empty", at(3, 2), at(3, 2), ViewSpan{}},
		{"open start", time.Time{}, at(30, 6), ViewSpan{
			Hours: []r{{u(30, 0), u(30, 6)}}, Days: []r{{u(28, 0), u(30, 0)}}, FourWeeks: r{open, u(28, 0)}}},
		{"open end", at(-1, 0), time.Time{}, ViewSpan{Days: []r{{u(-1, 0), u(0, 0)}}, FourWeeks: r{u(0, 0), end}}},
		{"open both", time.Time{}, time.Time{}, ViewSpan{FourWeeks: r{open, end}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitViews(tc.from, tc.to)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("SplitViews = %+v, want %+v", got, tc.want)
			}
			// The hours and days are Split's: only its weeks are split
			// further.
			if s := Split(tc.from, tc.to); !reflect.DeepEqual(got.Hours, s.Hours) || !reflect.DeepEqual(got.Days, s.Days) {
				t.Fatalf("SplitViews' hours and days %v %v, Split's %v %v", got.Hours, got.Days, s.Hours, s.Days)
			}
		})
	}
}

func TestSplitViewsCoversEachHourOnce(t *testing.T) {
	// Every hour of a 120-day window lands in exactly one part of the
	// view span of every range inside it, never twice, never outside; and
	// no part is left to finer rolls that a coarser one could read.
	base := time.Date(2026, 2, 27, 0, 0, 0, 0, time.UTC).Unix()
	in := func(t, lo, hi int64) bool { return lo <= t && t < hi }
	const window = 120 * 24
	for from := int64(0); from <= window; from += 29 {
		for to := from; to <= window; to += 31 {
			s := SplitViews(time.Unix(base+from*Hour, 0), time.Unix(base+to*Hour, 0))
			for h := int64(0); h < window; h++ {
				at := base + h*Hour
				n := 0
				if err := s.Ranges(func(kind Kind, r [2]int64) error {
					if in(at, r[0], r[1]) {
						n++
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				want := 0
				if from <= h && h < to {
					want = 1
				}
				if n != want {
					t.Fatalf("range [%d,%d): hour %d counted %d times, want %d (span %+v)", from, to, h, n, want, s)
				}
			}
			if len(s.Weeks) > 2 {
				t.Fatalf("range [%d,%d): %d week ranges", from, to, len(s.Weeks))
			}
			for _, r := range s.Weeks {
				if WeekOf(r[0]) != r[0] || WeekOf(r[1]) != r[1] || ceilTo(r[0], FourWeeks, weekOffset)+FourWeeks <= r[1] {
					t.Fatalf("range [%d,%d): week range %v is not whole weeks short of four whole weeks", from, to, r)
				}
			}
			if f := s.FourWeeks; f[0] < f[1] && (FourWeekOf(f[0]) != f[0] || FourWeekOf(f[1]) != f[1]) {
				t.Fatalf("range [%d,%d): four weeks %v do not start four weeks", from, to, f)
			}
		}
	}
}

func TestViewSpanRangesInOrderAndStopsAtAnError(t *testing.T) {
	s := ViewSpan{Hours: [][2]int64{{1, 2}, {19, 20}}, Days: [][2]int64{{3, 4}}, Weeks: [][2]int64{{5, 8}, {16, 18}}, FourWeeks: [2]int64{8, 16}}
	var got []string
	err := s.Ranges(func(k Kind, at [2]int64) error {
		got = append(got, fmt.Sprint(k.Column(), " ", at))
		return nil
	})
	if want := "[four_week [8 16] week [5 8] week [16 18] day [3 4] hour [1 2] hour [19 20]]"; err != nil || fmt.Sprint(got) != want {
		t.Fatalf("Ranges = %v, %v; want %s", got, err, want)
	}
	got = nil
	s.FourWeeks = [2]int64{16, 16} // empty
	stop := errors.New("stop")
	err = s.Ranges(func(k Kind, at [2]int64) error {
		got = append(got, k.Column())
		return stop
	})
	if err != stop || fmt.Sprint(got) != "[week]" {
		t.Fatalf("Ranges with empty four weeks and an error = %v, %v; want [week], stop", got, err)
	}
}
