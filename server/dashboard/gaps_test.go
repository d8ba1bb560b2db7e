package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/dashboard"
	"github.com/docsapi/docsapi-go/server/store"
)

// seedGaps stores a search of alpha that opened nothing and a page voted
// down, today.
func seedGaps(t *testing.T, d *dashEnv) {
	t.Helper()
	now := d.Clock.Now()
	if _, err := d.Store.AddSearches(t.Context(), store.SearchBatch{DailyQueryCap: 10, Searches: []store.Search{
		{ProjectID: "alpha", Query: "webhook retries", At: now}, {ProjectID: "alpha", Query: "webhook retries", At: now},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Store.AddFeedback(t.Context(), store.NewFeedback{ID: "fb1", ProjectID: "alpha", Path: "/guide/keys", Source: store.FeedbackSourceThumbsOnly, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

// nothingStored fails unless alpha has no job and no gap link.
func nothingStored(t *testing.T, d *dashEnv, after string) {
	t.Helper()
	links, err := d.Store.GapLinks(t.Context(), "alpha")
	if err != nil || len(links) != 0 {
		t.Fatalf("after %s: links %+v, %v", after, links, err)
	}
	jobs, err := d.Store.ListJobs(t.Context(), store.JobsQuery{JobFilter: store.JobFilter{ProjectID: "alpha"}, Limit: 5})
	if err != nil || len(jobs.Jobs) != 0 {
		t.Fatalf("after %s: jobs %+v, %v", after, jobs.Jobs, err)
	}
}

// A read-only session sees the gaps without the form, and its post is
// refused; a write session's post without its CSRF token, or from
// another site, is refused; nothing is stored by any of them. With the
// token, the selection becomes a job whose page links back to its gaps,
// and the gaps list the job.
func TestDashboardGapsJob(t *testing.T) {
	d := newDashEnv(t)
	seedGaps(t, d)
	const gapsPage, post = "/dashboard/projects/alpha/gaps", "/dashboard/projects/alpha/gaps/job"
	gap := "search:webhook retries"

	ro := d.browser(t)
	ro.signIn("ro")
	page, token := ro.page(gapsPage)
	if !strings.Contains(page, "webhook retries") || !strings.Contains(page, "/guide/keys") {
		t.Fatalf("the gaps page lacks the gaps:\n%s", page)
	}
	if strings.Contains(page, `id="gaps-form"`) || strings.Contains(page, `type="checkbox"`) {
		t.Errorf("a read-only session sees the job form")
	}
	if resp, _ := ro.post(post, token, "gap", gap); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a read-only session's post: %d, want 403", resp.StatusCode)
	}
	nothingStored(t, d, "a read-only session's post")

	rw := d.browser(t)
	rw.signIn("rw")
	page, token = rw.page(gapsPage)
	if !strings.Contains(page, `id="gaps-form"`) || !strings.Contains(page, `value="`+gap+`"`) {
		t.Fatalf("a write session has no form with the gap's checkbox:\n%s", page)
	}
	if resp, _ := rw.do(http.MethodPost, post, url.Values{"gap": {gap}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a post without the token: %d, want 403", resp.StatusCode)
	}
	if resp, _ := rw.do(http.MethodPost, post, url.Values{"csrf": {token}, "gap": {gap}}, "Sec-Fetch-Site", "cross-site"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site post: %d, want 403", resp.StatusCode)
	}
	if resp, body := rw.post(post, token, "gap", "search:nope"); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "nope") {
		t.Errorf("an unknown gap: %d, want 400 naming it", resp.StatusCode)
	}
	nothingStored(t, d, "refused posts")

	resp, _ := rw.do(http.MethodPost, post, url.Values{"csrf": {token}, "gap": {gap, "page:/guide/keys"}, "instructions": {"Be brief."}})
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/projects/alpha/jobs/job_") {
		t.Fatalf("making a job: %d to %q", resp.StatusCode, loc)
	}
	jobID := strings.TrimPrefix(loc, "/dashboard/projects/alpha/jobs/")
	job, _ := rw.page(loc)
	if !strings.Contains(job, `id="job-gaps"`) || !strings.Contains(job, gapsPage+"#"+dashboard.GapID(store.GapSearch, "webhook retries")) {
		t.Errorf("the job page does not link back to its gaps:\n%s", job)
	}
	page, _ = ro.page(gapsPage)
	if !strings.Contains(page, `href="/dashboard/projects/alpha/jobs/`+jobID+`"`) {
		t.Errorf("the gaps page does not list the job %s:\n%s", jobID, page)
	}
}

var idemField = regexp.MustCompile(`name="idempotency-key" value="([^"]+)"`)

// idemOf returns the idempotency key of the gaps page's job form.
func idemOf(t *testing.T, html string) string {
	t.Helper()
	m := idemField.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no idempotency key in the job form:\n%s", html)
	}
	return m[1]
}

// The job form carries a key of its own, new with each rendering: the
// same form sent twice (a double click, a retry) makes one job and sends
// both to its page; the key sent with another selection is refused; a
// form rendered again makes a new job.
func TestDashboardGapsJobOnce(t *testing.T) {
	d := newDashEnv(t)
	seedGaps(t, d)
	const gapsPage, post = "/dashboard/projects/alpha/gaps", "/dashboard/projects/alpha/gaps/job"
	rw := d.browser(t)
	rw.signIn("rw")
	page, token := rw.page(gapsPage)
	key := idemOf(t, page)
	again, _ := rw.page(gapsPage)
	if other := idemOf(t, again); other == key {
		t.Fatalf("two renderings of the form carry the same key %q", key)
	}
	form := url.Values{"csrf": {token}, "idempotency-key": {key}, "gap": {"search:webhook retries", "page:/guide/keys"}, "instructions": {"Be brief."}}
	first, _ := rw.do(http.MethodPost, post, form)
	second, _ := rw.do(http.MethodPost, post, form)
	loc := first.Header.Get("Location")
	if first.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/projects/alpha/jobs/job_") {
		t.Fatalf("the first post: %d to %q", first.StatusCode, loc)
	}
	wantRedirect(t, second, loc)
	jobs, err := d.Store.ListJobs(t.Context(), store.JobsQuery{JobFilter: store.JobFilter{ProjectID: "alpha"}, Limit: 5})
	if err != nil || len(jobs.Jobs) != 1 {
		t.Fatalf("after the same form twice: jobs %+v, %v; want one", jobs.Jobs, err)
	}
	links, err := d.Store.GapLinks(t.Context(), "alpha")
	if err != nil || len(links) != 2 {
		t.Fatalf("after the same form twice: links %+v, %v; want the two gaps once", links, err)
	}

	changed := url.Values{"csrf": {token}, "idempotency-key": {key}, "gap": {"search:webhook retries"}}
	if resp, body := rw.do(http.MethodPost, post, changed); resp.StatusCode != http.StatusConflict {
		t.Errorf("the key with another selection: %d, want 409\n%s", resp.StatusCode, body)
	}
	if resp, _ := rw.do(http.MethodPost, post, url.Values{"csrf": {token}, "idempotency-key": {"a key"}, "gap": {"search:webhook retries"}}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed key: %d, want 400", resp.StatusCode)
	}
	form.Set("idempotency-key", idemOf(t, again))
	if resp, _ := rw.do(http.MethodPost, post, form); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") == loc {
		t.Errorf("another rendering's form: %d to %q, want a new job", resp.StatusCode, resp.Header.Get("Location"))
	}
	if jobs, err := d.Store.ListJobs(t.Context(), store.JobsQuery{JobFilter: store.JobFilter{ProjectID: "alpha"}, Limit: 5}); err != nil || len(jobs.Jobs) != 2 {
		t.Errorf("jobs %+v, %v; want two", jobs.Jobs, err)
	}
}
