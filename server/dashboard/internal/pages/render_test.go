package pages

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func render(t *testing.T, p Page) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, p); err != nil {
		t.Fatalf("Render(%T): %v", p, err)
	}
	return b.String()
}

func signedIn() Frame {
	return Frame{Title: "t", Base: "/dashboard", Project: "alpha", Projects: []string{"alpha", "beta"}, KeyName: "ci", CSRF: "tok", Now: time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)}
}

func TestEveryPageRenders(t *testing.T) {
	at := time.Date(2026, 8, 13, 9, 0, 0, 0, time.UTC)
	job := store.Job{ID: "job_1", Status: store.JobStatusFailed, CreatedAt: at, UpdatedAt: at, Prompts: []store.Prompt{{Text: "Fix it", At: at}}, FailureReason: "push refused"}
	for _, p := range []Page{
		LoginPage{Frame: Frame{Base: "/dashboard", CSRF: "tok"}, Error: "Sign-in failed"},
		OverviewPage{Frame: signedIn(), Period: Period{From: "2026-08-01", To: "2026-08-14"}, Chart: NewChart([]Point{{At: at, End: at.Add(24 * time.Hour), Human: 3, AI: 1}}, Day),
			Top:  []PageViews{{Path: "/guide", Views: Views{Human: 3, AI: 1, Total: 4}}},
			Site: SiteToday{Feedback: SiteLimits{CapReached: true, ShareRefused: 1234}, Searches: SiteLimits{ShareRefused: 5}}},
		AgentsPage{Frame: signedIn(), Period: Period{From: "2026-08-13", To: "2026-08-14"}, Interval: Day,
			Charts: NewClassCharts([]AgentsBar{{At: at, End: at.Add(24 * time.Hour), Views: [4]int64{3, 1}}, {At: at.Add(24 * time.Hour), End: at.Add(48 * time.Hour)}}, Day)},
		SearchesPage{Frame: signedIn(), Period: Period{From: "2026-08-01", To: "2026-08-14"}, Total: 2, Before: 1},
		JobsPage{Frame: signedIn(), Statuses: []store.JobStatus{store.JobStatusActive}, Jobs: []store.Job{job}, Next: "/dashboard/projects/alpha/jobs?cursor=x"},
		JobPage{Frame: signedIn(), Job: job, CanWrite: true},
		ErrorPage{Frame: Frame{Base: "/dashboard"}, Heading: "Not Found", Message: "no job"},
		ConversationsPage{Frame: signedIn(), Period: Period{From: "2026-08-01", To: "2026-08-14"}, Callers: store.CallerCounts{Web: 2, API: 1},
			Rows: []Conversation{{Exchange: store.Exchange{ID: "X1", ThreadID: "T1", Question: "How?", AskedAt: at, Resolution: store.Unanswered}, ThreadURL: "/dashboard/projects/alpha/conversations/T1#x-X1"}}},
		ThreadPage{Frame: signedIn(), Thread: store.Thread{ID: "T1", CreatedAt: at, Caller: store.CallerWeb, Fp: "anonymous"},
			Exchanges: []store.Exchange{{ID: "X1", Question: "How?", Answer: "So.", AskedAt: at, AnsweredAt: at, Sources: []store.Source{{Title: "Guide", URL: "/guide"}}}}},
	} {
		html := render(t, p)
		for _, want := range []string{"<!doctype html>", `<html lang="en">`, `<main id="main"`, `href="/dashboard/style.css?v=` + StyleVersion} {
			if !strings.Contains(html, want) {
				t.Errorf("%T lacks %q", p, want)
			}
		}
		if strings.Contains(html, "<script") || strings.Contains(html, " style=") {
			t.Errorf("%T has a script or an inline style, which the pages' policy forbids", p)
		}
	}
}

// The navigation's links to the analytics pages keep the period shown;
// those to feedback and jobs do not take one.
func TestNavigationKeepsThePeriod(t *testing.T) {
	f := signedIn()
	f.PeriodQuery = "from=2026-08-01&period=custom&to=2026-08-10"
	html := render(t, SearchesPage{Frame: f})
	for _, want := range []string{
		`href="/dashboard/projects/alpha/?from=2026-08-01&amp;period=custom&amp;to=2026-08-10"`,
		`href="/dashboard/projects/alpha/agents?from=2026-08-01&amp;period=custom&amp;to=2026-08-10"`,
		`href="/dashboard/projects/alpha/searches?from=2026-08-01&amp;period=custom&amp;to=2026-08-10"`,
		`href="/dashboard/projects/alpha/feedback"`,
		`href="/dashboard/projects/alpha/jobs"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the navigation lacks %s", want)
		}
	}
	if html := render(t, JobsPage{Frame: signedIn()}); !strings.Contains(html, `href="/dashboard/projects/alpha/agents"`) {
		t.Error("without a period, the navigation's link to the agents asks for one")
	}
}

// Paths and prompts are what visitors and API clients chose: they must
// come out as text.
func TestPagesEscapeWhatClientsWrote(t *testing.T) {
	evil := `<img src=x onerror=alert(1)>`
	html := render(t, OverviewPage{Frame: signedIn(), Top: []PageViews{{Path: "/" + evil, Views: Views{Total: 1}}}})
	html += render(t, JobPage{Frame: signedIn(), Job: store.Job{ID: "job_1", Prompts: []store.Prompt{{Text: evil}}, PRLink: "javascript:alert(1)"}})
	if strings.Contains(html, "<img") || strings.Contains(html, `href="javascript:`) {
		t.Errorf("a client's text came out as markup:\n%s", html)
	}
}

func TestFailureReasonAndArchiveAreForWriters(t *testing.T) {
	job := store.Job{ID: "job_1", Status: store.JobStatusFailed, FailureReason: "push refused"}
	writer := render(t, JobPage{Frame: signedIn(), Job: job, CanWrite: true})
	reader := render(t, JobPage{Frame: signedIn(), Job: job})
	for _, want := range []string{"push refused", `id="archive"`, `name="csrf" value="tok"`} {
		if !strings.Contains(writer, want) {
			t.Errorf("a writer's page lacks %q", want)
		}
	}
	if strings.Contains(reader, "push refused") || strings.Contains(reader, `id="archive"`) {
		t.Error("a reader's page shows the failure reason or the archive button")
	}
}

// The overview speaks of readers' limits only when one was met today, and
// says which.
func TestOverviewShowsSiteLimitsMet(t *testing.T) {
	if html := render(t, OverviewPage{Frame: signedIn()}); strings.Contains(html, `id="site-limits"`) {
		t.Error("the overview speaks of limits when none was met")
	}
	html := render(t, OverviewPage{Frame: signedIn(), Site: SiteToday{Feedback: SiteLimits{ShareRefused: 1234}, Searches: SiteLimits{CapReached: true}}})
	for _, want := range []string{`id="site-limits"`, "Feedback: 1,234 refused by the per-address share today.", `id="searches-cap"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
	for _, absent := range []string{`id="feedback-cap"`, `id="searches-share"`} {
		if strings.Contains(html, absent) {
			t.Errorf("the overview shows %s, which was not met", absent)
		}
	}
}
