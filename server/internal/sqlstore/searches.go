package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// SearchTx is the statements of the search methods.
type SearchTx interface {
	// LockSearchDay reads the counts of the project's UTC day and locks
	// them, creating them at zero if missing, so that concurrent writers
	// of one day queue and the caps hold across processes.
	LockSearchDay(ctx context.Context, projectID string, day time.Time) (store.SearchDayCounts, error)
	// HeldSearches reports which of queries, and of pairs of query and
	// opened result, the project's day holds.
	HeldSearches(ctx context.Context, projectID string, day time.Time, queries []string, pairs [][2]string) (map[string]bool, map[[2]string]bool, error)
	// AddSearchTally adds t to the day, locked by LockSearchDay: each
	// query's and pair's counts (added to, never overwritten, LastAt the
	// later of the two), the day's counts and its folds.
	AddSearchTally(ctx context.Context, projectID string, day time.Time, t store.SearchTally) error
	// QuerySearches reads at most q.Limit queries in QuerySearches' order,
	// each with its TopClickedPage, and the range's total, from one
	// consistent state.
	QuerySearches(ctx context.Context, q store.SearchesQuery) (store.SearchesResult, error)
}

// AddSearches counts a batch of searches, as store.SearchStore documents:
// the days the batch touches are locked in (project, day) order, so that
// concurrent batches queue rather than deadlock, and each day's caps are
// applied by store.TallySearches on what the day holds.
func (s *Store) AddSearches(ctx context.Context, b store.SearchBatch) (store.SearchFolds, error) {
	type dayKey struct {
		project string
		day     time.Time
	}
	days := map[dayKey][]store.Search{}
	for _, sr := range b.Searches {
		k := dayKey{sr.ProjectID, store.SearchDay(sr.At)}
		days[k] = append(days[k], sr)
	}
	keys := make([]dayKey, 0, len(days))
	for k := range days {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b dayKey) int {
		return cmp.Or(strings.Compare(a.project, b.project), a.day.Compare(b.day))
	})
	return write(ctx, s, "add searches", b.Validate(), func(tx Tx) (store.SearchFolds, error) {
		var folds store.SearchFolds
		for _, k := range keys {
			counts, err := tx.LockSearchDay(ctx, k.project, k.day)
			if err != nil {
				return store.SearchFolds{}, err
			}
			queries, pairs := store.SearchKeys(days[k])
			heldQueries, heldPairs, err := tx.HeldSearches(ctx, k.project, k.day, queries, pairs)
			if err != nil {
				return store.SearchFolds{}, err
			}
			t := store.TallySearches(days[k], counts, heldQueries, heldPairs, b.DailyQueryCap)
			if err := tx.AddSearchTally(ctx, k.project, k.day, t); err != nil {
				return store.SearchFolds{}, err
			}
			folds.Add(t.Folds)
		}
		return folds, nil
	})
}

// QuerySearches returns one page of a project's queries, as
// store.SearchStore documents: one more row than the page is read, to know
// whether another follows.
func (s *Store) QuerySearches(ctx context.Context, q store.SearchesQuery) (store.SearchesResult, error) {
	if err := q.Validate(); err != nil {
		return store.SearchesResult{}, s.db.Fail("query searches", err)
	}
	return read(ctx, s, "query searches", func(tx Tx) (store.SearchesResult, error) {
		more := q
		more.Limit++
		res, err := tx.QuerySearches(ctx, more)
		res.Rows, res.HasMore = pageOf(res.Rows, q.Limit)
		return res, err
	})
}
