package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// jobsOf is a query for every job of a project, on one large page.
func jobsOf(projectID string) store.JobsQuery {
	return store.JobsQuery{JobFilter: store.JobFilter{ProjectID: projectID}, Limit: 1000}
}

// mustListJobs runs a query that must succeed, and checks the conventions
// of what it returns: a list never nil, jobs without prompts, times in UTC
// to the microsecond.
func mustListJobs(t *testing.T, s store.Store, q store.JobsQuery) store.JobsPage {
	t.Helper()
	page, err := s.ListJobs(t.Context(), q)
	must(t, "ListJobs", err)
	if page.Jobs == nil {
		t.Errorf("ListJobs: Jobs is nil, want an empty, non-nil slice")
	}
	for _, j := range page.Jobs {
		if len(j.Prompts) != 0 {
			t.Errorf("ListJobs: job %s carries %d prompts, want none", j.ID, len(j.Prompts))
		}
		checkTimes(t, "ListJobs", jobTimes(j)...)
	}
	return page
}

// jobIDs lists the IDs of jobs.
func jobIDs(jobs []store.Job) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

// listed is j as ListJobs returns it: without its prompts, with the
// summary of the first.
func listed(j store.Job) store.Job {
	j.Summary = store.PromptSummary(j.Prompts[0].Text)
	j.Prompts = nil
	return j
}

