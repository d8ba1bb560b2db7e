package dashboard_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"html"
	"math"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// The overview's periods, comparisons, intervals, a page's own overview
// and the CSV files, through the handler as a browser reaches it.

// dayOf is the UTC day n days from the test clock's (2026-08-14).
func (d *dashEnv) dayOf(n int) time.Time {
	return d.Clock.Now().Truncate(24*time.Hour).AddDate(0, 0, n)
}

func (d *dashEnv) addViews(t *testing.T, counts ...store.ViewCount) {
	t.Helper()
	for i := range counts {
		counts[i].ProjectID = "alpha"
	}
	if err := d.Store.AddViews(context.Background(), counts); err != nil {
		t.Fatal(err)
	}
}

// hrefOf returns the link of the element whose id is id, as a path to
// get.
func hrefOf(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `" href="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page has no link #%s", id)
	}
	return html.UnescapeString(m[1])
}

// wantChange writes the change of cur from prev as the cards do: in
// percent, one decimal under 10, with the minus sign.
func wantChange(cur, prev int64, period string) string {
	switch {
	case cur == prev:
		return "no change vs " + period
	case prev == 0:
		return "new (none in the " + period + ")"
	}
	pct := float64(cur-prev) * 100 / float64(prev)
	decimals := 0
	if math.Abs(pct) < 9.95 {
		decimals = 1
	}
	s := strconv.FormatFloat(math.Abs(pct), 'f', decimals, 64)
	if pct < 0 {
		return "\u2212" + s + "% vs " + period
	}
	return "+" + s + "% vs " + period
}

func TestDashboardOverviewPeriods(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)
	b.signIn("ro")
	for _, tc := range []struct {
		period, from, to, per string
		rows                  int
		first, last           string
	}{
		{"today", "2026-08-14", "2026-08-14", "hour", 24, "2026-08-14 00:00", "2026-08-14 23:00"},
		{"7d", "2026-08-08", "2026-08-14", "day", 7, "2026-08-08", "2026-08-14"},
		{"30d", "2026-07-16", "2026-08-14", "day", 30, "2026-07-16", "2026-08-14"},
		{"mtd", "2026-08-01", "2026-08-14", "day", 14, "2026-08-01", "2026-08-14"},
		{"12m", "2025-09-01", "2026-08-14", "month", 12, "2025-09-01 to 2025-09-30", "2026-08-01 to 2026-08-14"},
	} {
		doc, _ := b.page("/dashboard/projects/alpha/?period=" + tc.period)
		if got := textOf(t, doc, `<h2 id="totals-heading">`, "</h2>"); got != "Totals from "+tc.from+" to "+tc.to {
			t.Errorf("%s: %q", tc.period, got)
		}
		if got := textOf(t, doc, `<h2 id="chart-heading">`, "</h2>"); got != "Human and AI views per "+tc.per {
			t.Errorf("%s: the chart is %q", tc.period, got)
		}
		rows := tableRows(t, doc, `id="series"`)
		if len(rows) != tc.rows || rows[0][0] != tc.first || rows[len(rows)-1][0] != tc.last {
			t.Errorf("%s: %d rows from %q to %q, want %d from %q to %q", tc.period, len(rows), rows[0][0], rows[len(rows)-1][0], tc.rows, tc.first, tc.last)
		}
		current := regexp.MustCompile(`id="period-([a-z0-9]+)" href="[^"]*" aria-current="page"`).FindAllStringSubmatch(doc, -1)
		if len(current) != 1 || current[0][1] != tc.period {
			t.Errorf("%s: the picker marks %q as current", tc.period, current)
		}
		// Each preset's link asks for that preset.
		if got := hrefOf(t, doc, "period-"+tc.period); got != "/dashboard/projects/alpha/?period="+tc.period {
			t.Errorf("%s: its link is %q", tc.period, got)
		}
		if !strings.Contains(doc, `<details class="numbers">`) {
			t.Errorf("%s: the chart's numbers are not a closed <details>", tc.period)
		}
	}
	// Each compares with the period its name calls previous.
	for period, want := range map[string]string{
		"today": "the previous day, 2026-08-13 to 2026-08-13",
		"7d":    "the previous 7 days, 2026-08-01 to 2026-08-07",
		"mtd":   "the previous month to date, 2026-07-01 to 2026-07-14",
		"12m":   "the previous 12 months, 2024-09-01 to 2025-08-14",
	} {
		doc, _ := b.page("/dashboard/projects/alpha/?period=" + period)
		if got := textOf(t, doc, `id="compare-note">`, "</p>"); got != "Each change compares with "+want+"." {
			t.Errorf("%s: the note says %q", period, got)
		}
	}
	// No period: the last 30 days. A range: custom, its own link the same.
	doc, _ := b.page("/dashboard/projects/alpha/")
	if !strings.Contains(doc, `id="period-30d" href="/dashboard/projects/alpha/?period=30d" aria-current="page"`) {
		t.Error("without a period, 30 days are not the current preset")
	}
	doc, _ = b.page("/dashboard/projects/alpha/?from=2026-08-01&to=2026-08-10")
	if got := hrefOf(t, doc, "period-custom"); got != "/dashboard/projects/alpha/?from=2026-08-01&period=custom&to=2026-08-10" || !strings.Contains(doc, `href="`+html.EscapeString(got)+`" aria-current="page"`) {
		t.Errorf("a range's custom link is %q, or not current", got)
	}
}

