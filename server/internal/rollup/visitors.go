package rollup

import (
	"cmp"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/store"
)

// Visitor rolls are the views' rolls for unique visitors: per project and
// hour, day and week (the same Kind, Split and keys), a roll holds, per
// path in byte order, the HyperLogLog sketches of its human and AI
// visitors, and the project's two sketches besides, since the project's
// visitors are not the sum of its paths'. A roll is stored as segments
// that Absorb keeps logarithmic in number, weighed by their bytes (a
// popular path's sketch is a thousand times a rare one's); the hour rolls
// are the record. A query merges its range's segments path by path, in
// byte order, straight from their bytes (visitors_tally.go).
//
// The union of the human and AI visitors (the total) is not stored: the
// union of HyperLogLog sketches is exactly their register-wise maximum, so
// merging the two at query time gives the same sketch a stored one would,
// for none of its bytes.

// VisitorTable names the SQL table of k's visitor segments, the same in
// every store's schema; its time column is k.Column().
func (k Kind) VisitorTable() string {
	return [...]string{"visitor_hour_rolls", "visitor_day_rolls", "visitor_week_rolls"}[k]
}

// VisitorRoll is what a batch adds to one visitors roll: the roll of
// ProjectID that starts at At (Unix seconds), as one encoded segment.
type VisitorRoll struct {
	ProjectID string
	At        int64
	Segment   []byte
}

// GroupVisitors turns a batch of visitor counts, validated and with the
// cap applied, into the segment it adds to each roll of each kind (indexed
// by Kind), each kind sorted by (ProjectID, At) so that stores take rolls
// in one order. Counts whose sketches hold no visitor add nothing.
func GroupVisitors(counts []store.VisitorCount) (rolls [kinds][]VisitorRoll, err error) {
	type key struct {
		project string
		at      int64
	}
	var by [kinds]map[key][]store.VisitorCount
	for k := range by {
		by[k] = make(map[key][]store.VisitorCount)
	}
	for _, c := range counts {
		if len(c.Human) == 0 && len(c.AI) == 0 {
			continue
		}
		for k := range Kind(kinds) {
			at := k.Of(c.Hour.Unix())
			by[k][key{c.ProjectID, at}] = append(by[k][key{c.ProjectID, at}], c)
		}
	}
	acc := getVisitorMerge()
	defer putVisitorMerge(acc)
	for k := range rolls {
		for key, cs := range by[k] {
			slices.SortStableFunc(cs, func(a, b store.VisitorCount) int { return strings.Compare(a.Path, b.Path) })
			acc.reset()
			for _, c := range cs {
				if err := acc.addSorted(c.Path, c.Human, c.AI); err != nil {
					return rolls, err
				}
			}
			seg, n := acc.encode(nil)
			if n == 0 {
				continue
			}
			rolls[k] = append(rolls[k], VisitorRoll{ProjectID: key.project, At: key.at, Segment: seg})
		}
		slices.SortFunc(rolls[k], func(a, b VisitorRoll) int {
			return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.At, b.At))
		})
	}
	return rolls, nil
}

// AppendVisitors decides how r's segment joins the roll's stored segments
// segs (in Seq order, each Segment.Entries being its size in bytes): as a
// new segment, merged with the last ones Absorb picks, which read returns
// (those from a Seq on, in Seq order). Appended.Entries is the new
// segment's size.
func AppendVisitors(r VisitorRoll, segs []Segment, read func(from int64) ([][]byte, error)) (Appended, error) {
	a := Appended{Seq: 1, Entries: len(r.Segment), Segment: r.Segment}
	if len(segs) > 0 {
		a.Seq = segs[len(segs)-1].Seq + 1
	}
	k := Absorb(segs, len(r.Segment))
	if k == 0 {
		return a, nil
	}
	a.Replaces = segs[len(segs)-k].Seq
	old, err := read(a.Replaces)
	if err != nil {
		return Appended{}, err
	}
	acc := getVisitorMerge()
	defer putVisitorMerge(acc)
	size := len(r.Segment)
	for _, s := range append(old, r.Segment) {
		if err := acc.addSegment(s); err != nil {
			return Appended{}, err
		}
		size += len(s)
	}
	a.Segment, _ = acc.encode(make([]byte, 0, size))
	a.Entries = len(a.Segment)
	return a, nil
}
