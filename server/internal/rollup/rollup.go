// Package rollup makes the views query cost grow with the number of paths
// in the range, not with paths × hours, and keeps every part of it bounded
// by what an attacker cannot inflate at will.
//
// The stores keep every (project, path, hour) count as a row: the truth, and
// what a rebuild starts from. Ranking a 30-day range from those rows reads
// one row per path per hour, 3.6 million at 5,000 paths, which takes seconds.
// So the stores also keep, per project and hour, day and week, a "roll": the
// per-path counts of that hour, day or week, packed. A range is then a few
// hour rolls at its ragged edges, a few day rolls, and one roll per whole
// week: a 30-day range reads about six rolls.
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
// weeks (span.go), grouping a batch into rolls (group.go), summing and ranking
// (tally.go), compaction (segment.go) and the cap's bookkeeping (cap.go).
// The stores own the SQL and keep the rolls in the same transaction as the
// rows.
package rollup

// Count is the views of one path in a roll. Rolls hold only human and AI
// views: bots are never exported, and a path with neither is not a row.
type Count struct {
	Path      string
	Human, AI int64
}
