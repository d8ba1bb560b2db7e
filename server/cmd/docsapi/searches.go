package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

func searchesExportCommand() *command {
	return &command{
		name:    "searches export",
		summary: "export what readers searched for as JSON lines or CSV",
		help: `Exports the searches made on the project's documentation site, one row per
distinct query, most searched first, every page of results: JSON lines (one
{"searchQuery","hits","ctr","topClickedPage","lastSearchedAt"} a line, as the
API sends them) or CSV with the header
query,hits,ctr,top_clicked_page,last_searched_at.

hits is how many times the query was searched; ctr the share of those
searches, 0 to 1, after which a result was opened; top_clicked_page the
result opened most often, empty (null in JSON) when none was, which marks a
gap in the docs; last_searched_at an RFC 3339 time in UTC. A self-hosted
server counts searches per UTC day and widens the range to whole days.` + exportHelp + clientHelp,
		examples: `docsapi searches export --from 2026-10-01 --format csv --output searches.csv
docsapi searches export | jq -r 'select(.topClickedPage == null) | .searchQuery'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var f exportFlags
			f.register(fs)
			return exportRun(&f, func(ctx context.Context, c *apiClient, from, to docsapi.DateBound) export[docsapi.Search] {
				return exportSearches(ctx, c, docsapi.SearchesParams{DateFrom: from, DateTo: to})
			})
		},
	}
}

// searchJSON is a search as searches export writes it: in the API's shape
// (the Search schema), lastSearchedAt nullable since the hosted service may
// send null.
type searchJSON struct {
	SearchQuery    string  `json:"searchQuery"`
	Hits           int64   `json:"hits"`
	CTR            float64 `json:"ctr"`
	TopClickedPage *string `json:"topClickedPage"`
	LastSearchedAt *string `json:"lastSearchedAt"`
}

// exportSearches is the searches export: the rows' hits add up to the
// range's searches, which the closing line gives.
func exportSearches(ctx context.Context, c *apiClient, params docsapi.SearchesParams) export[docsapi.Search] {
	var searches int64
	return export[docsapi.Search]{
		rows:   c.Analytics.AllSearches(ctx, "", params),
		noun:   "queries",
		header: []string{"query", "hits", "ctr", "top_clicked_page", "last_searched_at"},
		record: func(q docsapi.Search, rec []string) {
			rec[0], rec[1], rec[2], rec[3], rec[4] = q.Query, itoa(q.Hits), strconv.FormatFloat(q.CTR, 'f', -1, 64),
				q.TopClickedPage, csvTime(q.LastSearchedAt)
		},
		line: func(q docsapi.Search) any {
			return searchJSON{SearchQuery: q.Query, Hits: q.Hits, CTR: q.CTR,
				TopClickedPage: wire.NullString(q.TopClickedPage), LastSearchedAt: wire.NullTime(q.LastSearchedAt)}
		},
		tally:  func(q docsapi.Search) { searches += q.Hits },
		totals: func() string { return fmt.Sprintf(": %d searches", searches) },
	}
}

// csvTime is an instant in a CSV cell: RFC 3339 in UTC with its fraction,
// as the API writes it, or empty when unknown.
func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return wire.Time(t)
}
