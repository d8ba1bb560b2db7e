package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// progressEvery is how often the progress line is redrawn: often enough to
// show life, rarely enough not to slow a fast export down.
const progressEvery = 200 * time.Millisecond

func viewsExportCommand() *command {
	return &command{
		name:    "views export",
		summary: "export page views as JSON lines or CSV",
		help: `Exports the project's page views per path, human and AI traffic apart, every
page of results, ordered by total then path: JSON lines (one
{"path","human","ai","total"} a line) or CSV with the header
path,human,ai,total.

--from and --to take a date (midnight UTC) or an ISO 8601 time such as
2026-10-01T12:00Z or 2026-10-01T14:00:00+02:00 (no zone means UTC); --to is
exclusive. Without them the range is open on that side.

With --output, the rows go to a temporary file that replaces FILE only once
the export is complete, so a failure never leaves a partial file. The totals
go to stderr at the end, and a progress line while exporting when stderr is
a terminal.` + clientHelp,
		examples: `docsapi views export --from 2026-10-01 --to 2026-11-01 --format csv --output october.csv
docsapi views export --project handbook | jq -s 'map(.ai) | add'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			from := fs.String("from", "", "first `DATE` (or time) included, such as 2026-10-01")
			to := fs.String("to", "", "`DATE` (or time) the range ends before, such as 2026-11-01")
			format := fs.String("format", "jsonl", "output `FORMAT`: jsonl or csv")
			output := fs.String("output", "", "write to `FILE` (replaced only when the export is complete) instead of stdout")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				var params docsapi.ViewsParams
				var err error
				if params.DateFrom, params.DateTo, err = dateFlags(*from, *to); err != nil {
					return err
				}
				if *format != "jsonl" && *format != "csv" {
					return usagef("unknown format %q: use jsonl or csv", *format)
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				return exportViews(ctx, s, c, params, *format, *output)
			}
		},
	}
}

func exportViews(ctx context.Context, s *stdio, c *apiClient, params docsapi.ViewsParams, format, output string) error {
	var dst io.Writer = s.stdout
	var file *atomicFile
	if output != "" && output != "-" {
		var err error
		if file, err = createAtomic(output); err != nil {
			return err
		}
		defer file.abort()
		dst = file.f
	}
	bw := bufio.NewWriterSize(dst, 64<<10)
	rows := newRowWriter(bw, format)
	prog := &progress{w: s.stderr, on: isTerminal(s.stderr)}

	var n int
	var totals docsapi.ViewCounts
	for view, err := range c.Analytics.AllViews(ctx, "", params) {
		if err != nil {
			prog.clear()
			return c.explain(err)
		}
		if err := rows.write(view); err != nil {
			prog.clear()
			return err
		}
		n++
		totals.Human += view.Human
		totals.AI += view.AI
		totals.Total += view.Total
		prog.update(n)
	}
	prog.clear()
	if err := rows.flush(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	where := ""
	if file != nil {
		if err := file.commit(); err != nil {
			return err
		}
		where = " to " + output
	}
	fmt.Fprintf(s.stderr, "exported %d paths%s: human %d, ai %d, total %d\n", n, where, totals.Human, totals.AI, totals.Total)
	return nil
}

// rowWriter writes page views in one format.
type rowWriter struct {
	csv  *csv.Writer
	json *json.Encoder
	rec  []string
}

func newRowWriter(w io.Writer, format string) *rowWriter {
	if format == "csv" {
		cw := csv.NewWriter(w)
		// The header is written even for an empty export, so that a
		// consumer always sees the columns.
		_ = cw.Write([]string{"path", "human", "ai", "total"})
		return &rowWriter{csv: cw, rec: make([]string, 4)}
	}
	return &rowWriter{json: json.NewEncoder(w)}
}

func (r *rowWriter) write(v docsapi.PageView) error {
	if r.json != nil {
		// A row in the API's shape, as the export sends it.
		return r.json.Encode(wire.PageView{Path: v.Path, Human: v.Human, AI: v.AI, Total: v.Total})
	}
	r.rec[0] = v.Path
	r.rec[1] = strconv.FormatInt(v.Human, 10)
	r.rec[2] = strconv.FormatInt(v.AI, 10)
	r.rec[3] = strconv.FormatInt(v.Total, 10)
	return r.csv.Write(r.rec)
}

func (r *rowWriter) flush() error {
	if r.csv != nil {
		r.csv.Flush()
		return r.csv.Error()
	}
	return nil
}

// progress draws "N paths so far" on one terminal line.
type progress struct {
	w     io.Writer
	on    bool
	last  time.Time
	drawn bool
}

func (p *progress) update(n int) {
	if !p.on || time.Since(p.last) < progressEvery {
		return
	}
	p.last = time.Now()
	p.drawn = true
	fmt.Fprintf(p.w, "\r%d paths so far", n)
}

func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K") // back to the line's start, erase it
		p.drawn = false
	}
}

// isTerminal reports whether w is a terminal (a character device), using only
// the standard library.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// atomicFile is written under a temporary name in the target's folder and
// renamed over the target only when complete: readers never see a partial
// export, and a failed one leaves the old file as it was.
type atomicFile struct {
	f    *os.File
	path string
	done bool
}

func createAtomic(path string) (*atomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("creating the output file: %w", err)
	}
	return &atomicFile{f: f, path: path}, nil
}

func (a *atomicFile) commit() error {
	// Keep the mode of a file being replaced; a new one is readable like
	// any file a program writes (CreateTemp would leave it 0600).
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(a.path); err == nil {
		mode = fi.Mode().Perm()
	}
	err := a.f.Chmod(mode)
	if err == nil {
		err = a.f.Sync()
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.f.Name())
		a.done = true
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	a.done = true
	return nil
}

// abort removes the temporary file unless commit ran.
func (a *atomicFile) abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close()
	os.Remove(a.f.Name())
}