func testJobList(t *testing.T, open opener) {
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
	}
	runAll(t, open, []subtest{
		{"ListIsNewestFirstWithTiesByIDAndEveryFieldButPrompts", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// j2 and j10 share an instant: the ID orders them, by bytes
			// ("j2" after "j10"), newest first meaning the larger first.
			var want []store.Job
			for _, c := range []struct {
				id string
				at time.Duration
			}{{"j1", 0}, {"j10", time.Minute}, {"j2", time.Minute}, {"j3", 2 * time.Minute}} {
				j := mustCreateJob(t, s, NewJob("p1", c.id, At(c.at).In(elsewhere)))
				want = append([]store.Job{listed(j)}, want...)
			}
			mustAddPrompt(t, s, "p1", "j1", "And the FAQ", At(3*time.Minute))
			want[len(want)-1] = listed(mustJob(t, s, "p1", "j1"))
			mustCreateJob(t, s, NewJob("p2", "k1", At(time.Minute)))
			page := mustListJobs(t, s, jobsOf("p1"))
			diff(t, "ListJobs p1", []string{"j3", "j2", "j10", "j1"}, jobIDs(page.Jobs))
			diff(t, "ListJobs p1 jobs", store.JobsPage{Jobs: want}, page)
		}},
		{"SummaryIsTheFirstPromptsFirstLineInItsFirstCharacters", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// The scan counts characters, not bytes: the 1000 characters
			// of "long" end with "héllo", its first 1000 bytes in "héll".
			prompts := map[string]string{
				"lines":  "\n  \r\n Fix   the\tinstall guide \r\nThen the FAQ",
				"long":   strings.Repeat(" ", store.SummaryScan-5) + "héllo wörld",
				"wide":   strings.Repeat("ü", store.MaxSummaryLength+1),
				"blank":  " \n\t\n",
				"follow": "First",
			}
			want := map[string]string{
				"lines":  "Fix the install guide",
				"long":   "héllo",
				"wide":   strings.Repeat("ü", store.MaxSummaryLength-1) + "…",
				"blank":  "",
				"follow": "First",
			}
			for id, text := range prompts {
				n := NewJob("p1", id, At(0))
				n.Prompt = text
				mustCreateJob(t, s, n)
			}
			mustAddPrompt(t, s, "p1", "follow", "Second", At(time.Minute))
			got := map[string]string{}
			for _, j := range mustListJobs(t, s, jobsOf("p1")).Jobs {
				got[j.ID] = j.Summary
			}
			diff(t, "summaries", want, got)
			for id, text := range prompts {
				if id != "follow" && store.PromptSummary(text) != want[id] {
					t.Errorf("PromptSummary(prompt of %s) = %q, want %q", id, store.PromptSummary(text), want[id])
				}
			}
		}},
		{"PagesNeverRepeatOrSkipWhileJobsArrive", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			for i, at := range []time.Duration{0, time.Minute, time.Minute, time.Minute, 2 * time.Minute, 3 * time.Minute} {
				mustCreateJob(t, s, NewJob("p1", fmt.Sprintf("j%d", i), At(at)))
			}
			q := jobsOf("p1")
			q.Limit = 2
			var seen []string
			for page := 0; ; page++ {
				p := mustListJobs(t, s, q)
				seen = append(seen, jobIDs(p.Jobs)...)
				// Newer jobs arrive between pages, one of them at the
				// instant of the page's last job with a larger ID: both
				// sort before the cursor, so the pages to come are the
				// same.
				mustCreateJob(t, s, NewJob("p1", fmt.Sprintf("new%d", page), At(time.Hour+time.Duration(page)*time.Minute)))
				if len(p.Jobs) > 0 {
					last := p.Jobs[len(p.Jobs)-1]
					mustCreateJob(t, s, NewJob("p1", last.ID+"z", last.CreatedAt))
				}
				if !p.HasMore {
					if len(p.Jobs) == 0 {
						t.Errorf("page %d: empty with HasMore false; the previous page's HasMore should have been false", page)
					}
					break
				}
				if page > 5 {
					t.Fatalf("more pages than jobs: %v", seen)
				}
				k := p.Jobs[len(p.Jobs)-1].Key()
				q.After = &k
			}
			diff(t, "jobs seen, in order", []string{"j5", "j4", "j3", "j2", "j1", "j0"}, seen)
			// A place that no job holds still orders.
			q.After = &store.JobKey{CreatedAt: At(time.Minute), ID: "j25"}
			q.Limit = 10
			diff(t, "after a place between j2z and j2", []string{"j2", "j1", "j0z", "j0"}, jobIDs(mustListJobs(t, s, q).Jobs))
		}},
		{"FiltersSelectByStatusAndHalfOpenRange", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			mustCreateJob(t, s, NewJob("p1", "active", At(0)))
			mustCreateJob(t, s, NewJob("p1", "done", At(time.Hour)))
			mustCreateJob(t, s, NewJob("p1", "gone", At(2*time.Hour)))
			mustCreateJob(t, s, NewJob("p2", "other", At(time.Hour)))
			// Claims take the oldest ready job first: active, then done.
			mustClaim(t, s, "w1", At(3*time.Hour), "active")
			mustClaim(t, s, "w2", At(3*time.Hour), "done")
			mustFinish(t, s, store.Finish{JobID: "done", Owner: "w2", At: At(4 * time.Hour), Outcome: store.Completed, Handled: 1})
			_, err := s.ArchiveJob(t.Context(), "p1", "gone", At(4*time.Hour))
			must(t, "ArchiveJob", err)
			for _, tc := range []struct {
				name string
				f    store.JobFilter
				want []string
			}{
				{"all", store.JobFilter{}, []string{"gone", "done", "active"}},
				{"one status", store.JobFilter{Statuses: []store.JobStatus{store.JobStatusCompleted}}, []string{"done"}},
				{"two statuses", store.JobFilter{Statuses: []store.JobStatus{store.JobStatusArchived, store.JobStatusActive}}, []string{"gone", "active"}},
				{"a status no job has", store.JobFilter{Statuses: []store.JobStatus{store.JobStatusFailed}}, []string{}},
				{"from is inclusive", store.JobFilter{From: At(time.Hour)}, []string{"gone", "done"}},
				{"to is exclusive", store.JobFilter{To: At(2 * time.Hour)}, []string{"done", "active"}},
				{"a nanosecond past", store.JobFilter{From: At(time.Hour + time.Nanosecond)}, []string{"gone"}},
				{"a nanosecond before", store.JobFilter{To: At(2*time.Hour - time.Nanosecond)}, []string{"done", "active"}},
				{"empty range", store.JobFilter{From: At(time.Hour), To: At(time.Hour)}, []string{}},
				{"everything", store.JobFilter{From: At(time.Hour), To: At(3 * time.Hour),
					Statuses: []store.JobStatus{store.JobStatusArchived}}, []string{"gone"}},
			} {
				q := jobsOf("p1")
				q.JobFilter = tc.f
				q.ProjectID = "p1"
				diff(t, tc.name, tc.want, jobIDs(mustListJobs(t, s, q).Jobs))
			}
			diff(t, "p2", []string{"other"}, jobIDs(mustListJobs(t, s, jobsOf("p2")).Jobs))
			diff(t, "unknown project", []string{}, jobIDs(mustListJobs(t, s, jobsOf("p3")).Jobs))
		}},
		{"PagesReportHasMoreExactlyAndEmptyPagesAreEmpty", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			diff(t, "a project without jobs", store.JobsPage{Jobs: []store.Job{}}, mustListJobs(t, s, jobsOf("p1")))
			for i := range 3 {
				mustCreateJob(t, s, NewJob("p1", fmt.Sprintf("j%d", i), At(time.Duration(i)*time.Minute)))
			}
			for limit, want := range map[int]bool{2: true, 3: false, 4: false} {
				q := jobsOf("p1")
				q.Limit = limit
				if got := mustListJobs(t, s, q).HasMore; got != want {
					t.Errorf("limit %d of 3 jobs: HasMore = %v, want %v", limit, got, want)
				}
			}
			q := jobsOf("p1")
			q.After = &store.JobKey{CreatedAt: At(0), ID: "j0"}
			diff(t, "after the last job", store.JobsPage{Jobs: []store.Job{}}, mustListJobs(t, s, q))
		}},
		{"InvalidQueryIsRefused", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			for name, q := range map[string]store.JobsQuery{
				"no project":       {Limit: 1},
				"limit 0":          {JobFilter: store.JobFilter{ProjectID: "p1"}},
				"unknown status":   {JobFilter: store.JobFilter{ProjectID: "p1", Statuses: []store.JobStatus{"paused"}}, Limit: 1},
				"place without ID": {JobFilter: store.JobFilter{ProjectID: "p1"}, Limit: 1, After: &store.JobKey{CreatedAt: At(0)}},
			} {
				_, err := s.ListJobs(t.Context(), q)
				wantErr(t, "ListJobs with "+name, err, store.ErrInvalid)
			}
		}},
	})
}
