package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

func viewsSeriesCommand() *command {
	return &command{
		name:    "views series",
		summary: "print page views per hour or day (self-hosted servers)",
		help: `Prints the project's views per day (or hour, with --interval hour), one point
per interval, those without views included: human, AI, their total, and the
bots, which the exports leave out. A table, JSON lines with --format json, or
CSV with the header at,human,ai,total,bots.

--from and --to take a date (midnight UTC) or an ISO 8601 time; --to is
exclusive; both widen to whole hours or days. Without --to the range ends with
the current hour or day; without --from it starts 30 days (24 hours) before.
A server answers at most 1,000 points at a time. --path counts one page.

Only self-hosted servers have the series: the hosted service does not.` + clientHelp,
		examples: `docsapi views series
docsapi views series --interval hour --from 2026-10-01 --to 2026-10-02 --path /quickstart
docsapi views series --from 2026-01-01 --format csv > views-by-day.csv`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			interval := fs.String("interval", "day", "`INTERVAL` of a point: hour or day (UTC)")
			from := fs.String("from", "", "first `DATE` (or time) counted, such as 2026-10-01")
			to := fs.String("to", "", "`DATE` (or time) the range ends before, such as 2026-11-01")
			path := fs.String("path", "", "count only this page `PATH`, such as /quickstart")
			format := fs.String("format", "table", "output `FORMAT`: table, json (one point a line) or csv")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				params := docsapi.ViewsSeriesParams{Interval: docsapi.SeriesInterval(*interval), Path: *path}
				if params.Interval != docsapi.SeriesHour && params.Interval != docsapi.SeriesDay {
					return usagef("unknown --interval %q: use hour or day", *interval)
				}
				if *format != "table" && *format != "json" && *format != "csv" {
					return usagef("unknown format %q: use table, json or csv", *format)
				}
				var err error
				if params.DateFrom, params.DateTo, err = dateFlags(*from, *to); err != nil {
					return err
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				series, err := c.Analytics.ViewsSeries(ctx, "", params)
				if err != nil {
					return c.explain(err)
				}
				return printSeries(s, series, *format)
			}
		},
	}
}

// printSeries writes the points of series in format.
func printSeries(s *stdio, series *docsapi.ViewsSeries, format string) error {
	layout := time.DateOnly
	if series.Interval == docsapi.SeriesHour {
		layout = time.RFC3339
	}
	switch format {
	case "json":
		enc := json.NewEncoder(s.stdout)
		for _, p := range series.Points {
			if err := enc.Encode(seriesPointJSON{At: p.At.UTC(), Human: p.Human, AI: p.AI, Total: p.Total, Bots: p.Bots}); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		w := csv.NewWriter(s.stdout)
		_ = w.Write([]string{"at", "human", "ai", "total", "bots"})
		for _, p := range series.Points {
			_ = w.Write([]string{p.At.UTC().Format(layout), itoa(p.Human), itoa(p.AI), itoa(p.Total), itoa(p.Bots)})
		}
		w.Flush()
		return w.Error()
	}
	tw := tabwriter.NewWriter(s.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tHUMAN\tAI\tTOTAL\tBOTS")
	for _, p := range series.Points {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", p.At.UTC().Format(layout), p.Human, p.AI, p.Total, p.Bots)
	}
	return tw.Flush()
}

// seriesPointJSON is a point as views series --format json prints it.
type seriesPointJSON struct {
	At    time.Time `json:"at"`
	Human int64     `json:"human"`
	AI    int64     `json:"ai"`
	Total int64     `json:"total"`
	Bots  int64     `json:"bots"`
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
