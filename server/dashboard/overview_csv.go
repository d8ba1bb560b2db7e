package dashboard

import (
	"bytes"
	"encoding/csv"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/internal/respond"
)

// dashCSV answers what the overview shows as a CSV file to download: the
// chart's bars (table "" or "series"), one row each, from start to end
// (exclusive, RFC 3339 in UTC); or the top pages (table "pages"). Its
// name says the project, the page if one, and the range.
func (s *Dashboard) dashCSV(w http.ResponseWriter, r *http.Request, d *dashRequest, span dashSpan, path, table string, bars []pages.Point, top []pages.PageViews) {
	var buf bytes.Buffer
	out := csv.NewWriter(&buf)
	name := []string{d.Project.ID, "views"}
	if table == "pages" {
		name[1] = "top-pages"
		out.Write([]string{"path", "human", "ai", "total"})
		for _, p := range top {
			out.Write([]string{csvCell(p.Path), itoa(p.Human), itoa(p.AI), itoa(p.Total)})
		}
	} else {
		out.Write([]string{"start", "end", "human", "ai", "total"})
		for _, b := range bars {
			out.Write([]string{b.At.UTC().Format(time.RFC3339), b.End.UTC().Format(time.RFC3339), itoa(b.Human), itoa(b.AI), itoa(b.Human + b.AI)})
		}
	}
	out.Flush()
	if err := out.Error(); err != nil {
		msg := respond.LogInternal(r, s.cfg.Logger, "writing a dashboard CSV", err)
		s.dashError(w, r, d.frame, http.StatusInternalServerError, msg)
		return
	}
	// The path last, where the bound on the name's length cuts it.
	name = append(name, span.From.Format(time.DateOnly), "to", span.To.Add(-day).Format(time.DateOnly), path)
	dashHeaders(w.Header())
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": csvFileName(name) + ".csv"}))
	buf.WriteTo(w)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// csvCell returns a cell of text a client chose (a page's path) as a
// spreadsheet will take it for text: one that starts with a character
// that makes it a formula (=, +, -, @, or a tab or carriage return) is
// prefixed with a quote, as OWASP's advice on CSV injection has it.
func csvCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// csvFileName joins parts into a file's name of ASCII letters, digits,
// dots and underscores, each run of anything else one hyphen, cut to
// maxCSVName bytes: a project's ID or a page's path can hold what no file
// system or header takes.
func csvFileName(parts []string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.Join(parts, "-") {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' {
			b.WriteRune(c)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	name := b.String()
	return strings.Trim(name[:min(len(name), maxCSVName)], "-.")
}

const maxCSVName = 120
