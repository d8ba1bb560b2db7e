package store

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestViewCountValidate(t *testing.T) {
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	good := ViewCount{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}
	if p := problem(t, good.Validate()); p != "" {
		t.Fatalf("a good count: %q", p)
	}
	// A whole hour in a zone with a half-hour offset is still whole.
	india := good
	india.Hour = hour.In(time.FixedZone("IST", 5*3600+1800))
	if p := problem(t, india.Validate()); p != "" {
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
		p := problem(t, c.Validate())
		if !strings.Contains(p, tc.want) {
			t.Errorf("Validate() = %q, want it to say %q", p, tc.want)
		}
	}
}

func TestViewsQueryValidate(t *testing.T) {
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	good := ViewsQuery{ProjectID: "p", From: hour, To: hour.Add(time.Hour), Limit: 1}
	if p := problem(t, good.Validate()); p != "" {
		t.Fatalf("a good query: %q", p)
	}
	open := ViewsQuery{ProjectID: "p", Limit: 250}
	if p := problem(t, open.Validate()); p != "" {
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
		p := problem(t, q.Validate())
		if !strings.Contains(p, want) {
			t.Errorf("Validate() = %q, want it to say %q", p, want)
		}
	}
}

// problem returns the Problem of err, an error of a check, after checking
// that it is an *InvalidError matching ErrInvalid; "" for nil.
func problem(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var inv *InvalidError
	if !errors.As(err, &inv) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v (%T) is not an *InvalidError matching ErrInvalid", err, err)
	}
	if want := "store: invalid argument: " + inv.Problem; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	return inv.Problem
}

// validateCase is one bad input of a Validate table: the message it must
// give in full, so that a change of words shows here before users see it.
type validateCase[T any] struct {
	want   string
	mutate func(*T)
}

// checkValidate checks that good is fit and that each case, applied to a
// copy of good, has exactly its message.
func checkValidate[T any](t *testing.T, good T, validate func(T) error, cases []validateCase[T]) {
	t.Helper()
	if p := problem(t, validate(good)); p != "" {
		t.Fatalf("good input %+v: %q", good, p)
	}
	for _, tc := range cases {
		in := good
		tc.mutate(&in)
		if p := problem(t, validate(in)); p != tc.want {
			t.Errorf("Validate(%+v) = %q, want %q", in, p, tc.want)
		}
	}
}

func TestProjectValidate(t *testing.T) {
	checkValidate(t, Project{ID: "p"}, Project.Validate, []validateCase[Project]{
		{"empty project ID", func(p *Project) { p.ID = "" }},
	})
}

func TestAPIKeyValidate(t *testing.T) {
	good := APIKey{ID: "k", Hash: []byte{1}, Projects: []string{"p"}, Scopes: []Scope{ScopeRead}}
	checkValidate(t, good, APIKey.Validate, []validateCase[APIKey]{
		{"empty key ID", func(k *APIKey) { k.ID = "" }},
		{`key "k": empty hash`, func(k *APIKey) { k.Hash = nil }},
		{`key "k": empty hash`, func(k *APIKey) { k.Hash = []byte{} }},
		{`key "k": empty project ID`, func(k *APIKey) { k.Projects = []string{"p", ""} }},
		{`key "k": empty scope`, func(k *APIKey) { k.Scopes = []Scope{ScopeRead, ""} }},
		// The projects are checked before the scopes.
		{`key "k": empty project ID`, func(k *APIKey) { k.Projects, k.Scopes = []string{""}, []Scope{""} }},
	})
	// No projects and no scopes is a key that can do nothing, not a bad key.
	checkValidate[APIKey](t, APIKey{ID: "k", Hash: []byte{1}}, APIKey.Validate, nil)
}

func TestValidateRevokeKey(t *testing.T) {
	type args struct {
		id string
		at time.Time
	}
	at := time.Date(2026, 5, 1, 3, 4, 5, 0, time.UTC)
	validate := func(a args) error { return ValidateRevokeKey(a.id, a.at) }
	checkValidate(t, args{"k", at}, validate, []validateCase[args]{
		{"empty key ID", func(a *args) { a.id = "" }},
		{`key "k": zero revocation time`, func(a *args) { a.at = time.Time{} }},
		{"empty key ID", func(a *args) { a.id, a.at = "", time.Time{} }},
	})
}

