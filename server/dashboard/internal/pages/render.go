// Package pages is what the dashboard shows and how: its pages
// (html/template over embedded files, no script), its stylesheet, and the
// chart it draws as SVG. It reads no store and no clock: package dashboard
// gathers each page's numbers through the API's own queries, tells it the
// time, and renders.
package pages

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io"
	"time"
)

//go:embed assets
var assets embed.FS

// pageFiles are the pages, each rendered inside layout.html.
var pageFiles = []string{"login.html", "overview.html", "jobs.html", "job.html", "error.html", "searches.html", "feedback.html", "agents.html", "conversations.html", "thread.html", "gaps.html"}

var (
	templates = parse()
	style     = mustRead("assets/style.css")
	// StyleVersion changes with the stylesheet, so that its URL can be
	// cached for long and still change when the stylesheet does.
	StyleVersion = version(style)
)

var funcs = template.FuncMap{
	"count":   Count,
	"share":   Share,
	"time":    Time,
	"iso":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"ago":     func(now, t time.Time) string { return Age(now.Sub(t)) },
	"since":   func(now, t time.Time) string { return Since(now.Sub(t)) },
	"percent": percent,
	"vote":    Vote,
	"link":    SafeLink,
	"plus":    func(a, b int64) int64 { return a + b },
	"text": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"compact":    Compact,
	"kindLabel":  KindLabel,
	"change":     Change,
	"difference": Difference,
	"shareChange": func(v, prev Views, period string) string {
		return ShareChange(v.AI, v.Total, prev.AI, prev.Total, period)
	},
}

func parse() map[string]*template.Template {
	out := make(map[string]*template.Template, len(pageFiles))
	for _, f := range pageFiles {
		out[f] = template.Must(template.New(f).Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/period.html", "assets/"+f))
	}
	return out
}

func mustRead(name string) []byte {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}

func version(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Style returns the stylesheet.
func Style() []byte { return style }

// Page is a page of the dashboard: LoginPage, OverviewPage, JobsPage,
// JobPage or ErrorPage.
type Page interface{ file() string }

// Render writes p as HTML to w. The page is rendered whole before a byte
// is written, so a failure leaves w untouched for an error answer.
func Render(w io.Writer, p Page) error {
	var buf bytes.Buffer
	if err := templates[p.file()].ExecuteTemplate(&buf, "layout", p); err != nil {
		return err
	}
	_, err := buf.WriteTo(w)
	return err
}

// percent is part of whole in percent, for a meter; 0 when whole is 0.
func percent(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return round2(float64(part) * 100 / float64(whole))
}