func TestDashboardOverviewPeriodProblems(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)
	b.signIn("ro")
	for q, want := range map[string]string{
		"period=8d":                          `period must be one of today, 7d, 30d, mtd, 12m, custom, got "8d"`,
		"period=7d&from=2026-08-01":          "from and to go with period=custom, not with period=7d",
		"period=custom&to=yesterday":         `to must be a day such as 2026-08-14, got "yesterday"`,
		"format=xml":                         `format must be csv (or absent, for the page), got "xml"`,
		"format=csv&table=jobs":              `table must be series or pages, got "jobs"`,
		"format=csv&table=pages&path=/x":     "table=pages lists the top pages of all pages: it goes without path",
		"path=/" + strings.Repeat("a", 2048): "path has 2049 bytes; at most 2048 are allowed",
		"format=csv&period=1y":               `period must be one of`,
	} {
		resp, doc := b.get("/dashboard/projects/alpha/?" + q)
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("?%.40s: %d %s, want a 400 page", q, resp.StatusCode, resp.Header.Get("Content-Type"))
			continue
		}
		if got := textOf(t, doc, `id="range-problem">`, "</p>"); !strings.HasPrefix(got, want) {
			t.Errorf("?%.40s: the page says %q, want %q", q, got, want)
		}
		// Above the default period's numbers.
		if !strings.Contains(doc, `id="views-chart"`) || textOf(t, doc, `<h2 id="totals-heading">`, "</h2>") != "Totals from 2026-07-16 to 2026-08-14" {
			t.Errorf("?%.40s: the page does not show the default period", q)
		}
	}
}