func TestIdempotencyValidate(t *testing.T) {
	good := &Idempotency{Key: "i", RequestHash: []byte{1}}
	for _, idem := range []*Idempotency{nil, good} {
		if p := problem(t, idem.Validate()); p != "" {
			t.Fatalf("(%+v).Validate() = %q", idem, p)
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
		if p := problem(t, tc.idem.Validate()); p != tc.want {
			t.Errorf("(%+v).Validate() = %q, want %q", tc.idem, p, tc.want)
		}
	}
}

func TestNewJobValidate(t *testing.T) {
	good := NewJob{ID: "j", ProjectID: "p", Prompt: "write"}
	checkValidate(t, good, NewJob.Validate, []validateCase[NewJob]{
		{"empty job ID", func(j *NewJob) { j.ID = "" }},
		{`job "j": empty project ID`, func(j *NewJob) { j.ProjectID = "" }},
		{`job "j": empty prompt`, func(j *NewJob) { j.Prompt = "" }},
		{"empty job ID", func(j *NewJob) { *j = NewJob{} }},
		// The idempotency key is checked last.
		{"empty idempotency key", func(j *NewJob) { j.Idempotency = &Idempotency{} }},
		{`idempotency key "i": empty request hash`, func(j *NewJob) { j.Idempotency = &Idempotency{Key: "i"} }},
		{`job "j": empty prompt`, func(j *NewJob) { j.Prompt, j.Idempotency = "", &Idempotency{} }},
	})
}

func TestNewPromptValidate(t *testing.T) {
	good := NewPrompt{ProjectID: "p", JobID: "j", Prompt: "again"}
	checkValidate(t, good, NewPrompt.Validate, []validateCase[NewPrompt]{
		{"empty project ID", func(p *NewPrompt) { p.ProjectID = "" }},
		{"empty job ID", func(p *NewPrompt) { p.JobID = "" }},
		{`job "j": empty prompt`, func(p *NewPrompt) { p.Prompt = "" }},
		{"empty project ID", func(p *NewPrompt) { *p = NewPrompt{} }},
		{"empty idempotency key", func(p *NewPrompt) { p.Idempotency = &Idempotency{} }},
		{`job "j": empty prompt`, func(p *NewPrompt) { p.Prompt, p.Idempotency = "", &Idempotency{} }},
		{`job "j": negative limits (-1 prompts, 0 characters)`, func(p *NewPrompt) { p.Limits.Prompts = -1 }},
		{`job "j": negative limits (0 prompts, -1 characters)`, func(p *NewPrompt) { p.Limits.Characters = -1 }},
	})
}

func TestValidateArchiveJob(t *testing.T) {
	type args struct {
		projectID, jobID string
		at               time.Time
	}
	at := time.Date(2026, 5, 1, 3, 4, 5, 0, time.UTC)
	validate := func(a args) error { return ValidateArchiveJob(a.projectID, a.jobID, a.at) }
	checkValidate(t, args{"p", "j", at}, validate, []validateCase[args]{
		{"empty project ID", func(a *args) { a.projectID = "" }},
		{"empty job ID", func(a *args) { a.jobID = "" }},
		{`job "j": zero archive time`, func(a *args) { a.at = time.Time{} }},
		{"empty project ID", func(a *args) { *a = args{} }},
	})
}

func TestClaimValidate(t *testing.T) {
	now := time.Date(2026, 5, 1, 3, 4, 5, 0, time.UTC)
	good := Claim{Owner: "w", Now: now, LeaseFor: time.Microsecond, MaxAttempts: 1}
	checkValidate(t, good, Claim.Validate, []validateCase[Claim]{
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

func TestValidateExtendLease(t *testing.T) {
	type args struct {
		jobID    string
		now      time.Time
		leaseFor time.Duration
	}
	now := time.Date(2026, 5, 1, 3, 4, 5, 0, time.UTC)
	validate := func(a args) error { return ValidateExtendLease(a.jobID, a.now, a.leaseFor) }
	checkValidate(t, args{"j", now, time.Minute}, validate, []validateCase[args]{
		// No lease has an empty job ID: that is ErrLeaseLost, not a problem.
		{"", func(a *args) { a.jobID = "" }},
		{"", func(a *args) { a.leaseFor = time.Microsecond }},
		{`job "j": zero current time`, func(a *args) { a.now = time.Time{} }},
		{`job "j": lease duration 0s: must be at least 1µs`, func(a *args) { a.leaseFor = 0 }},
		{`job "j": lease duration 999ns: must be at least 1µs`, func(a *args) { a.leaseFor = time.Microsecond - 1 }},
		{`job "j": lease duration -1m0s: must be at least 1µs`, func(a *args) { a.leaseFor = -time.Minute }},
		{`job "": zero current time`, func(a *args) { *a = args{} }},
	})
}

func TestFinishValidate(t *testing.T) {
	good := Finish{JobID: "j", Owner: "w", Outcome: Completed, Handled: 1}
	checkValidate(t, good, Finish.Validate, []validateCase[Finish]{
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

func TestValidateViewCountsNamesTheFirstBadCount(t *testing.T) {
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	good := ViewCount{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}
	if err := ValidateViewCounts([]ViewCount{good, good}); err != nil {
		t.Fatalf("a good batch: %v", err)
	}
	bad := good
	bad.Path = ""
	err := ValidateViewCounts([]ViewCount{good, bad, {}})
	if !errors.Is(err, ErrInvalid) || problem(t, err) != "count 1: empty path" {
		t.Fatalf("ValidateViewCounts = %v, want count 1's problem", err)
	}
}
