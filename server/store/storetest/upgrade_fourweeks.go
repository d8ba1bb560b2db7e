package storetest

import (
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// FourWeekUpgrade is the data of each SQL backend's test of the migration
// that builds four-week rolls from the week rolls (version 10 to 11): what
// the test writes as version 10 did, what it asks after the upgrade, and a
// flush after it. Each backend writes with its own SQL and checks against
// its own reference.
type FourWeekUpgrade struct {
	// Batches are 100 days of two projects, each batch written as one
	// segment (seq: its index plus one) of every hour, day and week roll
	// it falls in, some rolls so holding several segments.
	Batches [][]store.ViewCount
	// Queries are answered after the upgrade, and again after Late.
	Queries []store.ViewsQuery
	// Late is a flush after the upgrade, which adds to the four-week rolls.
	Late []store.ViewCount
}

// NewFourWeekUpgrade returns the test's data.
func NewFourWeekUpgrade() FourWeekUpgrade {
	start := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	var u FourWeekUpgrade
	for b := range 3 {
		var batch []store.ViewCount
		for d := range 100 {
			for i := range 6 {
				batch = append(batch, store.ViewCount{ProjectID: "docs", Path: fmt.Sprintf("/p%d", (i*7+d+b)%9),
					Hour: start.Add(time.Duration(d*24+(i*5+b)%24) * time.Hour), Human: int64(1 + (i+d)%4), AI: int64(b % 2), Bot: 1})
			}
			batch = append(batch, store.ViewCount{ProjectID: "other", Path: "/x", Hour: start.Add(time.Duration(d*24) * time.Hour), Human: 3})
		}
		u.Batches = append(u.Batches, batch)
	}
	u.Queries = []store.ViewsQuery{
		{ProjectID: "docs", Limit: 4},
		{ProjectID: "docs", From: start.Add(5 * time.Hour), To: start.Add(99*24*time.Hour + 7*time.Hour), Limit: 3, Offset: 2},
		{ProjectID: "docs", From: start.Add(30 * 24 * time.Hour), Limit: 9},
		{ProjectID: "other", To: start.Add(70*24*time.Hour + 1*time.Hour), Limit: 5},
	}
	u.Late = []store.ViewCount{
		{ProjectID: "docs", Path: "/p1", Hour: start.Add(40*24*time.Hour + 3*time.Hour), Human: 50},
		{ProjectID: "docs", Path: "/new", Hour: start.Add(60 * 24 * time.Hour), AI: 7},
	}
	return u
}

// Counts returns the counts of every batch.
func (u FourWeekUpgrade) Counts() []store.ViewCount {
	var counts []store.ViewCount
	for _, b := range u.Batches {
		counts = append(counts, b...)
	}
	return counts
}

// FourWeekRolls returns how many four-week rolls the upgrade must build:
// one for each project and four weeks that the batches' counts fall in.
func (u FourWeekUpgrade) FourWeekRolls() int {
	fours := map[[2]any]bool{}
	for _, c := range u.Counts() {
		fours[[2]any{c.ProjectID, rollup.FourWeekOf(c.Hour.Unix())}] = true
	}
	return len(fours)
}

// WriteAsVersion10 calls write with each segment version 10 stored for
// the batches: every hour, day and week roll of each batch, the batch's
// index plus one its seq.
func (u FourWeekUpgrade) WriteAsVersion10(write func(kind rollup.Kind, r rollup.Roll, seq int, segment []byte) error) error {
	for b, batch := range u.Batches {
		rolls, err := rollup.Group(batch)
		if err != nil {
			return err
		}
		for kind := range rollup.FourWeekly {
			for _, r := range rolls[kind] {
				if err := write(kind, r, b+1, rollup.Encode(nil, r.Counts)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
