package main

import (
	"context"
	"flag"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

func visitorsExportCommand() *command {
	return &command{
		name:    "visitors export",
		summary: "export unique visitors per path as JSON lines or CSV",
		help: `Exports the project's unique visitors per path, human and AI traffic apart,
every page of results, ordered by total then path: JSON lines (one
{"path","human","ai","total"} a line) or CSV with the header
path,human,ai,total.

Each count is approximate, and total counts a visitor seen as both human and
AI once, so it can be less than human + ai. A visitor of several paths
counts on each: the rows do not add up to the range's visitors, so the
closing line gives no totals. Visitors are counted per UTC day: a
self-hosted server widens the range to whole days.` + exportHelp + clientHelp,
		examples: `docsapi visitors export --from 2026-10-01 --to 2026-11-01 --format csv --output october-visitors.csv
docsapi visitors export --project handbook | jq -r 'select(.ai > .human) | .path'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var f exportFlags
			f.register(fs)
			return exportRun(&f, func(ctx context.Context, c *apiClient, from, to docsapi.DateBound) export[docsapi.PageVisitors] {
				return exportVisitors(ctx, c, docsapi.VisitorsParams{DateFrom: from, DateTo: to})
			})
		},
	}
}

func exportVisitors(ctx context.Context, c *apiClient, params docsapi.VisitorsParams) export[docsapi.PageVisitors] {
	return export[docsapi.PageVisitors]{
		rows:   c.Analytics.AllVisitors(ctx, "", params),
		noun:   "paths",
		header: []string{"path", "human", "ai", "total"},
		record: func(v docsapi.PageVisitors, rec []string) {
			rec[0], rec[1], rec[2], rec[3] = v.Path, itoa(v.Human), itoa(v.AI), itoa(v.Total)
		},
		// A row in the API's shape, as the export sends it.
		line: func(v docsapi.PageVisitors) any {
			return wire.PageVisitors{Path: v.Path, Human: v.Human, AI: v.AI, Total: v.Total}
		},
	}
}
