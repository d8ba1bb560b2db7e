// Package rollup makes the views query cost grow with the number of paths
// in the range, not with paths × hours, and keeps every part of it bounded
// by what an attacker cannot inflate at will.
//
// Ranking a 30-day range from one count per (project, path, hour) reads
// one count per path per hour, 3.6 million at 5,000 paths, which takes
// seconds. So the stores keep, per project and hour, day, week and four
// weeks, a "roll": the per-path counts of that hour, day, week or four
// weeks, packed. A range is then a few hour rolls at its ragged edges, a
// few day rolls, a few week rolls and one roll per whole four weeks
// (viewspan.go): a 30-day range reads about six rolls, a year about two
// dozen besides its edges' hours (52 week rolls before four-week rolls).
// The hour rolls are also the record itself: no row per path and hour is
// kept beside them, so a flush writes a few segments, not a row per count
// (rows cost a B-tree insertion each, which made up most of a flush's
// time).
//
// A roll is keyed by path name, in byte order, front-coded (codec.go). So
// the sum of a range's rolls (tally.go) comes out in path order, which is
// the views query's order among equal totals: ranking is by total, then by
// position in the sum, integers only. No path is ever looked up, whatever
// the number of paths that share a total; a page costs the merge of the
// range's rolls plus a selection, and only its own rows become strings.
//
// A roll is stored as a few segments (segment.go): a flush writes its counts
// as a new segment, merged only with the roll's smaller recent segments, so
// a flush costs about the size of its batch, not of the day it adds to,
// and a roll never has more than a logarithmic number of segments.
//
// Distinct paths per project and UTC day are capped (cap.go): past the cap,
// paths new to the day are counted under store.OtherPagesPath for their
// hour, so totals stay exact and a day's rolls stay bounded.
//
// The package is pure: encoding, splitting a range into hours, days and
// weeks (span.go) and four weeks (viewspan.go), grouping a batch into rolls
// (group.go), summing and ranking (tally.go), compaction (segment.go) and
// the cap's bookkeeping (cap.go). The stores own the SQL and write a
// batch's rolls, and the cap's bookkeeping, in one transaction.
package rollup

// Count is the views of one path in a roll, bots included: the hour rolls
// are the stored record of every count (no row per path and hour is kept
// beside them), and operators read bots from them. A path with no views of
// any kind is not an entry.
type Count struct {
	Path           string
	Human, AI, Bot int64
}
