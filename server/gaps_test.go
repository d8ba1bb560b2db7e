package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/gaps"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// ask stores an unanswered question of alpha, asked from page ("" for
// none), in a thread of its own.
func ask(t *testing.T, e *env, n int, question, page string) {
	t.Helper()
	at := e.Clock.Now()
	id := fmt.Sprintf("01J%023d", n)
	th := &store.Thread{ID: "01T" + id[3:], ProjectID: "alpha", KeyHash: make([]byte, 32), Fp: "anonymous", Caller: store.CallerWeb, CreatedAt: at}
	ex := store.Exchange{
		ID: "01A" + id[3:], QuestionID: "01Q" + id[3:], ProjectID: "alpha", ThreadID: th.ID,
		Question: question, AskedAt: at, Answer: "I could not find that in the docs.", AnsweredAt: at,
		ResponseType: store.ResponseAnswer, Resolution: store.Unanswered, PageURL: page, Caller: store.CallerWeb,
	}
	if err := e.Store.AddExchange(t.Context(), ex, th); err != nil {
		t.Fatalf("AddExchange: %v", err)
	}
}

func getGaps(t *testing.T, e *env, query string) wire.GapsReport {
	t.Helper()
	var rep wire.GapsReport
	e.GetJSON("ro", "/v1/gaps/alpha"+query, &rep)
	return rep
}

func findGap(rep wire.GapsReport, kind, key string) (wire.GapGroup, wire.Gap, bool) {
	for _, g := range rep.Groups {
		for _, gap := range g.Gaps {
			if gap.Kind == kind && gap.Key == key {
				return g, gap, true
			}
		}
	}
	return wire.GapGroup{}, wire.Gap{}, false
}

