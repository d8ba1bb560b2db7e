package sqlite

import (
	"context"
	"database/sql"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// AddViews adds each count to the stored counts of its (ProjectID, Path,
// Hour), all in one transaction. The batch is validated first: one bad count
// refuses the whole batch and nothing is stored.
func (s *Store) AddViews(ctx context.Context, counts []store.ViewCount) error {
	const op = "add views"
	for i, c := range counts {
		if p := c.Problem(); p != "" {
			return invalid(op, "count %d: %s", i, p)
		}
	}
	if len(counts) == 0 {
		return nil
	}
	var fresh map[rollup.PathKey]int64
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		// Prepared once for the batch: a flush holds many counts.
		stmt, err := tx.PrepareContext(ctx,
			`INSERT INTO page_views (project_id, path, hour, human, ai, bot)
			 VALUES (?, ?, ?, ?, ?, ?)
			 ON CONFLICT (project_id, path, hour) DO UPDATE SET
			     human = human + excluded.human,
			     ai    = ai    + excluded.ai,
			     bot   = bot   + excluded.bot`)
		if err != nil {
			return dbErr(op, err)
		}
		defer stmt.Close()
		for _, c := range counts {
			if c.Human == 0 && c.AI == 0 && c.Bot == 0 {
				continue // adds nothing; a row of zeros is noise
			}
			// A sum beyond int64 becomes a REAL in SQLite, which the
			// STRICT INTEGER column refuses, failing the batch instead of
			// storing a wrong count.
			if _, err := stmt.ExecContext(ctx, c.ProjectID, c.Path, c.Hour.Unix(), c.Human, c.AI, c.Bot); err != nil {
				return dbErr(op, err)
			}
		}
		if fresh, err = addToRolls(ctx, tx, counts, &s.paths); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.paths.Add(fresh) // committed: the IDs exist
	return nil
}

// QueryViews returns the totals and one page of per-path counts of a project
// over an hour range, as store.Store documents. From and To, when set, must
// be whole hours; a range with From at or after To is empty.
func (s *Store) QueryViews(ctx context.Context, q store.ViewsQuery) (store.ViewsResult, error) {
	const op = "query views"
	if p := q.Problem(); p != "" {
		return store.ViewsResult{}, invalid(op, "%s", p)
	}

	// The counts come from the rolls: the day rolls of the whole UTC days
	// in the range and the hour rolls of its ragged edges, so the cost
	// grows with the project's paths, not with paths × hours.
	span := rollup.Split(q.From, q.To)
	var res store.ViewsResult
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		// One read transaction: the totals and the page describe the same
		// data even while a flush commits.
		var tally rollup.Tally
		if err := tallyRolls(ctx, tx, q.ProjectID, span, &tally); err != nil {
			return dbErr(op, err)
		}
		rows, more, err := tally.Page(q.Offset, q.Limit, pathNames(ctx, tx))
		if err != nil {
			return dbErr(op, err)
		}
		res = store.ViewsResult{Totals: tally.Totals(), Rows: rows, HasMore: more}
		return nil
	})
	if err != nil {
		return store.ViewsResult{}, err
	}
	return res, nil
}
