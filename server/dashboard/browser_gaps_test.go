package dashboard_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docsapi/docsapi-go/server/dashboard"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// The content gaps page in a real browser (servertest.Tab), at a
// desktop's and a phone's width: the gaps the server finds, two of them
// ticked and made into a job through the form, the job's page linking
// back to them, and, once the index was updated after the job completed,
// what retrieval finds for the question.

// askUnanswered stores a question of alpha the assistant could not answer,
// asked from page, in a thread of its own.
func askUnanswered(t *testing.T, d *dashEnv, n int, question, page string) {
	t.Helper()
	at := d.Clock.Now()
	id := fmt.Sprintf("%023d", n)
	th := &store.Thread{ID: "01T" + id, ProjectID: "alpha", KeyHash: make([]byte, 32), Fp: "anonymous", Caller: store.CallerWeb, CreatedAt: at}
	ex := store.Exchange{
		ID: "01A" + id, QuestionID: "01Q" + id, ProjectID: "alpha", ThreadID: th.ID,
		Question: question, AskedAt: at, Answer: "I could not find that in the docs.", AnsweredAt: at,
		ResponseType: store.ResponseAnswer, Resolution: store.Unanswered, PageURL: page, Caller: store.CallerWeb,
	}
	if err := d.Store.AddExchange(t.Context(), ex, th); err != nil {
		t.Fatalf("AddExchange: %v", err)
	}
}

