package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// jobsPage reads a page of the job list that must answer 200.
func (e *env) jobsPage(key, query string) docsapi.JobsPage {
	e.T.Helper()
	resp, body := e.Do(key, "GET", "/v2/agent/alpha/jobs"+query, "")
	if resp.StatusCode != http.StatusOK {
		e.T.Fatalf("jobs%s: %d %s", query, resp.StatusCode, body)
	}
	var page docsapi.JobsPage
	if err := json.Unmarshal(body, &page); err != nil {
		e.T.Fatalf("jobs%s: %v", query, err)
	}
	return page
}

// createJobs creates n jobs of alpha, a second apart, and returns their
// IDs, oldest first.
func (e *env) createJobs(n int) []string {
	e.T.Helper()
	var ids []string
	for range n {
		resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"Document it"}`)
		if resp.StatusCode != http.StatusCreated {
			e.T.Fatalf("create: %d %s", resp.StatusCode, body)
		}
		var j docsapi.Job
		if err := json.Unmarshal(body, &j); err != nil {
			e.T.Fatal(err)
		}
		ids = append(ids, j.ID)
		e.Clock.Advance(time.Second)
	}
	return ids
}

func jobIDsOf(jobs []docsapi.Job) []string {
	ids := []string{}
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

// The list pages through every job once, newest first, while jobs are
// created between pages; a read key may list; the jobs are shown as Get
// shows them.
func TestJobListPagesNewestFirst(t *testing.T) {
	e := newEnv(t)
	ids := e.createJobs(5)
	var seen []string
	query := "?limit=2"
	for range 5 {
		page := e.jobsPage("ro", query)
		seen = append(seen, jobIDsOf(page.Jobs)...)
		e.createJobs(1)
		if !page.HasMore {
			if page.NextCursor != "" {
				t.Errorf("last page: nextCursor %q, want null", page.NextCursor)
			}
			break
		}
		query = "?limit=2&cursor=" + url.QueryEscape(page.NextCursor)
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(seen, want) {
		t.Fatalf("jobs seen %v, want %v", seen, want)
	}
	_, body := e.Do("ro", "GET", "/v2/agent/alpha/job/"+ids[0], "")
	var got docsapi.Job
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	all := e.jobsPage("ro", "?limit=100")
	if last := all.Jobs[len(all.Jobs)-1]; last != got {
		t.Errorf("the oldest job listed as %+v, retrieved as %+v", last, got)
	}
}

// A client whose create answer was lost finds its job by the time it made
// the request, and the status filter finds what still runs.
func TestJobListFindsAJobByTimeAndStatus(t *testing.T) {
	e := newEnv(t)
	ids := e.createJobs(3) // at 09:00:00, :01 and :02
	if _, err := e.Server.ArchiveJob(t.Context(), "alpha", ids[1]); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string][]string{
		"?dateFrom=2026-08-14T09:00:01Z&dateTo=2026-08-14T09:00:02Z": {ids[1]},
		"?dateFrom=2026-08-14":                         {ids[2], ids[1], ids[0]},
		"?dateTo=2026-08-14":                           {},
		"?status=archived":                             {ids[1]},
		"?status=active,completed":                     {ids[2], ids[0]},
		"?status=failed":                               {},
		"?status=active&dateFrom=2026-08-14T09:00:01Z": {ids[2]},
	} {
		if got := jobIDsOf(e.jobsPage("ro", query).Jobs); !slices.Equal(got, want) {
			t.Errorf("%s: jobs %v, want %v", query, got, want)
		}
	}
	// Another project's key sees only its project's jobs, none here.
	resp, body := e.Do("beta", "GET", "/v2/agent/beta/jobs", "")
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"jobs":[],"nextCursor":null,"hasMore":false}` {
		t.Errorf("beta's jobs: %d %s", resp.StatusCode, body)
	}
}

// Bad input answers 400 with one message naming every parameter at fault;
// a cursor changed, or replayed on other filters or another project, is
// refused; the key's project and scope rules are those of getting a job.
func TestJobListRefusals(t *testing.T) {
	e := newEnv(t)
	e.createJobs(3)
	for query, want := range map[string]string{
		"?limit=0": `invalid query parameters: limit must be an integer from 1 to 100, got "0"`,
		"?limit=101&status=paused&dateFrom=yesterday": `invalid query parameters: dateFrom "yesterday" is neither a date nor an ISO 8601 date-time: send, for example, 2026-10-24, 2026-10-24T09:30:00Z, 2026-10-24T11:30+02:00 or 2026-10-24T09:30:00.5 (no zone means UTC); ` +
			`status must be a comma-separated list of active, completed, archived, failed, got "paused"; limit must be an integer from 1 to 100, got "101"`,
		"?dateFrom=2026-08-15&dateTo=2026-08-14": `invalid query parameters: dateFrom (2026-08-15T00:00:00Z) is after dateTo (2026-08-14T00:00:00Z)`,
		"?cursor=bogus":                          "cursor is not valid for this project and query: pass the nextCursor of a page of the same export with the same filters, unchanged",
	} {
		resp, body := e.Do("ro", "GET", "/v2/agent/alpha/jobs"+query, "")
		if resp.StatusCode != http.StatusBadRequest || servertest.ErrorOf(t, body) != want {
			t.Errorf("%s: %d %s, want 400 %q", query, resp.StatusCode, body, want)
		}
	}
	cursor := url.QueryEscape(e.jobsPage("ro", "?limit=1&status=active").NextCursor)
	if cursor == "" {
		t.Fatal("no cursor after the first of three jobs")
	}
	for _, query := range []string{"?limit=1&cursor=" + cursor, "?status=active,failed&cursor=" + cursor} {
		if resp, body := e.Do("ro", "GET", "/v2/agent/alpha/jobs"+query, ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", query, resp.StatusCode, body)
		}
	}
	if got := e.jobsPage("ro", "?limit=5&status=active&cursor="+cursor); len(got.Jobs) != 2 {
		t.Errorf("the cursor with its own filters and another limit: %d jobs, want 2", len(got.Jobs))
	}
	e.AddKey("both", server.KeyParams{Name: "both", Projects: []string{"alpha", "beta"}, Scopes: []store.Scope{store.ScopeRead}})
	if resp, body := e.Do("both", "GET", "/v2/agent/beta/jobs?status=active&cursor="+cursor, ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("alpha's cursor on beta: %d %s, want 400", resp.StatusCode, body)
	}
	for key, want := range map[string]int{"": http.StatusUnauthorized, "beta": http.StatusForbidden} {
		if resp, _ := e.Do(key, "GET", "/v2/agent/alpha/jobs", ""); resp.StatusCode != want {
			t.Errorf("key %q: %d, want %d", key, resp.StatusCode, want)
		}
	}
}
