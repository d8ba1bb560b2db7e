package server

import (
	"net/http"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// Bounds of the searches export, as the contract states them.
const (
	defaultSearchesLimit = 50
	maxSearchesLimit     = 100
)

// searchesExport: GET /v1/analytics/{projectId}/searches, most searched
// first, by cursor (see cursor.go). Searches are counted per UTC day, so
// the range is widened to whole days, as the views export widens to hours.
//
// The cursor is the place of the last row, (hits, query), and the next
// page the rows after it in the order, over the counts as they are then:
// no row is ever sent twice. A query whose count rises past the cursor
// while a client pages is not sent again, and so may be missed by that
// export; totalSearches is always the current total.
func (s *Server) searchesExport(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	qs := newExportQuery(r.URL.RawQuery)
	from, to := qs.dates()
	q := store.SearchesQuery{Limit: qs.limit(defaultSearchesLimit, maxSearchesLimit)}
	cursor, hasCursor := qs.one("cursor")
	if len(qs.details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", qs.details)
		return
	}
	q.ProjectID = c.Project.ID
	q.From, q.To = dayRange(from, to)
	scope := scope("searches", q.ProjectID, timeParam(q.From), timeParam(q.To))
	key := s.cursorKey
	if hasCursor && cursor != "" {
		pos, err := openCursor(key, scope, cursor)
		if err != nil {
			writeBadCursor(w, err)
			return
		}
		rd := &positionReader{b: pos}
		after := store.SearchKey{Hits: rd.int(), Query: rd.str()}
		if err := rd.done(); err != nil || after.Hits < 0 {
			writeBadCursor(w, errBadCursor)
			return
		}
		q.After = &after
	}
	res, err := s.cfg.Store.QuerySearches(r.Context(), q)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "exporting searches")
		return
	}
	page := wire.SearchesPage{Searches: make([]wire.Search, len(res.Rows)), TotalSearches: res.Total}
	for i, row := range res.Rows {
		page.Searches[i] = wire.Search{SearchQuery: row.Query, Hits: row.Hits, TopClickedPage: wire.NullString(row.TopClickedPage), LastSearchedAt: wire.Time(row.LastSearchedAt)}
		if row.Hits > 0 {
			page.Searches[i].CTR = float64(row.Clicks) / float64(row.Hits)
		}
	}
	if res.HasMore {
		last := res.Rows[len(res.Rows)-1]
		page.NextCursor = wire.NullString(sealCursor(key, scope, new(position).int(last.Hits).str(last.Query).b))
	}
	respond.JSON(w, http.StatusOK, page)
}
