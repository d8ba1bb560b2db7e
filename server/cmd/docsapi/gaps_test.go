package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// gapsEnv is a server (servertest) whose project alpha has the three
// kinds of gaps today: a question the assistant could not answer, asked
// twice from /guide/keys, a search that opened nothing, and /guide/keys
// voted down. It returns the client's environment, with the write key.
func gapsEnv(t *testing.T) (*servertest.Env, map[string]string) {
	t.Helper()
	e := servertest.New(t)
	ctx := t.Context()
	now := e.Clock.Now()
	for i, q := range []string{"How do I rotate keys?", "how do I rotate   keys?"} {
		id := fmt.Sprintf("%023d", i+1)
		th := &store.Thread{ID: "01T" + id, ProjectID: "alpha", KeyHash: make([]byte, 32), Fp: "anonymous", Caller: store.CallerWeb, CreatedAt: now}
		ex := store.Exchange{
			ID: "01A" + id, QuestionID: "01Q" + id, ProjectID: "alpha", ThreadID: th.ID,
			Question: q, AskedAt: now, Answer: "I could not find that in the docs.", AnsweredAt: now,
			ResponseType: store.ResponseAnswer, Resolution: store.Unanswered, PageURL: "/guide/keys", Caller: store.CallerWeb,
		}
		if err := e.Store.AddExchange(ctx, ex, th); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Store.AddSearches(ctx, store.SearchBatch{DailyQueryCap: 10, Searches: []store.Search{
		{ProjectID: "alpha", Query: "webhook retries", At: now}, {ProjectID: "alpha", Query: "webhook retries", At: now},
		{ProjectID: "alpha", Query: "webhook retries", At: now},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.AddFeedback(ctx, store.NewFeedback{ID: "fb1", ProjectID: "alpha", Path: "/guide/keys", Source: store.FeedbackSourceThumbsOnly, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	return e, map[string]string{"DOCSAPI_KEY": e.Keys["rw"], "DOCSAPI_BASE_URL": e.Serve(), "DOCSAPI_PROJECT": "alpha"}
}

// apiGaps returns GET /v1/gaps/alpha's body as the server answers it.
func apiGaps(t *testing.T, env map[string]string) (string, wire.GapsReport) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, env["DOCSAPI_BASE_URL"]+"/v1/gaps/alpha?limit=50", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env["DOCSAPI_KEY"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/gaps/alpha: %d %s (%v)", resp.StatusCode, body, err)
	}
	var rep wire.GapsReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(body)), rep
}

// wantGapRows checks that the table printed has a line per gap of rep,
// with its kind, key, count, last seen and jobs, in the report's order.
func wantGapRows(t *testing.T, table string, rep wire.GapsReport) {
	t.Helper()
	var rows []string
	for _, g := range rep.Groups {
		name := "topic " + deref(g.Topic)
		if g.Page != nil {
			name = "page " + *g.Page
		}
		rows = append(rows, `^`+regexp.QuoteMeta(fmt.Sprintf("%s (score %d)", name, g.Score))+`\s*$`)
		for _, gap := range g.Gaps {
			jobs := "-"
			if len(gap.Jobs) > 0 {
				var js []string
				for _, j := range gap.Jobs {
					js = append(js, j.ID+" "+j.Status)
				}
				jobs = strings.Join(js, ", ")
			}
			rows = append(rows, `^\s+`+regexp.QuoteMeta(gap.Kind)+`\s+`+regexp.QuoteMeta(gap.Key)+`\s+`+fmt.Sprint(gap.Count)+`\s+`+
				regexp.QuoteMeta(dashIfNil(gap.LastSeen))+`\s+`+regexp.QuoteMeta(jobs)+`\s+-$`)
		}
	}
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if len(lines) != len(rows)+2 || !strings.HasPrefix(lines[0], "From ") || !regexp.MustCompile(`^GROUP\s+KIND\s+KEY\s+COUNT\s+LAST SEEN\s+JOBS\s+RETRIEVAL$`).MatchString(lines[1]) {
		t.Fatalf("the table has %d lines, want a range, a header and %d rows:\n%s", len(lines), len(rows), table)
	}
	for i, row := range rows {
		if !regexp.MustCompile(row).MatchString(lines[i+2]) {
			t.Errorf("line %d is %q, want it to match %s", i+2, lines[i+2], row)
		}
	}
}

// docsapi gaps list and gaps job against a real server: the table and
// the JSON are the API's report; a job made from a selection quotes it,
// is the same job on a retry with the same key, and each gap then lists
// it.
func TestGapsCommands(t *testing.T) {
	e, env := gapsEnv(t)
	body, rep := apiGaps(t, env)
	if len(rep.Groups) != 2 {
		t.Fatalf("the server's report has %d groups, want /guide/keys and webhook retries: %s", len(rep.Groups), body)
	}

	r := runCLI(t, env, "", "gaps", "list", "--json")
	r.expect(t, exitOK)
	if strings.TrimSpace(r.stdout) != body {
		t.Errorf("gaps list --json printed\n%s\nthe API answers\n%s", r.stdout, body)
	}
	r = runCLI(t, env, "", "gaps", "list")
	r.expect(t, exitOK)
	wantGapRows(t, r.stdout, rep)

	sel := []string{"gaps", "job", "--select", "question:how do i rotate keys?", "--select", "search:webhook retries",
		"--instructions", "Add a section on key rotation.", "--idempotency-key", "cli-1"}
	r = runCLI(t, env, "", sel...)
	r.expect(t, exitOK)
	var job wire.Job
	if err := json.Unmarshal([]byte(r.stdout), &job); err != nil || job.Status != "active" || !strings.HasPrefix(job.ID, "job_") {
		t.Fatalf("gaps job printed %q (%v), want an active job as JSON", r.stdout, err)
	}
	stored, err := e.Store.Job(t.Context(), "alpha", job.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Add a section on key rotation.", `"how do i rotate keys?"`, `"webhook retries"`} {
		if !strings.Contains(stored.Prompts[0].Text, want) {
			t.Errorf("the job's prompt lacks %s:\n%s", want, stored.Prompts[0].Text)
		}
	}
	r = runCLI(t, env, "", sel...)
	r.expect(t, exitOK)
	var again wire.Job
	if err := json.Unmarshal([]byte(r.stdout), &again); err != nil || again.ID != job.ID {
		t.Errorf("the retry with the same key printed %q, want job %s again", r.stdout, job.ID)
	}
	if links, err := e.Store.GapLinks(t.Context(), "alpha"); err != nil || len(links) != 2 {
		t.Errorf("links %+v, %v; want the two gaps selected", links, err)
	}

	_, rep = apiGaps(t, env)
	r = runCLI(t, env, "", "gaps", "list")
	r.expect(t, exitOK)
	wantGapRows(t, r.stdout, rep)
	if n := strings.Count(r.stdout, job.ID+" active"); n != 2 {
		t.Errorf("the table lists the job on %d gaps, want 2:\n%s", n, r.stdout)
	}
}

// Mistakes: a --select that is not KIND:KEY is named before any request;
// a gap the range does not hold is the API's 400, naming it; a read key
// is refused.
func TestGapsCommandMistakes(t *testing.T) {
	e, env := gapsEnv(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		says []string
	}{
		{"no kind", env, []string{"--select", "webhook retries"}, exitUsage, []string{`--select "webhook retries": want KIND:KEY`}},
		{"an unknown kind", env, []string{"--select", "topic:webhook retries"}, exitUsage, []string{`--select "topic:webhook retries"`, "question, search, page"}},
		{"no key", env, []string{"--select", "search:"}, exitUsage, []string{`--select "search:"`}},
		{"no selection", env, nil, exitUsage, []string{"select at least one gap"}},
		{"an unknown gap", env, []string{"--select", "search:webhook retries", "--select", "search:nope"}, exitFailure,
			[]string{"400 Bad Request", "the selection names gaps the range does not hold", `search "nope" is not a gap of`}},
		{"a read key", withEnv(env, "DOCSAPI_KEY", e.Keys["ro"]), []string{"--select", "search:webhook retries"}, exitFailure,
			[]string{"403", "write scope"}},
	} {
		r := runCLI(t, tc.env, "", append([]string{"gaps", "job"}, tc.args...)...)
		if r.code != tc.code || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d", tc.name, r.code, r.stdout, r.stderr, tc.code)
			continue
		}
		for _, s := range tc.says {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("%s: stderr %q lacks %q", tc.name, r.stderr, s)
			}
		}
	}
	jobs, err := e.Store.ListJobs(t.Context(), store.JobsQuery{JobFilter: store.JobFilter{ProjectID: "alpha"}, Limit: 5})
	if err != nil || len(jobs.Jobs) != 0 {
		t.Errorf("after the mistakes: jobs %+v, %v; want none", jobs.Jobs, err)
	}
}
