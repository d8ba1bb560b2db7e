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

// The searches and feedback pages and the jobs list's prompts in a real
// browser (servertest.Tab), at a desktop's and a phone's width, with their
// numbers checked against the store's.

// shownEntries lists the IDs of the feedback entries the tab shows.
func shownEntries(b *servertest.Tab) []string {
	return servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#feedback li[data-id]')).map(li => li.dataset.id)`)
}

func TestDashboardPagesInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	d := newDashEnv(t)
	ctx := context.Background()
	today := d.Clock.Now().UTC().Truncate(24 * time.Hour)
	d.addSearches(t, today, "install", 40, 31, "/guide/install")
	d.addSearches(t, today.AddDate(0, 0, -1), "api keys", 22, 15, "/reference/keys")
	d.addSearches(t, today.AddDate(0, 0, -2), "rate limits", 17, 0, "")
	d.addSearches(t, today.AddDate(0, 0, -2), "webhook retries", 9, 0, "")
	d.addSearches(t, today.AddDate(0, 0, -5), "sso with okta", 4, 0, "")
	d.addSearches(t, today.AddDate(0, 0, -6), "configure the proxy", 12, 5, "/guide/configure")
	d.addSearches(t, today.AddDate(0, 0, -10), "install", 14, 3, "/guide/install") // before the last 7 days
	entries := d.addFeedback(t, 12)
	d.createJob(t, "Document the --verbose flag of the CLI\nwith an example for each mode.")
	d.Clock.Advance(10 * time.Minute)
	d.createJob(t, "Rewrite the configuration guide so that every option of the server's configuration file is listed with its default value, its unit, and an example")

	b := servertest.NewTab(t, browser, d.url)
	signIn(b, d.Keys["rw"], "#views-chart")

	// Searches, from the navigation.
	b.Do("opening the searches", chromedp.Click(chromedp.CSS(`nav a[href$="/searches"]`)), chromedp.WaitVisible(chromedp.ID("top-searches")))
	q := store.SearchesQuery{ProjectID: "alpha", From: today.AddDate(0, 0, -29), To: today.AddDate(0, 0, 1), Limit: 25}
	top, err := d.Store.QuerySearches(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	q.Unclicked = true
	gaps, err := d.Store.QuerySearches(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Text("#total-searches"); got != count(top.Total) {
		t.Errorf("total searches %s, the store says %d", got, top.Total)
	}
	rows := b.Rows("#top-searches")
	if len(rows) != len(top.Rows) {
		t.Fatalf("%d top queries, the store has %d", len(rows), len(top.Rows))
	}
	for i, r := range top.Rows {
		if want := []string{r.Query, count(r.Hits), count(r.Clicks), fmt.Sprintf("%.1f %%", float64(r.Clicks)*100/float64(r.Hits))}; strings.Join(rows[i][:4], "|") != strings.Join(want, "|") {
			t.Errorf("top query %d is %q, the store says %q", i, rows[i], want)
		}
	}
	rows = b.Rows("#content-gaps")
	if len(rows) != len(gaps.Rows) || len(rows) != 3 {
		t.Fatalf("%d gaps, the store has %d", len(rows), len(gaps.Rows))
	}
	for i, r := range gaps.Rows {
		if rows[i][0] != r.Query || rows[i][1] != count(r.Hits) {
			t.Errorf("gap %d is %q, the store says %s (%d)", i, rows[i], r.Query, r.Hits)
		}
	}
	b.ScreenshotBoth("01-searches")

	// A preset, clicked: the last 7 days, against the 7 before.
	b.Do("picking 7 days", chromedp.Click(chromedp.ID("period-7d")), chromedp.WaitVisible(chromedp.CSS(`#period-7d[aria-current="page"]`)))
	week, err := d.Store.QuerySearches(ctx, store.SearchesQuery{ProjectID: "alpha", From: today.AddDate(0, 0, -6), To: today.AddDate(0, 0, 1), Limit: 25})
	if err != nil {
		t.Fatal(err)
	}
	before, err := d.Store.QuerySearches(ctx, store.SearchesQuery{ProjectID: "alpha", From: today.AddDate(0, 0, -13), To: today.AddDate(0, 0, -6), Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if week.Total == top.Total || before.Total == 0 {
		t.Fatalf("the store has %d searches in the last 7 days, %d in 30, %d in the 7 before: nothing to tell them apart", week.Total, top.Total, before.Total)
	}
	if got, want := b.Text("#total-searches"), count(week.Total); got != want {
		t.Errorf("7 days: %s searches, the store says %s", got, want)
	}
	if got, want := b.Text("#change-searches"), wantChange(week.Total, before.Total, "previous 7 days"); got != want {
		t.Errorf("7 days: the change says %q, the store %q", got, want)
	}
	if rows := b.Rows("#top-searches"); len(rows) != len(week.Rows) || rows[0][0] != week.Rows[0].Query || rows[0][1] != count(week.Rows[0].Hits) {
		t.Errorf("7 days: the top queries %q, the store's %+v", rows, week.Rows)
	}
	b.ScreenshotBoth("01-searches-7-days")

	// Feedback: the store's newest entries and its per-page thumbs.
	b.Do("opening the feedback", chromedp.Click(chromedp.CSS(`nav a[href$="/feedback"]`)), chromedp.WaitVisible(chromedp.ID("feedback")))
	all := d.storeFeedback(t, store.FeedbackQuery{Limit: 25})
	if got := shownEntries(b); strings.Join(got, ",") != strings.Join(feedbackIDs(all.Entries), ",") {
		t.Errorf("the page shows %v, the store has %v", got, feedbackIDs(all.Entries))
	}
	counts, err := d.Store.FeedbackByPage(ctx, store.FeedbackByPageQuery{FeedbackFilter: store.FeedbackFilter{ProjectID: "alpha"}, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	thumbs := b.Rows("#thumbs")
	if len(thumbs) != len(counts.Rows) {
		t.Fatalf("the thumbs list %d pages, the store %d", len(thumbs), len(counts.Rows))
	}
	for i, p := range counts.Rows {
		if want := []string{p.Path, count(p.ThumbsUp), count(p.ThumbsDown)}; strings.Join(thumbs[i][:3], "|") != strings.Join(want, "|") {
			t.Errorf("thumbs of %s: %q, the store says %q", p.Path, thumbs[i], want)
		}
	}
	b.ScreenshotBoth("02-feedback")

	// Filter by source and page through the form, then move an entry on.
	b.Do("filtering",
		chromedp.SetValue(chromedp.ID("source"), "contextual"),
		chromedp.SetValue(chromedp.ID("path"), entries[0].Path),
		chromedp.Click(chromedp.ID("filter")),
		chromedp.WaitVisible(chromedp.ID("clear-filters")))
	sel := d.storeFeedback(t, store.FeedbackQuery{Limit: 25, FeedbackFilter: store.FeedbackFilter{Source: store.FeedbackSourceContextual, Path: entries[0].Path}})
	if got := shownEntries(b); len(got) == 0 || strings.Join(got, ",") != strings.Join(feedbackIDs(sel.Entries), ",") {
		t.Fatalf("filtered, the page shows %v, the store selects %v", got, feedbackIDs(sel.Entries))
	}
	id := sel.Entries[0].ID
	b.Do("resolving "+id,
		chromedp.SetValue(chromedp.ID("move-"+id), "resolved"),
		chromedp.Click(chromedp.CSS(`#entry-`+id+` .set-status button`)),
		chromedp.WaitVisible(chromedp.CSS(`#entry-`+id+` .status-resolved`)))
	if got := d.storeFeedback(t, store.FeedbackQuery{Limit: 1, FeedbackFilter: store.FeedbackFilter{Path: entries[0].Path, Source: store.FeedbackSourceContextual}}).Entries[0]; got.ID != id || got.Status != store.FeedbackStatusResolved {
		t.Errorf("after the form, the store has %s %s", got.ID, got.Status)
	}
	if !b.Present("#clear-filters") || servertest.Eval[string](b, `document.getElementById('path').value`) != entries[0].Path {
		t.Error("the status change did not come back to the filtered page")
	}
	b.ScreenshotBoth("03-feedback-filtered")

	// The jobs list's prompt lines are the store's.
	b.Do("opening the jobs", chromedp.Click(chromedp.CSS(`nav a[href$="/jobs"]`)), chromedp.WaitVisible(chromedp.ID("jobs")))
	listed, err := d.Store.ListJobs(ctx, store.JobsQuery{JobFilter: store.JobFilter{ProjectID: "alpha"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	jobs := b.Rows("#jobs")
	if len(jobs) != len(listed.Jobs) {
		t.Fatalf("the jobs list has %d rows, the store %d", len(jobs), len(listed.Jobs))
	}
	for i, j := range listed.Jobs {
		if jobs[i][0] != j.ID || jobs[i][5] != j.Summary || j.Summary == "" {
			t.Errorf("job row %d is %q, the store lists %s with %q", i, jobs[i], j.ID, j.Summary)
		}
	}
	if jobs[1][5] != "Document the --verbose flag of the CLI" || !strings.HasSuffix(jobs[0][5], "…") {
		t.Errorf("the prompt lines: %q, %q", jobs[1][5], jobs[0][5])
	}
	b.ScreenshotBoth("04-jobs-prompts")

	// A read key: the same entries, no form that posts but the sign-out.
	b.Do("signing out", chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("login-notice")))
	signIn(b, d.Keys["ro"], "#views-chart")
	b.Open("/dashboard/projects/alpha/feedback", "#feedback")
	if got := shownEntries(b); strings.Join(got, ",") != strings.Join(feedbackIDs(all.Entries), ",") {
		t.Errorf("the read key sees %v", got)
	}
	posts := servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('form')).filter(f => f.method === 'post').map(f => new URL(f.action).pathname)`)
	if len(posts) != 1 || posts[0] != "/dashboard/logout" || b.Present(".set-status") {
		t.Errorf("a read key's feedback page has forms that post to %q, want only the sign-out", posts)
	}
	b.ScreenshotBoth("05-feedback-read-key")
}
