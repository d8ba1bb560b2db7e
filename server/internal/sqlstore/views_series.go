package sqlstore

import (
	"context"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// ViewSeries returns a project's views per hour or day, as store.Store
// documents, from the hour or day rolls of the range: one roll per point,
// each summed as it is read, never merged or ranked.
func (v *Views) ViewSeries(ctx context.Context, q store.SeriesQuery) ([]store.SeriesPoint, error) {
	const op = "view series"
	if err := q.Validate(); err != nil {
		return nil, v.db.Fail(op, err)
	}
	series := rollup.NewSeries(q)
	if err := v.db.ReadRolls(ctx, op, q.ProjectID, series.Kind(), series.Range(), series.Add); err != nil {
		return nil, err
	}
	return series.Points(), nil
}