func TestDashboardOverviewComparesWithThePreviousPeriod(t *testing.T) {
	d := newDashEnv(t)
	d.addViews(t,
		store.ViewCount{Path: "/guide", Hour: d.dayOf(-1).Add(10 * time.Hour), Human: 112, AI: 30, Bot: 9},
		store.ViewCount{Path: "/api", Hour: d.dayOf(0).Add(8 * time.Hour), AI: 5},
		store.ViewCount{Path: "/guide", Hour: d.dayOf(-8).Add(23 * time.Hour), Human: 100, AI: 10}, // the previous 7 days
		store.ViewCount{Path: "/guide", Hour: d.dayOf(-15), Human: 1000, AI: 1000},                 // before them
	)
	d.addVisitors(t, "/guide", d.dayOf(-1).Add(10*time.Hour), 0, 40, 12)
	d.addVisitors(t, "/api", d.dayOf(0).Add(8*time.Hour), 100, 0, 3)
	d.addVisitors(t, "/guide", d.dayOf(-8).Add(23*time.Hour), 200, 20, 0)
	ctx := context.Background()
	visitors := func(from, to time.Time) store.VisitorsResult {
		res, err := d.Store.QueryVisitors(ctx, store.ViewsQuery{ProjectID: "alpha", From: from, To: to, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	now, before := visitors(d.dayOf(-6), d.dayOf(1)), visitors(d.dayOf(-13), d.dayOf(-6))
	if now.Totals.Total < 50 || before.Totals.Total < 15 || len(now.Rows) != 2 {
		t.Fatalf("the store counts %+v visitors now and %+v before", now, before)
	}
	b := d.browser(t)
	b.signIn("ro")
	const period = "previous 7 days"

	doc, _ := b.page("/dashboard/projects/alpha/?period=7d")
	if got := textOf(t, doc, `id="compare-note">`, "</p>"); got != "Each change compares with the previous 7 days, 2026-08-01 to 2026-08-07." {
		t.Errorf("the note says %q", got)
	}
	for id, want := range map[string]string{
		"total-human": "112", "change-human": "+12% vs " + period,
		"total-ai": "35", "change-ai": "+250% vs " + period,
		"total-views": "147", "change-views": "+34% vs " + period, // 147 / 110
		"total-ai-share": "23.8 %", "change-ai-share": "+14.7 pts vs " + period, // 35/147 − 10/110
		"total-visitors": count(now.Totals.Total), "change-visitors": wantChange(now.Totals.Total, before.Totals.Total, period),
	} {
		if got := textOf(t, doc, `id="`+id+`">`, "</dd>"); got != want {
			t.Errorf("#%s says %q, want %q", id, got, want)
		}
	}

	// A page alone, compared with itself: its views and its visitors,
	// which are its row of the visitors export.
	doc, _ = b.page("/dashboard/projects/alpha/?period=7d&path=%2Fguide")
	var guide, guideBefore store.PathVisitors
	for _, r := range now.Rows {
		if r.Path == "/guide" {
			guide = r
		}
	}
	guideBefore = before.Rows[0]
	if guide.Total == 0 || guide.Total == now.Totals.Total {
		t.Fatalf("the store's /guide visitors: %+v of %+v", guide, now.Totals)
	}
	for id, want := range map[string]string{
		"total-human": "112", "change-human": "+12% vs " + period,
		"total-ai": "30", "change-ai": "+200% vs " + period,
		"total-views": "142", "change-views": "+29% vs " + period, // 142 / 110
		"total-ai-share": "21.1 %", "change-ai-share": "+12.0 pts vs " + period, // 21.1 − 9.1
		"total-visitors": count(guide.Total), "change-visitors": wantChange(guide.Total, guideBefore.Total, period),
	} {
		if got := textOf(t, doc, `id="`+id+`">`, "</dd>"); got != want {
			t.Errorf("/guide's #%s says %q, want %q", id, got, want)
		}
	}

	// Nothing before: new; nothing at all: no change.
	doc, _ = b.page("/dashboard/projects/alpha/?period=custom&from=2026-08-06&to=2026-08-06")
	if got := textOf(t, doc, `id="change-ai-share">`, "</dd>"); got != "new (none in the previous day)" {
		t.Errorf("the AI share of a day with views after one without: %q", got)
	}
	doc, _ = b.page("/dashboard/projects/alpha/?period=custom&from=2026-08-10&to=2026-08-10")
	if got := textOf(t, doc, `id="change-human">`, "</dd>"); got != "no change vs previous day" {
		t.Errorf("no human views that day or the day before: %q", got)
	}
	doc, _ = b.page("/dashboard/projects/alpha/?period=custom&from=2026-08-07&to=2026-08-07")
	if got := textOf(t, doc, `id="change-ai-share">`, "</dd>"); got != "was 9.1 % in the previous day" {
		t.Errorf("the share of a day without views after one with: %q", got)
	}
}

func TestDashboardOverviewIntervalsFollowTheRange(t *testing.T) {
	d := newDashEnv(t)
	at := func(y int, m time.Month, day, hour int) time.Time {
		return time.Date(y, m, day, hour, 0, 0, 0, time.UTC)
	}
	d.addViews(t,
		store.ViewCount{Path: "/guide", Hour: at(2025, 12, 15, 12), Human: 5},
		store.ViewCount{Path: "/guide", Hour: at(2025, 12, 31, 23), Human: 7},
		store.ViewCount{Path: "/api", Hour: at(2026, 1, 1, 0), AI: 3},
		store.ViewCount{Path: "/api", Hour: at(2026, 1, 5, 0), AI: 4, Human: 1},
	)
	b := d.browser(t)
	b.signIn("ro")
	axisLabel := regexp.MustCompile(`<text class="axis[^"]*"[^>]*>([^<]*)</text>`)
	axis := func(doc string) []string {
		var out []string
		for _, m := range axisLabel.FindAllStringSubmatch(doc, -1) {
			out = append(out, m[1])
		}
		return out
	}

	// 245 days, across a new year: months, whose labels carry the year.
	doc, _ := b.page("/dashboard/projects/alpha/?from=2025-06-01&to=2026-01-31")
	rows := tableRows(t, doc, `id="series"`)
	if len(rows) != 8 || rows[0][0] != "2025-06-01 to 2025-06-30" || rows[7][0] != "2026-01-01 to 2026-01-31" {
		t.Fatalf("months: %q", rows)
	}
	if got := strings.Join(rows[6], "|"); got != "2025-12-01 to 2025-12-31|12|0|12" {
		t.Errorf("December: %s", got)
	}
	if got := strings.Join(rows[7], "|"); got != "2026-01-01 to 2026-01-31|1|7|8" {
		t.Errorf("January: %s", got)
	}
	if got := strings.Join(axis(doc), "|"); got != "Jun 2025|Jul 2025|Aug 2025|Sep 2025|Oct 2025|Nov 2025|Dec 2025|Jan 2026" {
		t.Errorf("the months' labels: %s", got)
	}

	// 90 days: ISO weeks from Monday; the week of the new year holds the
	// views of its Wednesday and Thursday.
	doc, _ = b.page("/dashboard/projects/alpha/?from=2025-12-01&to=2026-02-28")
	rows = tableRows(t, doc, `id="series"`)
	if len(rows) != 13 || rows[0][0] != "2025-12-01 to 2025-12-07" || rows[12][0] != "2026-02-23 to 2026-02-28" {
		t.Fatalf("weeks: %d rows, %q to %q", len(rows), rows[0], rows[len(rows)-1])
	}
	if got := strings.Join(rows[4], "|"); got != "2025-12-29 to 2026-01-04|7|3|10" {
		t.Errorf("the week of the new year: %s", got)
	}
	if got := strings.Join(rows[5], "|"); got != "2026-01-05 to 2026-01-11|1|4|5" {
		t.Errorf("the week after: %s", got)
	}
	if labels := axis(doc); len(labels) == 0 || labels[0] != "1 Dec 2025" {
		t.Errorf("the weeks' labels: %q", labels)
	}
	// Days within a year carry none.
	doc, _ = b.page("/dashboard/projects/alpha/?from=2026-01-02&to=2026-01-20")
	if labels := axis(doc); len(labels) == 0 || labels[0] != "2 Jan" {
		t.Errorf("the days' labels: %q", labels)
	}
}

func TestDashboardOverviewOfOnePage(t *testing.T) {
	d := newDashEnv(t)
	odd := `/a b&c=d#e?f"<x>`
	d.addViews(t,
		store.ViewCount{Path: "/guide/install", Hour: d.dayOf(-2).Add(9 * time.Hour), Human: 40, AI: 4},
		store.ViewCount{Path: "/guide/install", Hour: d.dayOf(0).Add(1 * time.Hour), Human: 2, AI: 1},
		store.ViewCount{Path: "/api", Hour: d.dayOf(-1), Human: 500, AI: 50},
		store.ViewCount{Path: odd, Hour: d.dayOf(-1), Human: 3},
	)
	b := d.browser(t)
	b.signIn("ro")
	doc, _ := b.page("/dashboard/projects/alpha/?period=7d")
	// Each top page links to its own overview, with the same period.
	if got := hrefOf(t, doc, "period-7d"); got != "/dashboard/projects/alpha/?period=7d" {
		t.Fatalf("the 7 days' link: %q", got)
	}
	links := regexp.MustCompile(`<th scope="row" class="path"><a href="([^"]*)">([^<]*)</a>`).FindAllStringSubmatch(doc, -1)
	if len(links) != 3 {
		t.Fatalf("the top pages link %d pages", len(links))
	}
	for _, m := range links {
		href, path := html.UnescapeString(m[1]), html.UnescapeString(m[2])
		u, err := url.Parse(href)
		if err != nil || u.Path != "/dashboard/projects/alpha/" || u.Query().Get("path") != path || u.Query().Get("period") != "7d" {
			t.Errorf("%s links to %q", path, href)
			continue
		}
		page, _ := b.page(href)
		if got := textOf(t, page, `<code id="drill-path">`, "</code>"); got != path {
			t.Errorf("%s's link shows the overview of %q", path, got)
		}
	}

	doc, _ = b.page("/dashboard/projects/alpha/?period=7d&path=" + url.QueryEscape("/guide/install"))
	if got := textOf(t, doc, `id="total-views">`, "</dd>"); got != "47" {
		t.Errorf("/guide/install's views: %s, want 47", got)
	}
	if strings.Contains(doc, `id="top-pages"`) {
		t.Error("a page's overview lists the top pages")
	}
	rows := tableRows(t, doc, `id="series"`)
	if len(rows) != 7 || strings.Join(rows[4], "|") != "2026-08-12|40|4|44" || strings.Join(rows[6], "|") != "2026-08-14|2|1|3" {
		t.Errorf("/guide/install's series: %q", rows)
	}
	// Its links keep the page: the periods, the form; one leads back.
	if got := hrefOf(t, doc, "period-today"); got != "/dashboard/projects/alpha/?path=%2Fguide%2Finstall&period=today" {
		t.Errorf("the page's today link: %q", got)
	}
	if !strings.Contains(doc, `<input type="hidden" name="path" value="/guide/install">`) {
		t.Error("the page's custom range form forgets the page")
	}
	if got := hrefOf(t, doc, "all-pages"); got != "/dashboard/projects/alpha/?period=7d" {
		t.Errorf("back to all pages: %q", got)
	}
	today, _ := b.page(hrefOf(t, doc, "period-today"))
	if rows := tableRows(t, today, `id="series"`); len(rows) != 24 || strings.Join(rows[1], "|") != "2026-08-14 01:00|2|1|3" {
		t.Errorf("/guide/install today: %q", rows)
	}

	// A page nobody viewed: zeros, not an error.
	doc, _ = b.page("/dashboard/projects/alpha/?period=7d&path=%2Fnowhere")
	for _, id := range []string{"total-human", "total-ai", "total-views", "total-visitors"} {
		if got := textOf(t, doc, `id="`+id+`">`, "</dd>"); got != "0" {
			t.Errorf("an unknown page's #%s: %q", id, got)
		}
	}
}

func TestDashboardOverviewCSV(t *testing.T) {
	d := newDashEnv(t)
	d.addViews(t,
		store.ViewCount{Path: "=HYPERLINK(\"http://evil.example\")", Hour: d.dayOf(-1), Human: 90, AI: 1},
		store.ViewCount{Path: "@SUM(1+1)", Hour: d.dayOf(-2).Add(5 * time.Hour), Human: 80},
		store.ViewCount{Path: "/guide", Hour: d.dayOf(-2).Add(5 * time.Hour), Human: 10, AI: 60},
		store.ViewCount{Path: "/guide", Hour: d.dayOf(-40), Human: 1},
	)
	b := d.browser(t)
	b.signIn("ro")
	doc, _ := b.page("/dashboard/projects/alpha/?period=7d")
	get := func(path, wantName string) [][]string {
		t.Helper()
		resp, body := b.get(path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET %s: %d %s\n%s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		kind, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
		if err != nil || kind != "attachment" || params["filename"] != wantName {
			t.Errorf("GET %s: Content-Disposition %q, want an attachment named %s", path, resp.Header.Get("Content-Disposition"), wantName)
		}
		rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, body)
		}
		return rows
	}

	// The chart's rows: the store's series.
	rows := get(hrefOf(t, doc, "series-csv"), "alpha-views-2026-08-08-to-2026-08-14.csv")
	series, err := d.Store.ViewSeries(context.Background(), store.SeriesQuery{ProjectID: "alpha", From: d.dayOf(-6), To: d.dayOf(1), Interval: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"start", "end", "human", "ai", "total"}}
	for _, p := range series {
		want = append(want, []string{p.At.Format(time.RFC3339), p.At.AddDate(0, 0, 1).Format(time.RFC3339), fmt.Sprint(p.Human), fmt.Sprint(p.AI), fmt.Sprint(p.Human + p.AI)})
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) || len(rows) != 8 {
		t.Errorf("the series CSV:\n%q\nthe store's:\n%q", rows, want)
	}
	// The top pages: paths a spreadsheet would run are text.
	rows = get(hrefOf(t, doc, "top-csv"), "alpha-top-pages-2026-08-08-to-2026-08-14.csv")
	if got := fmt.Sprint(rows); got != fmt.Sprint([][]string{{"path", "human", "ai", "total"},
		{"'=HYPERLINK(\"http://evil.example\")", "90", "1", "91"}, {"'@SUM(1+1)", "80", "0", "80"}, {"/guide", "10", "60", "70"}}) {
		t.Errorf("the top pages CSV: %q", rows)
	}
	// A page's, by the month.
	doc, _ = b.page("/dashboard/projects/alpha/?period=12m&path=%2Fguide")
	rows = get(hrefOf(t, doc, "series-csv"), "alpha-views-2025-09-01-to-2026-08-14-guide.csv")
	if len(rows) != 13 || strings.Join(rows[11], ",") != "2026-07-01T00:00:00Z,2026-08-01T00:00:00Z,1,0,1" || strings.Join(rows[12], ",") != "2026-08-01T00:00:00Z,2026-08-15T00:00:00Z,10,60,70" {
		t.Errorf("/guide's months: %q", rows)
	}

	// Admitted as the page is.
	resp, _ := d.browser(t).get("/dashboard/projects/alpha/?period=7d&format=csv")
	wantRedirect(t, resp, "/dashboard/login")
	if resp, _ := b.get("/dashboard/projects/beta/?format=csv"); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Content-Disposition") != "" {
		t.Errorf("another project's CSV: %d", resp.StatusCode)
	}
}

// A page's visitors card is the store's answer for its path alone, now
// and in the previous period, however many pages had more visitors, and
// never a page's that its path is a prefix of.
func TestDashboardOverviewOfOnePageCountsItsOwnVisitors(t *testing.T) {
	d := newDashEnv(t)
	paths := []string{"/b", "/b/c", "/bc"}
	for i := range 40 {
		paths = append(paths, fmt.Sprintf("/busy/%02d", i))
	}
	for i, path := range paths {
		// /b has the fewest visitors now, and some AI ones; each page
		// had others in the previous 7 days.
		now, before := d.dayOf(-1).Add(time.Duration(i%24)*time.Hour), d.dayOf(-9).Add(time.Duration(i%24)*time.Hour)
		d.addViews(t, store.ViewCount{Path: path, Hour: now, Human: 10}, store.ViewCount{Path: path, Hour: before, Human: 1})
		d.addVisitors(t, path, now, 1000*i, 5+i, i%3)
		d.addVisitors(t, path, before, 1000*i+500, 2+i%5, 1)
	}
	ctx := context.Background()
	visitors := func(path string, from, to time.Time) store.VisitorTotals {
		t.Helper()
		res, err := d.Store.QueryVisitors(ctx, store.ViewsQuery{ProjectID: "alpha", From: from, To: to, Limit: 1, Path: path})
		if err != nil {
			t.Fatal(err)
		}
		return res.Totals
	}
	b := d.browser(t)
	b.signIn("ro")
	for _, path := range []string{"/b", "/b/c", "/busy/39", "/nowhere"} {
		now, before := visitors(path, d.dayOf(-6), d.dayOf(1)), visitors(path, d.dayOf(-13), d.dayOf(-6))
		if path != "/nowhere" && (now.Total == 0 || before.Total == 0) {
			t.Fatalf("the store counts no visitors of %s: %+v, %+v", path, now, before)
		}
		doc, _ := b.page("/dashboard/projects/alpha/?period=7d&path=" + url.QueryEscape(path))
		for id, want := range map[string]string{
			"total-visitors":  count(now.Total),
			"change-visitors": wantChange(now.Total, before.Total, "previous 7 days"),
		} {
			if got := textOf(t, doc, `id="`+id+`">`, "</dd>"); got != want {
				t.Errorf("%s's #%s says %q, want %q", path, id, got, want)
			}
		}
		detail := textOf(t, doc, `id="total-visitors">`, "</div>")
		if want := count(now.Human) + " human, " + count(now.AI) + " AI"; !strings.Contains(detail, want) {
			t.Errorf("%s's visitors card: %q, want %q", path, detail, want)
		}
	}
	// /b, the last of 43 pages by visitors, beside the pages it is a
	// prefix of: its own 5 human visitors of yesterday.
	if got := visitors("/b", d.dayOf(-1), d.dayOf(0)); got != (store.VisitorTotals{Human: 5, Total: 5}) {
		t.Errorf("the store's visitors of /b yesterday: %+v", got)
	}
}
