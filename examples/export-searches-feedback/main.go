// Command export-searches-feedback writes what readers searched for and the
// feedback they left over a date range to two CSV files, searches.csv and
// feedback.csv.
//
// It shows the cursor iterators Analytics.AllSearches (which follows
// nextCursor until it is null) and Analytics.AllFeedback (which follows it
// while hasMore is true), the one FeedbackEntry type for every source, and
// feedback filters. Both files are written under temporary names and renamed
// only once both exports are complete, so that a failed run never leaves a
// partial file, nor replaces the files of an earlier run.
//
// Run it against the hosted service (the searches and feedback exports are
// hosted-only for now):
//
//	export DOCSAPI_KEY=mint_...        # an admin key
//	export DOCSAPI_PROJECT=handbook    # the project to export
//	export DOCSAPI_BASE_URL=https://...  # optional: another server with these exports
//	go run ./examples/export-searches-feedback [-from 2026-01-01] [-to 2026-02-01] \
//		[-status pending,in_progress] [-source contextual] [-dir .]
//
// Dates are YYYY-MM-DD, in UTC; -to is exclusive and defaults to tomorrow,
// -from to 30 days before -to. -status keeps the feedback in those statuses
// (comma-separated, sent as they are), -source the feedback of one source.
// The hosted service allows 100 analytics requests per organisation per
// hour; the export takes one request per 100 searches and one per 100
// feedback entries. It prints, for example:
//
//	wrote 231 searches to searches.csv (2026-01-01 up to 2026-02-01, exclusive)
//	wrote 57 feedback entries to feedback.csv
//
// searches.csv has the columns query,hits,ctr,top_clicked_page,
// last_searched_at, most searched first; top_clicked_page is empty when no
// result was opened. feedback.csv has id,created_at,path,source,status,
// comment,helpful,contact,code,filename,lang: the columns of a source other
// than the entry's stay empty, and so does a comment the server sent as null
// (helpful is yes or no where the server sent the reader's vote, and empty
// where it sent none).
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
	"strings"
	"syscall"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

type config struct {
	key, baseURL, project string // from the environment
	from, to              string // YYYY-MM-DD, or "" for the defaults
	statuses, source      string // the feedback filters, or ""
	dir                   string // where the two files go
}

