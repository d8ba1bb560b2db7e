package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docsapi/docsapi-go/server/store"
)

// The dashboard in a real browser: chromedp driving Chromium (Debian's
// chromium, which .ci/test-env.sh installs). The test skips only where no
// browser is found, and .ci/test-env.sh sets DOCSAPI_TEST_BROWSER=required
// wherever it installed one, which makes a skip a failure.
//
// Screenshots of every page go to the folder DOCSAPI_TEST_SCREENSHOTS
// names (.ci/run sets it and checks them), else to the test's artifact
// folder (go test -artifacts on Go 1.26).

// browserNames are the programs looked for on PATH, in order;
// DOCSAPI_TEST_BROWSER_PATH names one elsewhere.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

func findBrowser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOCSAPI_TEST_BROWSER_PATH"); p != "" {
		return p
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no browser: none of %s is on PATH, and DOCSAPI_TEST_BROWSER_PATH is not set", strings.Join(browserNames, ", "))
	if os.Getenv("DOCSAPI_TEST_BROWSER") == "required" {
		t.Fatal(msg + " (DOCSAPI_TEST_BROWSER=required)")
	}
	t.Skip(msg)
	return ""
}

// screenshotDir is where the test's screenshots go.
func screenshotDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("DOCSAPI_TEST_SCREENSHOTS")
	if root == "" {
		return artifactDir(t)
	}
	// Stat the folder before writing into it: go test then keys its cached
	// result on the folder (one inside the module, as .ci/run's is), so a
	// run after the folder was removed runs the test again instead of
	// reporting a result whose screenshots are gone.
	os.Stat(root)
	dir := filepath.Join(root, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tab is a browser tab on the dashboard.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string // screenshots
}

func newTab(t *testing.T, browser, base string) *tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.WindowSize(1280, 900),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox (CI runs as
		// root); the pages it opens are the test's own.
		opts = append(opts, chromedp.NoSandbox)
	}
	// Every wait below ends with this context: a page that never shows
	// what the test waits for fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelTab)
	return &tab{t: t, ctx: ctx, base: base, dir: screenshotDir(t)}
}

