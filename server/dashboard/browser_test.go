package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// The dashboard in a real browser (servertest.Tab), with a screenshot of
// every page, which .ci/run checks.

// signIn fills the sign-in form from the keyboard alone: Tab past the
// skip link and the header's link to the key's field, type, Enter.
func signIn(b *servertest.Tab, secret, waitFor string) {
	b.T.Helper()
	b.Open("/dashboard/login", "#key")
	b.Do("tabbing to the key's field", chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"))
	if id := servertest.Eval[string](b, `document.activeElement.id`); id != "key" {
		b.T.Fatalf("three tabs into the sign-in page, the focus is on %q, not the key's field", id)
	}
	b.Do("signing in", chromedp.KeyEvent(secret), chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(waitFor)))
}

func TestDashboardInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	d := newDashEnv(t)
	ctx := context.Background()
	today := d.Clock.Now().Truncate(24 * time.Hour)
	var counts []store.ViewCount
	for i, path := range []string{"/guide/install", "/guide/configure", "/reference/api", "/blog/launch"} {
		for day := range 30 {
			counts = append(counts, store.ViewCount{
				ProjectID: "alpha", Path: path, Hour: today.AddDate(0, 0, -day).Add(time.Duration(i*5) * time.Hour),
				Human: int64((day*7+i*13)%40 + 3), AI: int64((day*3+i*5)%17 + i), Bot: 2,
			})
		}
	}
	if err := d.Store.AddViews(ctx, counts); err != nil {
		t.Fatal(err)
	}
	for day := range 30 {
		d.addVisitors(t, "/guide/install", today.AddDate(0, 0, -day), day*5, 8, 3)
	}
	failed := d.createJob(t, "Document the --verbose flag of the CLI")
	d.failJob(t, "git push: the branch docs-agent/"+failed+" is protected")
	d.Clock.Advance(90 * time.Minute)
	active := d.createJob(t, "Fix the broken link on the install page.\nKeep the rest as it is.")

	b := servertest.NewTab(t, browser, d.url)

	// A wrong key: the form says so, and no session starts.
	signIn(b, "mint_this-is-not-a-key", "#login-error")
	if got := b.Text("#login-error"); !strings.Contains(got, "invalid API key") {
		t.Errorf("the sign-in error says %q", got)
	}
	b.Screenshot("01-sign-in-refused")

	// The write key, from the keyboard: the overview.
	signIn(b, d.Keys["rw"], "#views-chart")
	from, to := today.AddDate(0, 0, -29), today.AddDate(0, 0, 1)
	views, err := d.Store.QueryViews(ctx, store.ViewsQuery{ProjectID: "alpha", From: from, To: to, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	series, err := d.Store.ViewSeries(ctx, store.SeriesQuery{ProjectID: "alpha", From: from, To: to, Interval: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]int64{"#total-human": views.Totals.Human, "#total-ai": views.Totals.AI, "#total-views": views.Totals.Human + views.Totals.AI} {
		if got := b.Text(sel); got != count(want) {
			t.Errorf("%s shows %s, the store says %d", sel, got, want)
		}
	}
	visitors, err := d.Store.QueryVisitors(ctx, store.ViewsQuery{ProjectID: "alpha", From: from, To: to, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Text("#total-visitors"); got != count(visitors.Totals.Total) || visitors.Totals.Total == 0 {
		t.Errorf("unique visitors show %s, the store says %d", got, visitors.Totals.Total)
	}
	rows := b.Rows("#series")
	bars := servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#views-chart .bar title')).map(t => t.textContent)`)
	if len(rows) != len(series) || len(bars) != len(series) {
		t.Fatalf("the chart has %d bars and %d rows for the store's %d points", len(bars), len(rows), len(series))
	}
	for i, p := range series {
		day := p.At.Format(time.DateOnly)
		if want := []string{day, count(p.Human), count(p.AI), count(p.Human + p.AI)}; strings.Join(rows[i], "|") != strings.Join(want, "|") {
			t.Errorf("the chart's row %d is %q, the store says %q", i, rows[i], want)
		}
		if want := fmt.Sprintf("%s: %s human, %s AI", day, count(p.Human), count(p.AI)); bars[i] != want {
			t.Errorf("bar %d is %q, the store says %q", i, bars[i], want)
		}
	}
	top := b.Rows("#top-pages")
	if len(top) != len(views.Rows) || top[0][0] != views.Rows[0].Path {
		t.Errorf("top pages %q, the store's %v", top, views.Rows)
	}
	b.Screenshot("02-overview")

	// A narrower range through the picker's form. The wait is for the new
	// page: only its server-written field carries the week's first day as
	// an attribute (the old page's field has it only as a property).
	weekFrom := today.AddDate(0, 0, -6).Format(time.DateOnly)
	b.Do("picking a week",
		chromedp.SetValue(chromedp.ID("from"), weekFrom),
		chromedp.Click(chromedp.ID("show-range")),
		chromedp.WaitVisible(chromedp.CSS(`input#from[value="`+weekFrom+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#totals-heading`)))
	if n := len(b.Rows("#series")); n != 7 {
		t.Errorf("a week's chart has %d rows", n)
	}

	// On a phone: nothing wider than the screen.
	b.Do("a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	b.Open("/dashboard/projects/alpha/", "#views-chart")
	if wide := servertest.Eval[bool](b, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the overview is wider than a phone's screen")
	}
	b.Screenshot("03-overview-phone")
	b.Do("a desktop's screen", chromedp.EmulateViewport(1280, 900))

	// The jobs, then the failed one, then archive it.
	b.Open("/dashboard/projects/alpha/jobs", "#jobs")
	jobs := b.Rows("#jobs")
	if len(jobs) != 2 || jobs[1][0] != failed || jobs[1][1] != "failed" {
		t.Errorf("the jobs list: %q", jobs)
	}
	b.Screenshot("04-jobs")
	b.Do("opening the failed job", chromedp.Click(chromedp.CSS(`#jobs a[href$="/`+failed+`"]`)), chromedp.WaitVisible(chromedp.ID("prompts")))
	if got := b.Text("#failure-reason"); !strings.Contains(got, "is protected") {
		t.Errorf("the failure reason shows %q", got)
	}
	if got := b.Text("#prompts"); !strings.Contains(got, "Document the --verbose flag") {
		t.Errorf("the prompt history shows %q", got)
	}
	b.Screenshot("05-job")
	b.Do("archiving", chromedp.Click(chromedp.ID("archive")), chromedp.WaitVisible(chromedp.ID("job-archived")))
	if got := b.Text("#job-status"); got != "archived" {
		t.Errorf("after archiving, the page says %q", got)
	}
	if job, err := d.Server.Job(ctx, "alpha", failed); err != nil || job.Status != store.JobStatusArchived {
		t.Errorf("after archiving, the store has the job %v (%v)", job.Status, err)
	}
	b.Screenshot("06-job-archived")

	// Sign out; then the read key sees no failure reason, and on the page
	// of a job a writer could archive, no archive button: no form that
	// posts but the sign-out.
	b.Do("signing out", chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("login-notice")))
	b.Screenshot("07-signed-out")
	signIn(b, d.Keys["ro"], "#views-chart")
	b.Open("/dashboard/projects/alpha/jobs/"+failed, "#prompts")
	if b.Present("#archive") || b.Present("#failure-reason") {
		t.Error("a read key's page shows the archive button or the failure reason")
	}
	b.Open("/dashboard/projects/alpha/jobs/"+active, "#prompts")
	if got := b.Text("#job-status"); got != "active" {
		t.Errorf("the active job's page says %q", got)
	}
	posts := servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('form')).filter(f => f.method === 'post').map(f => new URL(f.action).pathname)`)
	if b.Present("#archive") || len(posts) != 1 || posts[0] != "/dashboard/logout" {
		t.Errorf("a read key's page of an active job has forms that post to %q, want only the sign-out", posts)
	}
	b.Screenshot("08-job-read-key")

	// Revoking the key ends its session at the next page.
	d.revoke(t, "dashboards")
	b.Open("/dashboard/projects/alpha/", "#login-notice")
	if got := b.Text("#login-notice"); !strings.Contains(got, "revoked") {
		t.Errorf("after the key's revocation, the page says %q", got)
	}
	b.Screenshot("09-session-ended")
	// Nothing of a key stayed in the browser's reach.
	if stored := servertest.Eval[string](b, `document.cookie + JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + location.href`); strings.Contains(stored, "mint_") {
		t.Errorf("the browser's storage or the URL holds a key: %s", stored)
	}
}

// The overview's periods, comparisons, a page's own overview and the CSV
// file in the browser, and how it reads on a phone: legible labels, one
// colour for AI, tables that show they scroll.
func TestDashboardOverviewInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	d := newDashEnv(t)
	ctx := context.Background()
	today := d.dayOf(0)
	var counts []store.ViewCount
	for i, path := range []string{"/guide/install", "/guide/configure", "/reference/api", "/blog/launch-of-the-very-long-named-release-notes-page"} {
		for day := range 60 {
			counts = append(counts, store.ViewCount{
				ProjectID: "alpha", Path: path, Hour: today.AddDate(0, 0, -day).Add(time.Duration(i*5) * time.Hour),
				Human: int64((day*7+i*13)%40 + 3), AI: int64((day*3+i*5)%17 + i), Bot: 2,
			})
		}
	}
	for day := range 62 { // across a new year, for the months' labels
		counts = append(counts, store.ViewCount{ProjectID: "alpha", Path: "/guide/install", Hour: time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, day), Human: int64(day%9 + 1), AI: int64(day % 4)})
	}
	if err := d.Store.AddViews(ctx, counts); err != nil {
		t.Fatal(err)
	}
	for day := range 14 {
		d.addVisitors(t, "/guide/install", today.AddDate(0, 0, -day), day*5, 8+day%3, 3)
	}
	b := servertest.NewTab(t, browser, d.url)
	signIn(b, d.Keys["ro"], "#views-chart")

	// A preset, clicked: the last 7 days against the 7 before.
	b.Do("picking 7 days", chromedp.Click(chromedp.ID("period-7d")), chromedp.WaitVisible(chromedp.CSS(`#period-7d[aria-current="page"]`)))
	from, to, prevFrom := today.AddDate(0, 0, -6), today.AddDate(0, 0, 1), today.AddDate(0, 0, -13)
	viewsOf := func(from, to time.Time) store.Counts {
		res, err := d.Store.QueryViews(ctx, store.ViewsQuery{ProjectID: "alpha", From: from, To: to, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return res.Totals
	}
	visitorsOf := func(from, to time.Time) int64 {
		res, err := d.Store.QueryVisitors(ctx, store.ViewsQuery{ProjectID: "alpha", From: from, To: to, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.Totals.Total
	}
	now, before := viewsOf(from, to), viewsOf(prevFrom, from)
	const period = "previous 7 days"
	for sel, want := range map[string]string{
		"#total-human": count(now.Human), "#change-human": wantChange(now.Human, before.Human, period),
		"#total-ai": count(now.AI), "#change-ai": wantChange(now.AI, before.AI, period),
		"#total-views": count(now.Human + now.AI), "#change-views": wantChange(now.Human+now.AI, before.Human+before.AI, period),
		"#total-visitors": count(visitorsOf(from, to)), "#change-visitors": wantChange(visitorsOf(from, to), visitorsOf(prevFrom, from), period),
	} {
		if got := b.Text(sel); got != want {
			t.Errorf("7 days: %s says %q, the store %q", sel, got, want)
		}
	}
	if n := len(b.Rows("#series")); n != 7 {
		t.Errorf("7 days: %d rows", n)
	}
	// The numbers are there, closed: the top pages follow the chart.
	if open := servertest.Eval[bool](b, `document.querySelector('details.numbers').open || document.querySelector('#series').checkVisibility()`); open {
		t.Error("the chart's numbers are open")
	}
	// One colour for AI in the chart, its legend, the cards and the
	// meters; another for human.
	colours := servertest.Eval[map[string]string](b, `(() => {
		const fill = s => getComputedStyle(document.querySelector(s)).fill;
		return {
			chart: fill('#views-chart rect.ai'), legend: fill('.legend rect.ai'), meter: fill('#top-pages .meter rect.ai'),
			card: getComputedStyle(document.querySelector('.card-ai')).borderLeftColor,
			human: fill('#views-chart rect.human'), humanCard: getComputedStyle(document.querySelector('.card-human')).borderLeftColor,
		};
	})()`)
	if ai := colours["chart"]; ai == "" || colours["legend"] != ai || colours["meter"] != ai || colours["card"] != ai || colours["human"] == ai || colours["humanCard"] != colours["human"] {
		t.Errorf("the colours of AI and human: %v", colours)
	}
	// The chart's CSV: the store's series, with the page's own admission.
	download := servertest.Eval[string](b, `(() => {
		const x = new XMLHttpRequest();
		x.open('GET', document.querySelector('#series-csv').href, false);
		x.send();
		return x.status + ' ' + x.getResponseHeader('Content-Disposition') + '\n' + x.responseText;
	})()`)
	head, body, _ := strings.Cut(download, "\n")
	if head != "200 attachment; filename=alpha-views-2026-08-08-to-2026-08-14.csv" {
		t.Errorf("the CSV download: %s", head)
	}
	series, err := d.Store.ViewSeries(ctx, store.SeriesQuery{ProjectID: "alpha", From: from, To: to, Interval: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := "start,end,human,ai,total\n"
	for _, p := range series {
		want += fmt.Sprintf("%s,%s,%d,%d,%d\n", p.At.Format(time.RFC3339), p.At.AddDate(0, 0, 1).Format(time.RFC3339), p.Human, p.AI, p.Human+p.AI)
	}
	if body != want {
		t.Errorf("the CSV:\n%s\nthe store's series:\n%s", body, want)
	}
	b.ScreenshotBoth("01-overview-7-days")

	// On a phone: the labels keep a legible size and do not overlap; the
	// top pages scroll in their box, with a shadow on the side that has
	// more.
	b.Do("a phone's screen", chromedp.EmulateViewport(servertest.PhoneWidth, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	checkLabels(b, "7 days")
	edges := func(what string) (left, right float64) {
		png := servertest.Run(b, "a screenshot of the top pages", chromedp.Screenshot(chromedp.ID("top-pages-wrap")))
		return edgeShades(t, png, what)
	}
	if fits := servertest.Eval[bool](b, `(w => w.scrollWidth <= w.clientWidth)(document.querySelector('#top-pages-wrap'))`); fits {
		t.Fatal("the top pages fit a phone: nothing to scroll")
	}
	left, right := edges("scrolled to the start")
	if right > left-20 {
		t.Errorf("at the start, the right edge (%.0f) is not darker than the left (%.0f): no cue that the table scrolls", right, left)
	}
	servertest.Eval[int](b, `(w => (w.scrollLeft = w.scrollWidth, 0))(document.querySelector('#top-pages-wrap'))`)
	left, right = edges("scrolled to the end")
	if left > right-20 {
		t.Errorf("at the end, the left edge (%.0f) is not darker than the right (%.0f)", left, right)
	}
	b.Do("a desktop's screen", chromedp.EmulateViewport(servertest.DesktopWidth, 900))
	if left, right := edges("on a desktop"); math.Abs(left-right) > 10 {
		t.Errorf("a table that fits shows a shadow: edges %.0f and %.0f", left, right)
	}

	// A page alone, from its link: its own series and cards.
	b.Do("opening a page", chromedp.Click(chromedp.CSS(`#top-pages a[href*="path=%2Fguide%2Finstall"]`)), chromedp.WaitVisible(chromedp.ID("drill-path")))
	if got := b.Text("#drill-path"); got != "/guide/install" {
		t.Errorf("the page's overview is of %q", got)
	}
	pageSeries, err := d.Store.ViewSeries(ctx, store.SeriesQuery{ProjectID: "alpha", From: from, To: to, Interval: 24 * time.Hour, Path: "/guide/install"})
	if err != nil {
		t.Fatal(err)
	}
	var human, ai int64
	rows := b.Rows("#series")
	for i, p := range pageSeries {
		human, ai = human+p.Human, ai+p.AI
		if i < len(rows) && strings.Join(rows[i], "|") != strings.Join([]string{p.At.Format(time.DateOnly), count(p.Human), count(p.AI), count(p.Human + p.AI)}, "|") {
			t.Errorf("the page's row %d is %q, the store's %+v", i, rows[i], p)
		}
	}
	if len(rows) != len(pageSeries) || b.Text("#total-human") != count(human) || b.Text("#total-ai") != count(ai) || human == now.Human {
		t.Errorf("the page's cards say %s human, %s AI; its series %d and %d", b.Text("#total-human"), b.Text("#total-ai"), human, ai)
	}
	if b.Present("#top-pages") {
		t.Error("a page's overview lists the top pages")
	}
	b.ScreenshotBoth("02-overview-one-page")

	// A range across a new year: months, each label with its year, at
	// both widths.
	b.Open("/dashboard/projects/alpha/?period=custom&from=2025-06-01&to=2026-01-31", "#views-chart")
	labels := servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#views-chart text.axis')).map(t => t.textContent)`)
	if got := strings.Join(labels, "|"); got != "Jun 2025|Jul 2025|Aug 2025|Sep 2025|Oct 2025|Nov 2025|Dec 2025|Jan 2026" {
		t.Errorf("the months' labels: %s", got)
	}
	checkLabels(b, "months on a desktop")
	b.Do("a phone's screen", chromedp.EmulateViewport(servertest.PhoneWidth, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	checkLabels(b, "months on a phone")
	b.Do("a desktop's screen", chromedp.EmulateViewport(servertest.DesktopWidth, 900))
	b.ScreenshotBoth("03-overview-months")
}

// checkLabels checks the axis labels of the overview's chart as the page
// shows them (checkChartLabels).
func checkLabels(b *servertest.Tab, what string) {
	b.T.Helper()
	checkChartLabels(b, "#views-chart", 2, what)
}

// checkChartLabels checks the axis labels of each chart (an SVG) that
// charts selects as the page shows them: at least least of them, each at
// least 11 CSS pixels, none overlapping another of its chart or leaving
// the chart's figure.
func checkChartLabels(b *servertest.Tab, charts string, least int, what string) {
	b.T.Helper()
	shown := servertest.Eval[[][]labelBox](b, `Array.from(document.querySelectorAll(`+strconv.Quote(charts)+`)).map(svg =>
		Array.from(svg.querySelectorAll('text.axis'))
		.filter(t => getComputedStyle(t).display !== 'none')
		.map(t => { const r = t.getBoundingClientRect(), f = t.closest('figure').getBoundingClientRect();
			return {Text: t.textContent, Size: parseFloat(getComputedStyle(t).fontSize), H: r.height, Left: r.left, Right: r.right, FigLeft: f.left, FigRight: f.right}; }))`)
	if len(shown) == 0 {
		b.T.Errorf("%s: no chart %s", what, charts)
	}
	for _, boxes := range shown {
		if len(boxes) < least {
			b.T.Errorf("%s: %d axis labels shown", what, len(boxes))
		}
		for i, l := range boxes {
			if l.Size < 11 || l.H < 11 {
				b.T.Errorf("%s: the label %q is %.1f px (%.1f high): too small to read", what, l.Text, l.Size, l.H)
			}
			if l.Left < l.FigLeft || l.Right > l.FigRight {
				b.T.Errorf("%s: the label %q (%.0f to %.0f) leaves the chart (%.0f to %.0f)", what, l.Text, l.Left, l.Right, l.FigLeft, l.FigRight)
			}
			if i > 0 && l.Left < boxes[i-1].Right {
				b.T.Errorf("%s: the labels %q and %q overlap", what, boxes[i-1].Text, l.Text)
			}
		}
	}
}

// labelBox is an axis label as the page lays it out, and its figure's
// edges.
type labelBox struct {
	Text              string
	Size, H           float64
	Left, Right       float64
	FigLeft, FigRight float64
}

// edgeShades returns the median brightness (0 to 255) of the pixels a
// few CSS pixels inside the left and the right edge of an element's
// screenshot: darker where a shadow says the box scrolls.
func edgeShades(t *testing.T, shot []byte, what string) (left, right float64) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	r := img.Bounds()
	inset := r.Dx() / 80 // a few pixels at either width, inside the shadow's 1rem
	median := func(x int) float64 {
		var shades []float64
		for y := r.Min.Y + 2; y < r.Max.Y-2; y++ {
			c := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
			shades = append(shades, float64(c.Y))
		}
		slices.Sort(shades)
		return shades[len(shades)/2]
	}
	return median(r.Min.X + 3 + inset), median(r.Max.X - 4 - inset)
}