// The three kinds of gaps are grouped per page or topic and ranked; a
// job made from a selection quotes them, is linked to them, and each
// gap then lists it.
func TestGapsGroupAndMakeAJob(t *testing.T) {
	e := newSiteEnv(t)
	ask(t, e, 1, "How do I rotate keys?", "/guide/keys")
	ask(t, e, 2, "how do I rotate   keys?", "/guide/keys")
	ask(t, e, 3, "Webhook retries", "")
	for range 3 {
		e.MustPost("searches", `{"query": "webhook retries"}`)
	}
	e.MustPost("searches", `{"query": "install", "clickedPath": "/install"}`)
	e.MustPost("feedback", `{"path": "/guide/keys", "helpful": false}`)
	e.MustPost("feedback", `{"path": "/guide/keys", "helpful": true}`)
	e.MustPost("feedback", `{"path": "/fine", "helpful": true}`)

	rep := getGaps(t, e, "")
	if len(rep.Groups) != 2 {
		t.Fatalf("groups %+v, want /guide/keys and the topic webhook retries", rep.Groups)
	}
	keys := rep.Groups[0]
	if keys.Page == nil || *keys.Page != "/guide/keys" || keys.Score != 3*2+2*1 || len(keys.Gaps) != 2 {
		t.Errorf("the first group is %+v, want the page /guide/keys scored 8 with a question and its votes", keys)
	}
	g, q, ok := findGap(rep, "question", "how do i rotate keys?")
	if !ok || q.Count != 2 || *g.Page != "/guide/keys" || len(q.Examples) != 2 || q.Retrieval != nil {
		t.Errorf("the question's gap: %+v in %+v", q, g)
	}
	g, s, ok := findGap(rep, "search", "webhook retries")
	if !ok || s.Count != 3 || g.Topic == nil || *g.Topic != "webhook retries" || g.Page != nil {
		t.Errorf("the search's gap: %+v in %+v", s, g)
	}
	if _, p, ok := findGap(rep, "page", "/guide/keys"); !ok || p.Count != 1 || p.ThumbsUp == nil || *p.ThumbsUp != 1 {
		t.Errorf("the page's gap: %+v", p)
	}
	for _, absent := range [][2]string{{"search", "install"}, {"page", "/fine"}} {
		if _, _, ok := findGap(rep, absent[0], absent[1]); ok {
			t.Errorf("%s %s is a gap", absent[0], absent[1])
		}
	}

	// A read key may not make a job; nothing is stored.
	body := `{"gaps": [{"kind": "question", "key": "how do i rotate keys?"}, {"kind": "search", "key": "webhook retries"}, {"kind": "page", "key": "/guide/keys"}],
		"instructions": "Keep it short."}`
	if resp, b := e.Do("ro", "POST", "/v1/gaps/alpha/job", body); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a read key's job: %d %s", resp.StatusCode, b)
	}
	// An unknown gap is named, and nothing is stored.
	resp, b := e.Do("rw", "POST", "/v1/gaps/alpha/job", `{"gaps": [{"kind": "search", "key": "install"}, {"kind": "page", "key": "/guide/keys"}, {"kind": "question", "key": "nope"}]}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unknown gaps: %d %s", resp.StatusCode, b)
	}
	details := analyticsDetails(t, b)
	if len(details) != 2 || !strings.Contains(details[0].Message, `search "install"`) || !strings.Contains(details[1].Message, `question "nope"`) {
		t.Errorf("unknown gaps' details %+v, want search install and question nope named", details)
	}
	if links, err := e.Store.GapLinks(t.Context(), "alpha"); err != nil || len(links) != 0 {
		t.Fatalf("links after refused requests: %v, %v", links, err)
	}
	if page, err := e.Store.ListJobs(t.Context(), store.JobsQuery{JobFilter: store.JobFilter{ProjectID: "alpha"}, Limit: 10}); err != nil || len(page.Jobs) != 0 {
		t.Fatalf("jobs after refused requests: %+v, %v", page.Jobs, err)
	}

	resp, b = e.Do("rw", "POST", "/v1/gaps/alpha/job", body, "Idempotency-Key", "gaps-1")
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("making a job: %d %s", resp.StatusCode, b)
	}
	var job wire.Job
	if err := json.Unmarshal(b, &job); err != nil || job.Status != "active" {
		t.Fatalf("the job %s: %v", b, err)
	}
	stored, err := e.Store.Job(t.Context(), "alpha", job.ID)
	if err != nil {
		t.Fatal(err)
	}
	prompt := stored.Prompts[0].Text
	for _, want := range []string{
		"Keep it short.", gaps.DataStart, gaps.DataEnd,
		`question asked 2 times: "how do i rotate keys?"`, `as asked: "How do I rotate keys?"`,
		`search made 3 times, no result opened: "webhook retries"`,
		`page voted down 1 times (1 votes up): "/guide/keys"`,
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	// A retry with the key answers the same job, though the counts moved.
	e.MustPost("searches", `{"query": "webhook retries"}`)
	resp, b = e.Do("rw", "POST", "/v1/gaps/alpha/job", body, "Idempotency-Key", "gaps-1")
	var again wire.Job
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &again) != nil || again.ID != job.ID {
		t.Fatalf("the retry: %d %s, want job %s again", resp.StatusCode, b, job.ID)
	}

	rep = getGaps(t, e, "")
	for _, ref := range [][2]string{{"question", "how do i rotate keys?"}, {"search", "webhook retries"}, {"page", "/guide/keys"}} {
		_, gap, _ := findGap(rep, ref[0], ref[1])
		if len(gap.Jobs) != 1 || gap.Jobs[0].ID != job.ID || gap.Jobs[0].Status != "active" {
			t.Errorf("%s %s lists the jobs %+v, want %s", ref[0], ref[1], gap.Jobs, job.ID)
		}
	}
	if _, gap, _ := findGap(rep, "question", "webhook retries"); len(gap.Jobs) != 0 {
		t.Errorf("a gap not selected lists the jobs %+v", gap.Jobs)
	}
}

// Once the index was updated after a linked job completed, each gap says
// whether retrieval finds a section for it: not while the index is older
// than the job's finish (the job's change cannot be in it), not found in
// an update that lacks the section, found after one that adds it.
func TestGapsRetrievalAfterTheIndexUpdates(t *testing.T) {
	e := newSiteEnv(t)
	ask(t, e, 1, "How do I rotate signing keys?", "")
	index := func(commit string, sections ...store.DocSection) time.Time {
		t.Helper()
		e.Clock.Advance(time.Minute)
		page := store.DocPage{Path: "/guide/start", File: "guide/start.md", Title: "Getting started",
			Sections: append([]store.DocSection{{Text: "Install the tool and run it."}}, sections...)}
		u := store.DocsUpdate{ProjectID: "alpha", Commit: commit, At: e.Clock.Now(), Replace: true, Pages: []store.DocPage{page},
			Files: []store.DocFile{{Path: page.File, Blob: "blob-" + commit}}}
		if err := e.Store.UpdateDocs(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		return u.At
	}
	const key = "how do i rotate signing keys?"
	retrieval := func() (*wire.GapRetrieval, []wire.GapJob) {
		t.Helper()
		_, gap, ok := findGap(getGaps(t, e, ""), "question", key)
		if !ok {
			t.Fatalf("no gap %q", key)
		}
		return gap.Retrieval, gap.Jobs
	}
	index("c1")
	resp, b := e.Do("rw", "POST", "/v1/gaps/alpha/job", `{"gaps": [{"kind": "question", "key": "`+key+`"}]}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("making a job: %d %s", resp.StatusCode, b)
	}
	if r, _ := retrieval(); r != nil {
		t.Fatalf("retrieval %+v before the job completed, want null", r)
	}

	e.Clock.Advance(time.Minute)
	job, err := e.Store.ClaimJob(t.Context(), store.Claim{Owner: "w", Now: e.Clock.Now(), LeaseFor: time.Minute, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.FinishJob(t.Context(), store.Finish{JobID: job.ID, Owner: "w", At: e.Clock.Now(), Outcome: store.Completed, Handled: 1}); err != nil {
		t.Fatal(err)
	}
	if r, jobs := retrieval(); r != nil || len(jobs) != 1 || jobs[0].Status != "completed" {
		t.Fatalf("retrieval %+v (jobs %+v) once the job completed, the index older: want null by a completed job", r, jobs)
	}

	at := index("c2")
	if r, _ := retrieval(); r == nil || r.Found || r.Path != nil || r.IndexCommit != "c2" || r.IndexUpdatedAt != wire.Time(at) {
		t.Fatalf("retrieval %+v after an update without the section, want not found in c2 updated at %s", r, wire.Time(at))
	}

	at = index("c3", store.DocSection{Anchor: "rotate-signing-keys", Heading: "Rotate signing keys", Text: "To rotate signing keys, create a new key and revoke the old one."})
	r, _ := retrieval()
	if r == nil || !r.Found || *r.Path != "/guide/start" || *r.Anchor != "rotate-signing-keys" || *r.Heading != "Rotate signing keys" ||
		r.IndexCommit != "c3" || r.IndexUpdatedAt != wire.Time(at) {
		t.Fatalf("retrieval %+v after the update, want /guide/start#rotate-signing-keys in c3", r)
	}
}

// Every input is read within its bound: searches past MaxSearches are
// left out, (other searches) never counts among them, and the report says
// it was truncated.
func TestGapsBounds(t *testing.T) {
	e := newSiteEnv(t)
	var b store.SearchBatch
	b.DailyQueryCap = gaps.MaxSearches + 10
	for i := range gaps.MaxSearches + 5 {
		b.Searches = append(b.Searches, store.Search{ProjectID: "alpha", Query: fmt.Sprintf("q%04d", i), At: e.Clock.Now()})
	}
	b.Searches = append(b.Searches, store.Search{ProjectID: "alpha", Query: store.OtherSearchesQuery, At: e.Clock.Now()})
	if _, err := e.Store.AddSearches(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	rep := getGaps(t, e, "?limit=200")
	if !rep.Truncated {
		t.Error("the report is not truncated")
	}
	day := e.Clock.Now().Truncate(24 * time.Hour)
	all, err := e.Server.Gaps(t.Context(), "alpha", day, day.Add(24*time.Hour), 10_000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range all.Groups {
		for _, gap := range g.Gaps {
			if gap.Key == store.OtherSearchesQuery {
				t.Errorf("%s is a gap", store.OtherSearchesQuery)
			}
			n++
		}
	}
	if n != gaps.MaxSearches || !all.Truncated {
		t.Errorf("%d search gaps (truncated %v), want the bound %d", n, all.Truncated, gaps.MaxSearches)
	}
	if len(rep.Groups) != 200 {
		t.Errorf("%d groups answered, want the limit 200", len(rep.Groups))
	}
}
