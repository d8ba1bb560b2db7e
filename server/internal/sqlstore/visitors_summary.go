package sqlstore

import (
	"context"
	"sync"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// Closed days are summarized (see rollup.SummarizeVisitorDay) by the
// flushes themselves: once AddVisitors has stored a batch of day D, the
// days before D-1 have lost their salts, so their visitors are final, and
// the batch's process summarizes those of its projects' days that no
// summary describes yet. It does so once a day per project and process,
// after the batch is committed and outside its transaction: a summary
// only speeds queries up (one that is missing or stale is not read), so
// failing to make one must neither refuse the batch nor hold the write
// lock that other flushes wait on. A day it could not summarize is tried
// again the next day; a damaged one is reported by the queries that read
// its sketches.

// summariesPerCall bounds the days one AddVisitors summarizes, so that the
// first flush after an upgrade does not summarize a year of days before it
// returns; the rest follow on the next flushes, latest first.
const summariesPerCall = 8

// summaryMarks remembers, per project, the day before which this process
// has summarized every day (Unix seconds): what spares the next flushes of
// the day the question. It holds one entry per project written to.
type summaryMarks struct {
	mu     sync.Mutex
	before map[string]int64
}

// due reports whether project's days before before may need summaries.
func (s *summaryMarks) due(project string, before int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.before[project] < before
}

// done records that project's days before before are summarized.
func (s *summaryMarks) done(project string, before int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.before == nil {
		s.before = map[string]int64{}
	}
	s.before[project] = max(s.before[project], before)
}

// summarizeClosedDays summarizes, for each project of batch, the days
// that the batch's latest day closed (see above).
func (v *Visitors) summarizeClosedDays(ctx context.Context, batch []store.VisitorCount) {
	latest := map[string]int64{}
	for _, c := range batch {
		latest[c.ProjectID] = max(latest[c.ProjectID], c.Hour.Unix())
	}
	for project, hour := range latest {
		before := rollup.DayOf(hour) - rollup.Day
		if !v.sums.due(project, before) {
			continue
		}
		if v.summarizeDays(ctx, project, before) {
			v.sums.done(project, before)
		}
	}
}

// summarizeDays summarizes up to summariesPerCall of project's days before
// before that need it, and reports whether it is done with them for today:
// none is left, or one could not be summarized (the database failed, or a
// segment is damaged), which tomorrow's first flush tries again rather
// than every flush of today. A canceled flush is not done.
func (v *Visitors) summarizeDays(ctx context.Context, project string, before int64) bool {
	const op = "summarize visitors"
	days, err := v.db.UnsummarizedVisitorDays(ctx, op, project, before, summariesPerCall)
	if err != nil {
		return ctx.Err() == nil
	}
	failed := false
	for _, day := range days {
		if err := v.db.SummarizeVisitorDay(ctx, op, project, day, rollup.SummarizeVisitorDay); err != nil {
			if ctx.Err() != nil {
				return false
			}
			failed = true
		}
	}
	if err := v.summarizeWeeks(ctx, project, before); err != nil {
		if ctx.Err() != nil {
			return false
		}
		failed = true
	}
	return failed || len(days) < summariesPerCall
}

// weeksPerCall bounds the weeks one AddVisitors sums, and weeksLookBack
// how far back it looks for weeks to sum: a week is summed once its days
// are, the day after it ends, so only the recent ones need looking at.
const (
	weeksPerCall  = 2
	weeksLookBack = 4 * rollup.Week
)

// summarizeWeeks sums the day summaries of project's recent weeks that end
// by before into week summaries, where every day has a summary describing
// it and no week summary describes the week yet: a month then reads four
// week summaries rather than 28 day summaries.
func (v *Visitors) summarizeWeeks(ctx context.Context, project string, before int64) error {
	const op = "summarize visitor weeks"
	from := rollup.WeekOf(before) - weeksLookBack
	var todo []int64
	err := v.db.ReadVisitors(ctx, op, func(r VisitorsReader) error {
		days, err := r.VisitorDays(project, from, before)
		if err != nil {
			return err
		}
		weeks, err := r.VisitorWeeks(project, from, before)
		if err != nil {
			return err
		}
		todo = rollup.WeeksToSum(days, weeks, from, before)
		return nil
	})
	if err != nil {
		return err
	}
	for _, w := range todo[:min(len(todo), weeksPerCall)] {
		if err := v.db.SummarizeVisitorWeek(ctx, op, project, w, rollup.SumVisitorWeek); err != nil {
			return err
		}
	}
	return nil
}
