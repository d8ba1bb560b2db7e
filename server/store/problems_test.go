package store

import (
	"strings"
	"testing"
	"time"
)

func TestViewCountProblem(t *testing.T) {
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	good := ViewCount{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}
	if p := good.Problem(); p != "" {
		t.Fatalf("a good count: %q", p)
	}
	// A whole hour in a zone with a half-hour offset is still whole.
	india := good
	india.Hour = hour.In(time.FixedZone("IST", 5*3600+1800))
	if p := india.Problem(); p != "" {
		t.Fatalf("a whole hour seen from another zone: %q", p)
	}
	for _, tc := range []struct {
		want   string
		mutate func(*ViewCount)
	}{
		{"empty project ID", func(c *ViewCount) { c.ProjectID = "" }},
		{"empty path", func(c *ViewCount) { c.Path = "" }},
		{"is not a whole hour", func(c *ViewCount) { c.Hour = hour.Add(30 * time.Minute) }},
		{"is not a whole hour", func(c *ViewCount) { c.Hour = time.Time{} }},
		{"negative count (human 1, ai 0, bot -1)", func(c *ViewCount) { c.Bot = -1 }},
		{"negative count (human -1, ai 0, bot 0)", func(c *ViewCount) { c.Human = -1 }},
		{"negative count (human 1, ai -2, bot 0)", func(c *ViewCount) { c.AI = -2 }},
	} {
		c := good
		tc.mutate(&c)
		if p := c.Problem(); !strings.Contains(p, tc.want) {
			t.Errorf("Problem() = %q, want it to say %q", p, tc.want)
		}
	}
}

func TestViewsQueryProblem(t *testing.T) {
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	good := ViewsQuery{ProjectID: "p", From: hour, To: hour.Add(time.Hour), Limit: 1}
	if p := good.Problem(); p != "" {
		t.Fatalf("a good query: %q", p)
	}
	open := ViewsQuery{ProjectID: "p", Limit: 250}
	if p := open.Problem(); p != "" {
		t.Fatalf("an open range: %q", p)
	}
	for want, mutate := range map[string]func(*ViewsQuery){
		"empty project ID":          func(q *ViewsQuery) { q.ProjectID = "" },
		"limit 0: must be":          func(q *ViewsQuery) { q.Limit = 0 },
		"offset -1: must be":        func(q *ViewsQuery) { q.Offset = -1 },
		"from 2026-05-01 03:00:01":  func(q *ViewsQuery) { q.From = hour.Add(time.Second) },
		"to 2026-05-01 04:30:00 +0": func(q *ViewsQuery) { q.To = hour.Add(90 * time.Minute) },
	} {
		q := good
		mutate(&q)
		if p := q.Problem(); !strings.Contains(p, want) {
			t.Errorf("Problem() = %q, want it to say %q", p, want)
		}
	}
}

// problemCase is one bad input of a Problem table: the message it must give
// in full, so that a change of words shows here before users see it.
type problemCase[T any] struct {
	want   string
	mutate func(*T)
}

// checkProblems checks that good has no problem and that each case, applied
// to a copy of good, has exactly its message.
func checkProblems[T any](t *testing.T, good T, problem func(T) string, cases []problemCase[T]) {
	t.Helper()
	if p := problem(good); p != "" {
		t.Fatalf("good input %+v: %q", good, p)
	}
	for _, tc := range cases {
		in := good
		tc.mutate(&in)
		if p := problem(in); p != tc.want {
			t.Errorf("Problem(%+v) = %q, want %q", in, p, tc.want)
		}
	}
}

func TestProjectProblem(t *testing.T) {
	checkProblems(t, Project{ID: "p"}, Project.Problem, []problemCase[Project]{
		{"empty project ID", func(p *Project) { p.ID = "" }},
	})
}

func TestAPIKeyProblem(t *testing.T) {
	good := APIKey{ID: "k", Hash: []byte{1}, Projects: []string{"p"}, Scopes: []Scope{ScopeRead}}
	checkProblems(t, good, APIKey.Problem, []problemCase[APIKey]{
		{"empty key ID", func(k *APIKey) { k.ID = "" }},
		{`key "k": empty hash`, func(k *APIKey) { k.Hash = nil }},
		{`key "k": empty hash`, func(k *APIKey) { k.Hash = []byte{} }},
		{`key "k": empty project ID`, func(k *APIKey) { k.Projects = []string{"p", ""} }},
		{`key "k": empty scope`, func(k *APIKey) { k.Scopes = []Scope{ScopeRead, ""} }},
		// The projects are checked before the scopes.
		{`key "k": empty project ID`, func(k *APIKey) { k.Projects, k.Scopes = []string{""}, []Scope{""} }},
	})
	// No projects and no scopes is a key that can do nothing, not a bad key.
	checkProblems(t, APIKey{ID: "k", Hash: []byte{1}}, APIKey.Problem, nil)
}

func TestRevokeKeyProblem(t *testing.T) {
	type args struct {
		id string
		at time.Time
	}
	at := time.Date(2026, 5, 1, 3, 4, 5, 0, time.UTC)
	problem := func(a args) string { return RevokeKeyProblem(a.id, a.at) }
	checkProblems(t, args{"k", at}, problem, []problemCase[args]{
		{"empty key ID", func(a *args) { a.id = "" }},
		{`key "k": zero revocation time`, func(a *args) { a.at = time.Time{} }},
		{"empty key ID", func(a *args) { a.id, a.at = "", time.Time{} }},
	})
}