// do runs steps, failing the test on an error.
func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open goes to path and waits for sel.
func (b *tab) open(path, sel string) {
	b.t.Helper()
	b.do("opening "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// text returns the text of the element sel.
func (b *tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// eval returns the value of a script run in the page, as DevTools runs
// it (the pages' policy forbids scripts of their own).
func eval[T any](b *tab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// rows returns the text of the cells of the rows of a table's body.
func (b *tab) rows(table string) [][]string {
	b.t.Helper()
	return eval[[][]string](b, `Array.from(document.querySelectorAll(`+"`"+table+` tbody tr`+"`"+`)).
		filter(r => r.cells.length > 1).
		map(r => Array.from(r.cells).map(c => c.textContent.trim()))`)
}

// present reports whether the page has an element sel.
func (b *tab) present(sel string) bool {
	b.t.Helper()
	return eval[bool](b, `document.querySelector(`+"`"+sel+"`"+`) !== null`)
}

// screenshot saves the whole page as name.png.
func (b *tab) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// signIn fills the sign-in form from the keyboard alone: Tab past the
// skip link and the header's link to the key's field, type, Enter.
func (b *tab) signIn(secret, waitFor string) {
	b.t.Helper()
	b.open("/dashboard/login", "#key")
	b.do("tabbing to the key's field", chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"))
	if id := eval[string](b, `document.activeElement.id`); id != "key" {
		b.t.Fatalf("three tabs into the sign-in page, the focus is on %q, not the key's field", id)
	}
	b.do("signing in", chromedp.KeyEvent(secret), chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(waitFor)))
}

func TestDashboardInBrowser(t *testing.T) {
	browser := findBrowser(t)
	d := newDashEnv(t)
	ctx := context.Background()
	today := d.clock.Now().Truncate(24 * time.Hour)
	var counts []store.ViewCount
	for i, path := range []string{"/guide/install", "/guide/configure", "/reference/api", "/blog/launch"} {
		for day := range 30 {
			counts = append(counts, store.ViewCount{
				ProjectID: "alpha", Path: path, Hour: today.AddDate(0, 0, -day).Add(time.Duration(i*5) * time.Hour),
				Human: int64((day*7+i*13)%40 + 3), AI: int64((day*3+i*5)%17 + i), Bot: 2,
			})
		}
	}
	if err := d.store.AddViews(ctx, counts); err != nil {
		t.Fatal(err)
	}
	for day := range 30 {
		d.addVisitors(t, "/guide/install", today.AddDate(0, 0, -day), day*5, 8, 3)
	}
	failed := d.createJob(t, "Document the --verbose flag of the CLI")
	d.failJob(t, "git push: the branch docs-agent/"+failed+" is protected")
	d.clock.Advance(90 * time.Minute)
	active := d.createJob(t, "Fix the broken link on the install page.\nKeep the rest as it is.")

	b := newTab(t, browser, d.url)

	// A wrong key: the form says so, and no session starts.
	b.signIn("mint_this-is-not-a-key", "#login-error")
	if got := b.text("#login-error"); !strings.Contains(got, "invalid API key") {
		t.Errorf("the sign-in error says %q", got)
	}
	b.screenshot("01-sign-in-refused")

	// The write key, from the keyboard: the overview.
	b.signIn(d.keys["rw"], "#views-chart")
	from, to := today.AddDate(0, 0, -29), today.AddDate(0, 0, 1)
	views, err := d.store.QueryViews(ctx, store.ViewsQuery{ProjectID: "alpha", From: from, To: to, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	series, err := d.store.ViewSeries(ctx, store.SeriesQuery{ProjectID: "alpha", From: from, To: to, Interval: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]int64{"#total-human": views.Totals.Human, "#total-ai": views.Totals.AI, "#total-views": views.Totals.Human + views.Totals.AI} {
		if got := b.text(sel); got != count(want) {
			t.Errorf("%s shows %s, the store says %d", sel, got, want)
		}
	}
	visitors, err := d.store.QueryVisitors(ctx, store.ViewsQuery{ProjectID: "alpha", From: from, To: to, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.text("#total-visitors"); got != count(visitors.Totals.Total) || visitors.Totals.Total == 0 {
		t.Errorf("unique visitors show %s, the store says %d", got, visitors.Totals.Total)
	}
	rows := b.rows("#series")
	bars := eval[[]string](b, `Array.from(document.querySelectorAll('#views-chart .bar title')).map(t => t.textContent)`)
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
	top := b.rows("#top-pages")
	if len(top) != len(views.Rows) || top[0][0] != views.Rows[0].Path {
		t.Errorf("top pages %q, the store's %v", top, views.Rows)
	}
	b.screenshot("02-overview")

	// A narrower range through the picker's form. The wait is for the new
	// page: only its server-written field carries the week's first day as
	// an attribute (the old page's field has it only as a property).
	weekFrom := today.AddDate(0, 0, -6).Format(time.DateOnly)
	b.do("picking a week",
		chromedp.SetValue(chromedp.ID("from"), weekFrom),
		chromedp.Click(chromedp.ID("show-range")),
		chromedp.WaitVisible(chromedp.CSS(`input#from[value="`+weekFrom+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#totals-heading`)))
	if n := len(b.rows("#series")); n != 7 {
		t.Errorf("a week's chart has %d rows", n)
	}

	// On a phone: nothing wider than the screen.
	b.do("a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	b.open("/dashboard/projects/alpha/", "#views-chart")
	if wide := eval[bool](b, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the overview is wider than a phone's screen")
	}
	b.screenshot("03-overview-phone")
	b.do("a desktop's screen", chromedp.EmulateViewport(1280, 900))

	// The jobs, then the failed one, then archive it.
	b.open("/dashboard/projects/alpha/jobs", "#jobs")
	jobs := b.rows("#jobs")
	if len(jobs) != 2 || jobs[1][0] != failed || jobs[1][1] != "failed" {
		t.Errorf("the jobs list: %q", jobs)
	}
	b.screenshot("04-jobs")
	b.do("opening the failed job", chromedp.Click(chromedp.CSS(`#jobs a[href$="/`+failed+`"]`)), chromedp.WaitVisible(chromedp.ID("prompts")))
	if got := b.text("#failure-reason"); !strings.Contains(got, "is protected") {
		t.Errorf("the failure reason shows %q", got)
	}
	if got := b.text("#prompts"); !strings.Contains(got, "Document the --verbose flag") {
		t.Errorf("the prompt history shows %q", got)
	}
	b.screenshot("05-job")
	b.do("archiving", chromedp.Click(chromedp.ID("archive")), chromedp.WaitVisible(chromedp.ID("job-archived")))
	if got := b.text("#job-status"); got != "archived" {
		t.Errorf("after archiving, the page says %q", got)
	}
	if job, err := d.srv.Job(ctx, "alpha", failed); err != nil || job.Status != store.JobStatusArchived {
		t.Errorf("after archiving, the store has the job %v (%v)", job.Status, err)
	}
	b.screenshot("06-job-archived")

	// Sign out; then the read key sees no failure reason, and on the page
	// of a job a writer could archive, no archive button: no form that
	// posts but the sign-out.
	b.do("signing out", chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("login-notice")))
	b.screenshot("07-signed-out")
	b.signIn(d.keys["ro"], "#views-chart")
	b.open("/dashboard/projects/alpha/jobs/"+failed, "#prompts")
	if b.present("#archive") || b.present("#failure-reason") {
		t.Error("a read key's page shows the archive button or the failure reason")
	}
	b.open("/dashboard/projects/alpha/jobs/"+active, "#prompts")
	if got := b.text("#job-status"); got != "active" {
		t.Errorf("the active job's page says %q", got)
	}
	posts := eval[[]string](b, `Array.from(document.querySelectorAll('form')).filter(f => f.method === 'post').map(f => new URL(f.action).pathname)`)
	if b.present("#archive") || len(posts) != 1 || posts[0] != "/dashboard/logout" {
		t.Errorf("a read key's page of an active job has forms that post to %q, want only the sign-out", posts)
	}
	b.screenshot("08-job-read-key")

	// Revoking the key ends its session at the next page.
	d.revoke(t, "dashboards")
	b.open("/dashboard/projects/alpha/", "#login-notice")
	if got := b.text("#login-notice"); !strings.Contains(got, "revoked") {
		t.Errorf("after the key's revocation, the page says %q", got)
	}
	b.screenshot("09-session-ended")
	// Nothing of a key stayed in the browser's reach.
	if stored := eval[string](b, `document.cookie + JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + location.href`); strings.Contains(stored, "mint_") {
		t.Errorf("the browser's storage or the URL holds a key: %s", stored)
	}
}
