// Command export-views-csv writes the page views of a date range to a CSV
// file, one row per page, human and AI traffic apart.
//
// It shows Analytics.AllViews, the iterator that requests page after page
// (250 rows each) as the loop consumes them, and Analytics.Views for the
// totals. The file is written under a temporary name and renamed at the end,
// so that a failed export never leaves a partial file (nor replaces a good
// one from an earlier run).
//
// Run it against the hosted service, or a self-hosted server with
// DOCSAPI_BASE_URL:
//
//	export DOCSAPI_KEY=mint_...                         # an admin key
//	export DOCSAPI_PROJECT=handbook                     # the project whose views to export
//	export DOCSAPI_BASE_URL=http://localhost:8080/api   # optional: a self-hosted server
//	go run ./examples/export-views-csv [-from 2026-01-01] [-to 2026-02-01] [-o views.csv]
//
// For a self-hosted server on this machine, run from the repository root
//
//	go run ./server/examples/embed-server   # serves the API above and prints a key
//
// and browse its sample site to record views, or see
// server/examples/quickstart, which runs the whole product once, offline, in
// one command.
//
// Dates are YYYY-MM-DD, in UTC. -to is exclusive: the export ends at the
// start of that day. By default it is tomorrow, so that the export covers
// the last 30 days up to now, today included; -from defaults to 30 days
// before -to. The file starts with the header path,human,ai,total; its rows
// are in the server's order (most viewed first). It prints, for example:
//
//	wrote 600 rows to views.csv (2026-01-01 up to 2026-02-01, exclusive)
//	totals: 15230 views, 12004 human, 3226 AI
//
// The totals come from the server in one request; views recorded while the
// export runs may make them differ slightly from the sum of the rows.
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

type config struct {
	key, baseURL, project string // from the environment
	from, to              string // YYYY-MM-DD, or "" for the defaults
	out                   string // the CSV file
}

func main() {
	from := flag.String("from", "", "first day (YYYY-MM-DD, UTC); default 30 days before -to")
	to := flag.String("to", "", "day after the last (YYYY-MM-DD, UTC, exclusive); default tomorrow")
	out := flag.String("o", "views.csv", "the CSV file to write")
	flag.Parse()
	cfg := config{
		key:     os.Getenv("DOCSAPI_KEY"),
		baseURL: os.Getenv("DOCSAPI_BASE_URL"),
		project: os.Getenv("DOCSAPI_PROJECT"),
		from:    *from,
		to:      *to,
		out:     *out,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "export-views-csv:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	from, to, err := dateRange(cfg.from, cfg.to, time.Now())
	if err != nil {
		return err
	}
	client, err := newClient(cfg)
	if err != nil {
		return err
	}
	params := docsapi.ViewsParams{DateFrom: from, DateTo: to}

	// The totals first: one small request, which also finds a wrong key or
	// project before any file is made.
	one := params
	one.Limit = 1
	page, err := client.Analytics.Views(ctx, "", one)
	if err != nil {
		return explain(err, cfg.project)
	}

	rows, err := writeCSV(ctx, client, params, cfg.out)
	if err != nil {
		return explain(err, cfg.project)
	}
	fmt.Fprintf(stdout, "wrote %d rows to %s (%s up to %s, exclusive)\n", rows, cfg.out, from, to)
	t := page.Totals
	fmt.Fprintf(stdout, "totals: %d views, %d human, %d AI\n", t.Total, t.Human, t.AI)
	return nil
}

// writeCSV writes every row of the export to a temporary file next to path,
// then renames it to path. On an error the temporary file is removed, and a
// file already at path is left as it was.
func writeCSV(ctx context.Context, client *docsapi.Client, params docsapi.ViewsParams, path string) (rows int, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()

	w := csv.NewWriter(f)
	w.Write([]string{"path", "human", "ai", "total"})
	for view, err := range client.Analytics.AllViews(ctx, "", params) {
		if err != nil {
			return rows, fmt.Errorf("after %d rows: %w", rows, err)
		}
		w.Write([]string{view.Path, itoa(view.Human), itoa(view.AI), itoa(view.Total)})
		rows++
	}
	w.Flush() // a csv.Writer keeps its first error: checked once here
	if err := w.Error(); err != nil {
		return rows, err
	}
	// CreateTemp makes the file readable by its owner only; an export is
	// an ordinary file.
	if err := f.Chmod(0o644); err != nil {
		return rows, err
	}
	if err := f.Sync(); err != nil {
		return rows, err
	}
	if err := f.Close(); err != nil {
		return rows, err
	}
	return rows, os.Rename(f.Name(), path)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// dateRange reads -from and -to. By default the range is the last 30 days
// (UTC), today included: it ends at the start of tomorrow.
func dateRange(from, to string, now time.Time) (docsapi.DateBound, docsapi.DateBound, error) {
	y, m, d := now.UTC().Date()
	end := docsapi.Day(y, m, d+1) // Day normalises March 32 to April 1
	if to != "" {
		t, err := time.Parse(time.DateOnly, to)
		if err != nil {
			return end, end, fmt.Errorf("-to %q is not a date as YYYY-MM-DD", to)
		}
		end = docsapi.Day(t.Date())
	}
	start := docsapi.Day(end.Time().AddDate(0, 0, -30).Date())
	if from != "" {
		t, err := time.Parse(time.DateOnly, from)
		if err != nil {
			return start, end, fmt.Errorf("-from %q is not a date as YYYY-MM-DD", from)
		}
		start = docsapi.Day(t.Date())
	}
	if !start.Time().Before(end.Time()) {
		return start, end, fmt.Errorf("-from %s is not before -to %s (-to is exclusive)", start, end)
	}
	return start, end, nil
}

// newClient builds the client from the environment's values. The SDK never
// reads the environment itself.
func newClient(cfg config) (*docsapi.Client, error) {
	if cfg.key == "" {
		return nil, errors.New("DOCSAPI_KEY is not set: export an admin API key (mint_...)")
	}
	if cfg.project == "" {
		return nil, errors.New("DOCSAPI_PROJECT is not set: export the ID of the project")
	}
	opts := []docsapi.Option{
		docsapi.WithProjectID(cfg.project),
		docsapi.WithUserAgent("export-views-csv-example"),
	}
	if cfg.baseURL != "" {
		opts = append(opts, docsapi.WithBaseURL(cfg.baseURL))
	}
	return docsapi.NewClient(cfg.key, opts...)
}

// explain turns an error into a message that says what to do. The original
// error stays wrapped.
func explain(err error, project string) error {
	var apiErr *docsapi.APIError
	switch {
	case errors.Is(err, docsapi.ErrRateLimited):
		// The hosted service allows 100 analytics requests an hour; an
		// export of N rows takes N/250 of them, rounded up, plus one.
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			return fmt.Errorf("rate limited: try again in %s: %w", apiErr.RetryAfter, err)
		}
		return fmt.Errorf("rate limited: try again later: %w", err)
	case errors.Is(err, docsapi.ErrUnauthorized):
		return fmt.Errorf("the key was refused (invalid, revoked or expired): %w", err)
	case errors.Is(err, docsapi.ErrForbidden):
		return fmt.Errorf("the key may not read project %q: %w", project, err)
	case errors.Is(err, docsapi.ErrNotFound):
		return fmt.Errorf("no project %q: %w", project, err)
	}
	return err
}
