package main

import (
	"context"
	"flag"
	"fmt"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

func viewsExportCommand() *command {
	return &command{
		name:    "views export",
		summary: "export page views as JSON lines or CSV",
		help: `Exports the project's page views per path, human and AI traffic apart, every
page of results, ordered by total then path: JSON lines (one
{"path","human","ai","total"} a line) or CSV with the header
path,human,ai,total.` + exportHelp + clientHelp,
		examples: `docsapi views export --from 2026-10-01 --to 2026-11-01 --format csv --output october.csv
docsapi views export --project handbook | jq -s 'map(.ai) | add'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var f exportFlags
			f.register(fs)
			return exportRun(&f, func(ctx context.Context, c *apiClient, from, to docsapi.DateBound) export[docsapi.PageView] {
				return exportViews(ctx, c, docsapi.ViewsParams{DateFrom: from, DateTo: to})
			})
		},
	}
}

// exportViews is the views export: its totals are the rows' sums, which
// for views are the range's.
func exportViews(ctx context.Context, c *apiClient, params docsapi.ViewsParams) export[docsapi.PageView] {
	var totals docsapi.ViewCounts
	return export[docsapi.PageView]{
		rows:   c.Analytics.AllViews(ctx, "", params),
		noun:   "paths",
		header: []string{"path", "human", "ai", "total"},
		record: func(v docsapi.PageView, rec []string) {
			rec[0], rec[1], rec[2], rec[3] = v.Path, itoa(v.Human), itoa(v.AI), itoa(v.Total)
		},
		// A row in the API's shape, as the export sends it.
		line: func(v docsapi.PageView) any {
			return wire.PageView{Path: v.Path, Human: v.Human, AI: v.AI, Total: v.Total}
		},
		tally: func(v docsapi.PageView) {
			totals.Human += v.Human
			totals.AI += v.AI
			totals.Total += v.Total
		},
		totals: func() string {
			return fmt.Sprintf(": human %d, ai %d, total %d", totals.Human, totals.AI, totals.Total)
		},
	}
}
