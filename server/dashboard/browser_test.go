package dashboard_test

import (
	"context"
	"fmt"
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
