package rollup

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// Series adds up the segments of a project's hour or day rolls into one
// point per roll: the views over time. A point needs its roll's sums
// alone, never the paths ranked, so a segment is summed as it is read
// (sumSegment) and nothing is merged: 90 day rolls of 5,000 paths cost a
// pass over their bytes.
type Series struct {
	from, step int64 // Unix seconds
	path       string
	points     []views
}

// NewSeries returns an empty series of the rolls of q's interval over q's
// range, of q.Path alone if set. q must be valid (store.SeriesQuery's
// Validate).
func NewSeries(q store.SeriesQuery) *Series {
	return &Series{
		from:   q.From.Unix(),
		step:   int64(q.Interval / time.Second),
		path:   q.Path,
		points: make([]views, q.Points()),
	}
}

// Kind returns the kind of roll the series reads.
func (s *Series) Kind() Kind {
	if s.step == Day {
		return Daily
	}
	return Hourly
}

// Range returns the starts of the rolls the series reads, [from, to).
func (s *Series) Range() [2]int64 {
	return [2]int64{s.from, s.from + s.step*int64(len(s.points))}
}

// Add adds a segment of the roll that starts at at. A roll outside the
// range, or not on a point's start, is an error: the store read the wrong
// rows.
func (s *Series) Add(at int64, seg []byte) error {
	i := (at - s.from) / s.step
	if at < s.from || (at-s.from)%s.step != 0 || i >= int64(len(s.points)) {
		return fmt.Errorf("rollup: a roll at %d is not one of the series' (%d, every %d s, %d points)", at, s.from, s.step, len(s.points))
	}
	v, err := sumSegment(seg, s.path)
	if err != nil {
		return err
	}
	s.points[i], err = addViews(s.points[i], v)
	return err
}

// Points returns the series, one point per roll, in time order.
func (s *Series) Points() []store.SeriesPoint {
	out := make([]store.SeriesPoint, len(s.points))
	for i, v := range s.points {
		out[i] = store.SeriesPoint{At: time.Unix(s.from+int64(i)*s.step, 0).UTC(), Human: v.human, AI: v.ai, Bot: v.bot}
	}
	return out
}

// sumSegment returns the views of path in seg, or of every path in it if
// path is "". It reads the whole segment and refuses it if damaged, as
// merger.addSegment does, but keeps only the one path it rebuilds at a
// time. A series reads hundreds of thousands of entries, so this loop is
// its cost: the numbers of one and two bytes, nearly all of a segment's,
// are read inline.
func sumSegment(seg []byte, path string) (views, error) {
	entries, names, b, err := header(seg)
	if err != nil {
		return views{}, err
	}
	damaged := func(what string, at int) (views, error) {
		return views{}, fmt.Errorf("rollup: damaged segment: %s at entry %d", what, at)
	}
	// Each count is at most MaxInt64, so a sum that has not passed it
	// takes one more without wrapping; past it, the sum sticks there.
	var sum [3]uint64
	cur := make([]byte, 0, 256) // the entry's path, rebuilt from the one before
	n, pathBytes := 0, 0
	var v [5]uint64 // shared prefix, rest of the path; human, AI, bot
	for p := 0; p < len(b); n++ {
		for i := range v {
			if i == 2 {
				// The path's rest lies between the two numbers and the
				// three counts.
				shared, rest := v[0], v[1]
				switch {
				case shared > uint64(len(cur)):
					return damaged("shared prefix longer than the previous path", n)
				case rest == 0 || rest > uint64(len(b)-p):
					return damaged("bad path length", n)
				case shared < uint64(len(cur)) && b[p] <= cur[shared]:
					return damaged("paths out of order", n)
				}
				l := int(shared + rest)
				if l > cap(cur) {
					cur = append(cur[:shared], make([]byte, l-int(shared))...)
				}
				cur = cur[:l]
				// A sorted path's rest is a few bytes: a loop beats
				// memmove's call.
				for j, c := range b[p : p+int(rest)] {
					cur[int(shared)+j] = c
				}
				p += int(rest)
				pathBytes += l
			}
			switch {
			case p < len(b) && b[p] < 0x80:
				v[i] = uint64(b[p])
				p++
			case p+1 < len(b) && b[p+1] < 0x80:
				v[i] = uint64(b[p]&0x7f) | uint64(b[p+1])<<7
				p += 2
			default:
				x, k := binary.Uvarint(b[p:])
				if k <= 0 || (i >= 2 && x > math.MaxInt64) {
					return damaged("bad number", n)
				}
				v[i] = x
				p += k
			}
		}
		if v[2]|v[3]|v[4] == 0 {
			return damaged("no views", n)
		}
		if path == "" || string(cur) == path {
			sum[0], sum[1], sum[2] = min(sum[0]+v[2], math.MaxInt64+1), min(sum[1]+v[3], math.MaxInt64+1), min(sum[2]+v[4], math.MaxInt64+1)
		}
	}
	if n != entries || pathBytes != names {
		return damaged("header does not match the entries", n)
	}
	if sum[0] > math.MaxInt64 || sum[1] > math.MaxInt64 || sum[2] > math.MaxInt64 {
		return views{}, errOverflow
	}
	return views{int64(sum[0]), int64(sum[1]), int64(sum[2])}, nil
}