func main() {
	from := flag.String("from", "", "first day (YYYY-MM-DD, UTC); default 30 days before -to")
	to := flag.String("to", "", "day after the last (YYYY-MM-DD, UTC, exclusive); default tomorrow")
	statuses := flag.String("status", "", "feedback statuses to keep, comma-separated (pending,in_progress,resolved,dismissed); default all")
	source := flag.String("source", "", "feedback source to keep (contextual, code_snippet, agent, thumbs_only); default all")
	dir := flag.String("dir", ".", "the folder for searches.csv and feedback.csv")
	flag.Parse()
	cfg := config{
		key:      os.Getenv("DOCSAPI_KEY"),
		baseURL:  os.Getenv("DOCSAPI_BASE_URL"),
		project:  os.Getenv("DOCSAPI_PROJECT"),
		from:     *from,
		to:       *to,
		statuses: *statuses,
		source:   *source,
		dir:      *dir,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "export-searches-feedback:", err)
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
	searches := docsapi.SearchesParams{DateFrom: from, DateTo: to}
	feedback := docsapi.FeedbackParams{DateFrom: from, DateTo: to, Source: docsapi.FeedbackSource(cfg.source)}
	if feedback.Status, err = parseStatuses(cfg.statuses); err != nil {
		return err
	}

	searchesFile, err := newTempCSV(cfg.dir, "searches.csv")
	if err != nil {
		return err
	}
	defer searchesFile.discard()
	feedbackFile, err := newTempCSV(cfg.dir, "feedback.csv")
	if err != nil {
		return err
	}
	defer feedbackFile.discard()

	nSearches, err := writeSearches(ctx, client, searches, searchesFile.w)
	if err != nil {
		return explain(fmt.Errorf("searches, after %d rows: %w", nSearches, err), cfg.project)
	}
	nFeedback, err := writeFeedback(ctx, client, feedback, feedbackFile.w)
	if err != nil {
		return explain(fmt.Errorf("feedback, after %d rows: %w", nFeedback, err), cfg.project)
	}
	// Both exports are complete: only now do the files take their names.
	for _, f := range []*tempCSV{searchesFile, feedbackFile} {
		if err := f.commit(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "wrote %d searches to %s (%s up to %s, exclusive)\n", nSearches, searchesFile.path, from, to)
	fmt.Fprintf(stdout, "wrote %d feedback entries to %s\n", nFeedback, feedbackFile.path)
	return nil
}

func writeSearches(ctx context.Context, client *docsapi.Client, params docsapi.SearchesParams, w *csv.Writer) (rows int, err error) {
	w.Write([]string{"query", "hits", "ctr", "top_clicked_page", "last_searched_at"})
	for s, err := range client.Analytics.AllSearches(ctx, "", params) {
		if err != nil {
			return rows, err
		}
		w.Write([]string{s.Query, itoa(s.Hits), strconv.FormatFloat(s.CTR, 'f', -1, 64), s.TopClickedPage, timestamp(s.LastSearchedAt)})
		rows++
	}
	return rows, nil
}

func writeFeedback(ctx context.Context, client *docsapi.Client, params docsapi.FeedbackParams, w *csv.Writer) (rows int, err error) {
	w.Write([]string{"id", "created_at", "path", "source", "status", "comment", "helpful", "contact", "code", "filename", "lang"})
	for e, err := range client.Analytics.AllFeedback(ctx, "", params) {
		if err != nil {
			return rows, err
		}
		var comment, helpful string
		if e.Comment != nil {
			comment = *e.Comment
		}
		if e.Helpful != docsapi.VoteUnknown {
			helpful = e.Helpful.String()
		}
		w.Write([]string{e.ID, timestamp(e.CreatedAt), e.Path, string(e.Source), string(e.Status),
			comment, helpful, e.Contact, e.Code, e.Filename, e.Lang})
		rows++
	}
	return rows, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// timestamp writes an instant as RFC 3339, or "" for one the server did not
// know.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// tempCSV is a CSV file written under a temporary name beside path, renamed
// to path by commit and removed by discard if it was not.
type tempCSV struct {
	path string
	f    *os.File
	w    *csv.Writer
	done bool
}

func newTempCSV(dir, name string) (*tempCSV, error) {
	path := filepath.Join(dir, name)
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return nil, err
	}
	return &tempCSV{path: path, f: f, w: csv.NewWriter(f)}, nil
}

func (t *tempCSV) commit() error {
	t.w.Flush() // a csv.Writer keeps its first error: checked once here
	if err := t.w.Error(); err != nil {
		return err
	}
	// CreateTemp makes the file readable by its owner only; an export is
	// an ordinary file.
	if err := t.f.Chmod(0o644); err != nil {
		return err
	}
	if err := t.f.Sync(); err != nil {
		return err
	}
	if err := t.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(t.f.Name(), t.path); err != nil {
		return err
	}
	t.done = true
	return nil
}

func (t *tempCSV) discard() {
	if !t.done {
		t.f.Close()
		os.Remove(t.f.Name())
	}
}

// dateRange reads -from and -to. By default the range is the last 30 days
// (UTC), today included: it ends at the start of tomorrow.
func dateRange(from, to string, now time.Time) (docsapi.DateBound, docsapi.DateBound, error) {
	y, m, d := now.UTC().Date()
	end := docsapi.Day(y, m, d+1)
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

// parseStatuses reads -status. Statuses the SDK does not know are passed
// on: the service may have added them.
func parseStatuses(list string) ([]docsapi.FeedbackStatus, error) {
	if list == "" {
		return nil, nil
	}
	var statuses []docsapi.FeedbackStatus
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("-status %q has an empty entry", list)
		}
		statuses = append(statuses, docsapi.FeedbackStatus(s))
	}
	return statuses, nil
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
		docsapi.WithUserAgent("export-searches-feedback-example"),
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
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			return fmt.Errorf("rate limited: try again in %s: %w", apiErr.RetryAfter, err)
		}
		return fmt.Errorf("rate limited (100 analytics requests an hour): try again later: %w", err)
	case errors.Is(err, docsapi.ErrUnauthorized):
		return fmt.Errorf("the key was refused (invalid, revoked or expired): %w", err)
	case errors.Is(err, docsapi.ErrForbidden):
		return fmt.Errorf("the key may not read project %q: %w", project, err)
	case errors.Is(err, docsapi.ErrNotFound):
		return fmt.Errorf("no project %q: %w", project, err)
	case errors.Is(err, docsapi.ErrInvalidParam):
		return fmt.Errorf("refused before sending: %w", err)
	}
	return err
}
