// Package rollup is how the stores keep page views and unique visitors so
// that no query or flush does work an attacker can grow at will: anyone
// can make a docs site count made-up paths, and a read key can ask for
// any range and any page.
//
// # Rolls
//
// Views are kept per project, path and hour. A query of a month would read
// one count per path and hour, millions at a few thousand paths, so the
// stores keep, per project and hour, UTC day and week (Monday to Monday),
// a roll: the per-path counts of that hour, day or week, packed. A range
// is split (span.go) into the hours at its ragged edges, the whole days
// around its whole weeks, and the weeks: a month reads about six rolls.
// The hour rolls are the record itself: no row per path and hour is kept
// beside them.
//
// # Segments keyed by path
//
// A roll's entries are keyed by the path itself, in byte order,
// front-coded (codec.go). So the sum of a range's rolls (tally.go) comes
// out in path order, which is the queries' order among equal totals:
// ranking is by total, then by position in the sum, among integers. No
// path is looked up, however many share a total; only a page's own rows
// become strings.
//
// A roll is stored as a few segments (segment.go): a flush writes its
// counts as a new segment, merged only with the roll's smaller recent
// ones, so a flush costs about its batch, not the day it adds to, and a
// roll has at most a logarithmic number of segments.
//
// # The cap on paths per day
//
// Distinct paths per project and UTC day are capped (cap.go): past the
// cap, paths new to the day are counted under store.OtherPagesPath for
// their hour, so totals stay exact, and a day's rolls, and so any query,
// hold at most the cap's paths for each day they cover.
//
// # Visitors
//
// A visitor is counted by a hash salted with its own UTC day's salt, so no
// visitor is in two days and a range's visitors are the sum of its days'.
// A day's visitors are plain numbers per path, human, AI and total, kept
// in the same format as the views (an entry's three numbers being those):
// one segment per day, and week rolls of the days that are closed
// (visitors.go). Only the days still open, whose salts the store keeps,
// also have HyperLogLog sketches, from which each flush makes their
// numbers anew. A visitors query so reads numbers only, ranked as the
// views are, over whole UTC days.
//
// The package is pure: encoding, splitting ranges, grouping a batch into
// rolls (group.go), summing and ranking (tally.go), compaction, the cap's
// bookkeeping and a day's visitor numbers. The stores own the SQL and
// write what a batch changes in one transaction.
package rollup

// Count is one path's entry in a roll. In a views roll the numbers are the
// path's human, AI and bot views (the hour rolls being the record of every
// count, bots included); in a visitors roll, its human, AI and total
// visitors (Bot then holds the total: the visitors of either class, each
// once). An entry has a number above zero.
type Count struct {
	Path           string
	Human, AI, Bot int64
}