func TestIdempotencyProblem(t *testing.T) {
	good := &Idempotency{Key: "i", RequestHash: []byte{1}}
	for _, idem := range []*Idempotency{nil, good} {
		if p := idem.Problem(); p != "" {
			t.Fatalf("(%+v).Problem() = %q", idem, p)
		}
	}
	for _, tc := range []struct {
		want string
		idem *Idempotency
	}{
		{"empty idempotency key", &Idempotency{RequestHash: []byte{1}}},
		{"empty idempotency key", &Idempotency{}},
		{`idempotency key "i": empty request hash`, &Idempotency{Key: "i"}},
		{`idempotency key "i": empty request hash`, &Idempotency{Key: "i", RequestHash: []byte{}}},
	} {
		if p := tc.idem.Problem(); p != tc.want {
			t.Errorf("(%+v).Problem() = %q, want %q", tc.idem, p, tc.want)
		}
	}
}

func TestNewJobProblem(t *testing.T) {
	good := NewJob{ID: "j", ProjectID: "p", Prompt: "write"}
	checkProblems(t, good, NewJob.Problem, []problemCase[NewJob]{
		{"empty job ID", func(j *NewJob) { j.ID = "" }},
		{`job "j": empty project ID`, func(j *NewJob) { j.ProjectID = "" }},
		{`job "j": empty prompt`, func(j *NewJob) { j.Prompt = "" }},
		{"empty job ID", func(j *NewJob) { *j = NewJob{} }},
		// The idempotency key is the caller's to check, after its own
		// checks of the prompt.
		{"", func(j *NewJob) { j.Idempotency = &Idempotency{} }},
	})
}

func TestNewPromptProblem(t *testing.T) {
	good := NewPrompt{ProjectID: "p", JobID: "j", Prompt: "again"}
	checkProblems(t, good, NewPrompt.Problem, []problemCase[NewPrompt]{
		{"empty project ID", func(p *NewPrompt) { p.ProjectID = "" }},
		{"empty job ID", func(p *NewPrompt) { p.JobID = "" }},
		{`job "j": empty prompt`, func(p *NewPrompt) { p.Prompt = "" }},
		{"empty project ID", func(p *NewPrompt) { *p = NewPrompt{} }},
		{"", func(p *NewPrompt) { p.Idempotency = &Idempotency{} }},
	})
}

func TestArchiveJobProblem(t *testing.T) {
	type args struct {
		projectID, jobID string
		at               time.Time
	}
	at := time.Date(2026, 5, 1, 3, 4, 5, 0, time.UTC)
	problem := func(a args) string { return ArchiveJobProblem(a.projectID, a.jobID, a.at) }
	checkProblems(t, args{"p", "j", at}, problem, []problemCase[args]{
		{"empty project ID", func(a *args) { a.projectID = "" }},
		{"empty job ID", func(a *args) { a.jobID = "" }},
		{`job "j": zero archive time`, func(a *args) { a.at = time.Time{} }},
		{"empty project ID", func(a *args) { *a = args{} }},
	})
}

func TestClaimProblem(t *testing.T) {
	now := time.Date(2026, 5, 1, 3, 4, 5, 0, time.UTC)
	good := Claim{Owner: "w", Now: now, LeaseFor: time.Microsecond, MaxAttempts: 1}
	checkProblems(t, good, Claim.Problem, []problemCase[Claim]{
		{"empty owner", func(c *Claim) { c.Owner = "" }},
		{"zero Now", func(c *Claim) { c.Now = time.Time{} }},
		{"lease duration 999ns: must be at least 1µs", func(c *Claim) { c.LeaseFor = time.Microsecond - 1 }},
		{"lease duration 0s: must be at least 1µs", func(c *Claim) { c.LeaseFor = 0 }},
		{"lease duration -1m0s: must be at least 1µs", func(c *Claim) { c.LeaseFor = -time.Minute }},
		{"MaxAttempts 0: must be at least 1", func(c *Claim) { c.MaxAttempts = 0 }},
		{"MaxAttempts -3: must be at least 1", func(c *Claim) { c.MaxAttempts = -3 }},
		{"empty owner", func(c *Claim) { *c = Claim{} }},
	})
}

func TestExtendLeaseProblem(t *testing.T) {
	type args struct {
		jobID      string
		now, until time.Time
	}
	now := time.Date(2026, 5, 1, 3, 4, 5, 0, time.UTC)
	problem := func(a args) string { return ExtendLeaseProblem(a.jobID, a.now, a.until) }
	checkProblems(t, args{"j", now, now.Add(time.Minute)}, problem, []problemCase[args]{
		// No lease has an empty job ID: that is ErrLeaseLost, not a problem.
		{"", func(a *args) { a.jobID = "" }},
		{`job "j": zero current time`, func(a *args) { a.now = time.Time{} }},
		{`job "j": zero lease expiry`, func(a *args) { a.until = time.Time{} }},
		{`job "": zero current time`, func(a *args) { *a = args{} }},
	})
}

func TestFinishProblem(t *testing.T) {
	good := Finish{JobID: "j", Owner: "w", Outcome: Completed, Handled: 1}
	checkProblems(t, good, Finish.Problem, []problemCase[Finish]{
		// An empty job ID or owner holds no lease: ErrLeaseLost, not a
		// problem.
		{"", func(f *Finish) { f.JobID, f.Owner = "", "" }},
		{"", func(f *Finish) { f.Handled = 0 }},
		{"", func(f *Finish) { f.Outcome, f.Handled = Failed, -1 }},
		{`job "j": unknown outcome 0`, func(f *Finish) { f.Outcome = 0 }},
		{`job "j": unknown outcome 3`, func(f *Finish) { f.Outcome = Failed + 1 }},
		{`job "j": negative Handled -1`, func(f *Finish) { f.Handled = -1 }},
		{`job "j": unknown outcome 0`, func(f *Finish) { f.Outcome, f.Handled = 0, -1 }},
	})
}