// shownGaps lists the gaps the tab shows, as kind:key.
func shownGaps(b *servertest.Tab) []string {
	return servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('li.gap input[type=checkbox]')).map(c => c.value)`)
}

func TestGapsPageInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	d := newDashEnv(t)
	ctx := t.Context()
	seedGaps(t, d) // "webhook retries" searched twice, nothing opened; /guide/keys voted down
	const question = "How do I rotate signing keys?"
	askUnanswered(t, d, 1, question, "/guide/keys")
	askUnanswered(t, d, 2, "how do I rotate signing keys?", "/guide/keys")
	d.addSearches(t, d.Clock.Now().UTC().Truncate(24*time.Hour), "sso with okta", 3, 0, "")

	b := servertest.NewTab(t, browser, d.url)
	signIn(b, d.Keys["rw"], "#views-chart")
	b.Do("opening the content gaps", chromedp.Click(chromedp.CSS(`nav a[href$="/gaps"]`)), chromedp.WaitVisible(chromedp.ID("gaps-form")))

	// The page shows what the server's view holds, in its order.
	day := d.Clock.Now().UTC().Truncate(24 * time.Hour)
	view, err := d.Server.Gaps(ctx, "alpha", day.AddDate(0, 0, -29), day.AddDate(0, 0, 1), 50)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, g := range view.Groups {
		for _, gap := range g.Gaps {
			want = append(want, string(gap.Kind)+":"+gap.Key)
		}
	}
	got := shownGaps(b)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the page shows %q, the server's view %q", got, want)
	}
	qKey, sKey := "question:how do i rotate signing keys?", "search:webhook retries"
	for _, g := range []string{qKey, sKey, "page:/guide/keys", "search:sso with okta"} {
		if !slices.Contains(got, g) {
			t.Errorf("the page lacks the gap %s", g)
		}
	}
	if b.Present(".gap-jobs") || b.Present(".retrieval") {
		t.Error("a gap lists jobs or retrieval before any job was made")
	}
	b.ScreenshotBoth("01-gaps")

	// Tick the question and the search, say what to do, make the job.
	qID, sID := dashboard.GapID(store.GapQuestion, "how do i rotate signing keys?"), dashboard.GapID(store.GapSearch, "webhook retries")
	b.Do("making a job from two gaps",
		chromedp.Click(chromedp.ID(qID+"-pick")),
		chromedp.Click(chromedp.ID(sID+"-pick")),
		chromedp.SendKeys(chromedp.ID("instructions"), "Add a section to the keys guide."),
		chromedp.Click(chromedp.ID("make-job")),
		chromedp.WaitVisible(chromedp.ID("job-gaps")))
	jobs, err := d.Store.ListJobs(ctx, store.JobsQuery{JobFilter: store.JobFilter{ProjectID: "alpha"}, Limit: 5})
	if err != nil || len(jobs.Jobs) != 1 {
		t.Fatalf("after the form: jobs %+v, %v; want one", jobs.Jobs, err)
	}
	jobID := jobs.Jobs[0].ID
	if path := servertest.Eval[string](b, `location.pathname`); path != "/dashboard/projects/alpha/jobs/"+jobID {
		t.Errorf("the form led to %s, not the job's page", path)
	}
	job, err := d.Store.Job(ctx, "alpha", jobID)
	if err != nil {
		t.Fatal(err)
	}
	if p := job.Prompts[0].Text; !strings.Contains(p, "Add a section to the keys guide.") || !strings.Contains(p, `"how do i rotate signing keys?"`) ||
		!strings.Contains(p, `"webhook retries"`) || strings.Contains(p, `"/guide/keys"`) {
		t.Errorf("the job's prompt does not quote the two gaps ticked and only them:\n%s", p)
	}
	back := servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#job-gaps a')).map(a => new URL(a.href).pathname + new URL(a.href).hash)`)
	wantBack := []string{"/dashboard/projects/alpha/gaps#" + qID, "/dashboard/projects/alpha/gaps#" + sID}
	slices.Sort(back)
	slices.Sort(wantBack)
	if strings.Join(back, " ") != strings.Join(wantBack, " ") {
		t.Errorf("the job page links back to %q, want %q", back, wantBack)
	}
	b.ScreenshotBoth("02-job-from-gaps")

	// Back to the question's row, which lists the job.
	b.Do("following the link back",
		chromedp.Click(chromedp.CSS(`#job-gaps a[href$="#`+qID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#`+qID+` .gap-jobs a[href$="/jobs/`+jobID+`"]`)))
	if hash := servertest.Eval[string](b, `location.hash`); hash != "#"+qID {
		t.Errorf("the link back landed on %q", hash)
	}
	if b.Present(`#` + dashboard.GapID(store.GapPage, "/guide/keys") + ` .gap-jobs`) {
		t.Error("a gap not ticked lists the job")
	}
	b.ScreenshotBoth("03-gaps-with-job")

	// The job completes, then an index update adds the section: the
	// question's row says retrieval now finds it.
	d.Clock.Advance(time.Minute)
	claimed, err := d.Store.ClaimJob(ctx, store.Claim{Owner: "test-engine", Now: d.Clock.Now(), LeaseFor: time.Hour, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Store.FinishJob(ctx, store.Finish{JobID: claimed.ID, Owner: "test-engine", At: d.Clock.Now(), Outcome: store.Completed, Handled: 1}); err != nil {
		t.Fatal(err)
	}
	d.Clock.Advance(time.Minute)
	page := store.DocPage{Path: "/guide/keys", File: "guide/keys.md", Title: "Keys", Sections: []store.DocSection{
		{Text: "Keys sign requests."},
		{Anchor: "rotate-signing-keys", Heading: "Rotate signing keys", Text: "To rotate signing keys, create a new key, then revoke the old one."},
	}}
	if err := d.Store.UpdateDocs(ctx, store.DocsUpdate{ProjectID: "alpha", Commit: "c2", At: d.Clock.Now(), Replace: true,
		Pages: []store.DocPage{page}, Files: []store.DocFile{{Path: page.File, Blob: "b2"}}}); err != nil {
		t.Fatal(err)
	}
	b.Open("/dashboard/projects/alpha/gaps", `#`+qID+` .retrieval`)
	if found := servertest.Eval[string](b, `document.querySelector('#`+qID+` .retrieval').dataset.found`); found != "true" {
		t.Errorf("the question's retrieval says found=%s", found)
	}
	if got := b.Text(`#` + qID + ` .retrieval`); !strings.Contains(got, "/guide/keys#rotate-signing-keys") || !strings.Contains(got, "c2") {
		t.Errorf("the question's retrieval says %q", got)
	}
	if !b.Present(`#` + sID + ` .retrieval`) {
		t.Error("the search's row says nothing of retrieval")
	}
	b.ScreenshotBoth("04-gaps-retrieval")
}
