// Package rollup makes the views query cost grow with the number of paths a
// project has, not with paths × hours.
//
// The stores keep every (project, path, hour) count as a row: the truth, and
// what a rebuild starts from. Ranking a 30-day range from those rows reads
// one row per path per hour, 3.6 million at 5,000 paths, which takes seconds.
// So the stores also keep, per project and hour and per project and day, one
// packed vector of the per-path counts of that hour or day (a "roll"). A
// range is then a few hour rolls at its ragged edges plus one roll per whole
// day: a 30-day range reads 30 values, not millions of rows.
//
// Paths inside a roll are numbers (IDs the store assigns once per project
// and path, and never reuses), so a roll stays a few bytes per path, and
// names are looked up only for the rows a page needs.
//
// The package is pure: encoding (codec.go), splitting a range into hours and
// days (span.go), and summing and ranking rolls (tally.go). The stores own
// the SQL and keep the rolls in the same transaction as the rows.
package rollup

// Count is the views of one path in a roll. Rolls hold only human and AI
// views: bots are never exported, and a path with neither is not a row.
type Count struct {
	PathID    int64
	Human, AI int64
}

// total is the number the views query orders by.
func (c Count) total() int64 { return c.Human + c.AI }
