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
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// This file holds what the export commands (views, visitors, searches and
// feedback export) share: their flags, and one pipeline from the SDK's
// iterator to CSV or JSON lines, on stdout or in a file replaced only once
// complete, with a progress line on a terminal.

// progressEvery is how often the progress line is redrawn: often enough to
// show life, rarely enough not to slow a fast export down.
const progressEvery = 200 * time.Millisecond

// exportHelp ends the help of every export command, before clientHelp.
const exportHelp = `

--from and --to take a date (midnight UTC) or an ISO 8601 time such as
2026-10-01T12:00Z or 2026-10-01T14:00:00+02:00 (no zone means UTC); --to is
exclusive. Without them the range is open on that side.

In CSV, a cell that starts with =, +, -, @, a tab or a carriage return gets a
' in front, so that a spreadsheet shows it as text instead of running it as
a formula; JSON lines keep every value exactly.

With --output, the rows go to a temporary file that replaces FILE only once
the export is complete, so a failure never leaves a partial file. The totals
go to stderr at the end, and a progress line while exporting when stderr is
a terminal.`

// exportFlags are the flags every export command has besides the client's.
type exportFlags struct {
	client           clientFlags
	from, to, format string
	output           string
}

func (f *exportFlags) register(fs *flag.FlagSet) {
	f.client.register(fs)
	fs.StringVar(&f.from, "from", "", "first `DATE` (or time) included, such as 2026-10-01")
	fs.StringVar(&f.to, "to", "", "`DATE` (or time) the range ends before, such as 2026-11-01")
	fs.StringVar(&f.format, "format", "jsonl", "output `FORMAT`: jsonl or csv")
	fs.StringVar(&f.output, "output", "", "write to `FILE` (replaced only when the export is complete) instead of stdout")
}

// check reads the date range and checks the format: the mistakes a user
// is told of before any request.
func (f *exportFlags) check(args []string) (from, to docsapi.DateBound, err error) {
	if err := wantArgs(args); err != nil {
		return from, to, err
	}
	if from, to, err = dateFlags(f.from, f.to); err != nil {
		return from, to, err
	}
	if f.format != "jsonl" && f.format != "csv" {
		return from, to, usagef("unknown format %q: use jsonl or csv", f.format)
	}
	return from, to, nil
}

// exportRun is the run of an export command with the flags f: it checks
// them, makes the client, and writes the export that start makes of the
// range.
func exportRun[T any](f *exportFlags, start func(ctx context.Context, c *apiClient, from, to docsapi.DateBound) export[T]) runFunc {
	return func(ctx context.Context, s *stdio, args []string) error {
		from, to, err := f.check(args)
		if err != nil {
			return err
		}
		c, err := f.client.client(s)
		if err != nil {
			return err
		}
		return start(ctx, c, from, to).run(ctx, s, c, f.format, f.output)
	}
}

// export is one run of an export command: the rows, how each is written,
// and what the closing line says.
type export[T any] struct {
	rows iter.Seq2[T, error]
	// noun is what a row is, in the plural, for the progress and closing
	// lines: "paths".
	noun string
	// header is the CSV header; record fills a CSV record of as many cells.
	header []string
	record func(row T, rec []string)
	// line is the row as a JSON line.
	line func(row T) any
	// tally, if set, sees every row written; totals, if set, ends the
	// closing line, such as ": human 7, ai 4, total 11".
	tally  func(row T)
	totals func() string
}

// run writes the rows in format to output (stdout when "" or "-"), then
// the closing line to stderr.
func (e export[T]) run(ctx context.Context, s *stdio, c *apiClient, format, output string) error {
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
	rows := newRowWriter(bw, format, e)
	prog := &progress{w: s.stderr, on: isTerminal(s.stderr), noun: e.noun}

	var n int
	for row, err := range e.rows {
		if err != nil {
			prog.clear()
			return c.explain(err)
		}
		if err := rows.write(row); err != nil {
			prog.clear()
			return err
		}
		n++
		if e.tally != nil {
			e.tally(row)
		}
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
	totals := ""
	if e.totals != nil {
		totals = e.totals()
	}
	fmt.Fprintf(s.stderr, "exported %d %s%s%s\n", n, e.noun, where, totals)
	return nil
}

// rowWriter writes the rows of an export in one format.
type rowWriter[T any] struct {
	csv    *csv.Writer
	json   *json.Encoder
	rec    []string
	record func(T, []string)
	line   func(T) any
}

func newRowWriter[T any](w io.Writer, format string, e export[T]) *rowWriter[T] {
	if format == "csv" {
		cw := csv.NewWriter(w)
		// The header is written even for an empty export, so that a
		// consumer always sees the columns.
		_ = cw.Write(e.header)
		return &rowWriter[T]{csv: cw, rec: make([]string, len(e.header)), record: e.record}
	}
	return &rowWriter[T]{json: json.NewEncoder(w), line: e.line}
}

func (r *rowWriter[T]) write(row T) error {
	if r.json != nil {
		return r.json.Encode(r.line(row))
	}
	clear(r.rec)
	r.record(row, r.rec)
	for i, cell := range r.rec {
		r.rec[i] = spreadsheetSafe(cell)
	}
	return r.csv.Write(r.rec)
}

func (r *rowWriter[T]) flush() error {
	if r.csv != nil {
		r.csv.Flush()
		return r.csv.Error()
	}
	return nil
}

// spreadsheetSafe puts a ' before a cell that a spreadsheet would run as a
// formula (OWASP's advice against CSV injection): search queries, comments
// and paths come from a site's readers, and an export is opened by its
// operator. Values the commands write themselves (counts, times) never
// start with these characters.
func spreadsheetSafe(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

// progress draws "N paths so far" on one terminal line.
type progress struct {
	w     io.Writer
	on    bool
	noun  string
	last  time.Time
	drawn bool
}

func (p *progress) update(n int) {
	if !p.on || time.Since(p.last) < progressEvery {
		return
	}
	p.last = time.Now()
	p.drawn = true
	fmt.Fprintf(p.w, "\r%d %s so far", n, p.noun)
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
