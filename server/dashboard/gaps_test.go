package dashboard_test

import (
	"net/http"
	"net/url"
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
