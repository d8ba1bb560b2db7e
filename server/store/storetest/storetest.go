// Package storetest is the conformance suite of store.Store: one set of tests
// that every storage backend must pass unchanged, so the server behaves the
// same whichever backend it runs on. A backend calls Run from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := mybackend.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
//			return storetest.Opened(t, s, err)
//		})
//	}
//
// The suite tells every time from a fixed base time (see At), and tests
// lease expiry on a store told the time by claiming with a later
// Claim.Now, without reading the clock or sleeping. A store.LeaseClock
// (PostgreSQL), whose leases follow its database's clock, cannot be told
// the time: the lease tests then read that clock, wait on it for short
// leases to end, and tell the store times a day off it, which its leases
// must not depend on (see leasetimes.go).
package storetest

import (
	"crypto/sha256"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docsapi/docsapi-go/server/store"
)

// Run runs the whole suite against the backend that open creates. Each call
// to open must return a new, empty store; the backend closes it itself (with
// t.Cleanup). Every subtest opens its own store, so a failure in one cannot
// disturb another and any subtest can be run alone with -run.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	areas := []struct {
		name string
		run  func(*testing.T, opener)
	}{
		{"Projects", testProjects},
		{"Keys", testKeys},
		{"Jobs", testJobs},
		{"JobList", testJobList},
		{"Idempotency", testIdempotency},
		{"PromptCaps", testPromptCaps},
		{"Leases", testLeases},
		{"Views", testViews},
		{"ViewSeries", testViewSeries},
		{"Agents", testAgents},
		{"Concurrency", testConcurrency},
		{"Inputs", testInputs},
		{"Feedback", testFeedback},
		{"Searches", testSearches},
		{"SiteTokens", testSiteTokens},
		{"Visitors", testVisitors},
		{"QueryByPath", testQueryByPath},
		{"Sessions", testSessions},
		{"Docs", testDocs},
		{"DocsUpdates", testDocsUpdates},
		{"Domains", testDomains},
		{"AssistantKeys", testAssistantKeys},
		{"Conversations", testConversations},
		{"Ping", testPing},
	}
	for _, a := range areas {
		t.Run(a.name, func(t *testing.T) { a.run(t, open) })
	}
}

// testPing checks the one thing Ping promises on a working store. Close is
// not called: the backend closes the store itself, and a second Close may
// rightly fail.
func testPing(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"PingAnswersOnOpenStore", func(t *testing.T, s store.Store) {
			must(t, "Ping", s.Ping(t.Context()))
		}},
	})
}

// opener is the type of Run's open argument.
type opener = func(t *testing.T) store.Store

// subtest is one named behaviour of an area.
type subtest struct {
	name string
	run  func(t *testing.T, s store.Store)
}

// runAll runs each subtest against a store of its own.
func runAll(t *testing.T, open opener, tests []subtest) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

// base is the suite's clock. It carries whole microseconds that are not whole
// milliseconds, so a backend that keeps only milliseconds (or seconds) fails
// the round trips. It lies far in the future, so that a backend that
// wrongly consults the wall clock gets verdicts that do not depend on the
// day the suite runs.
var base = time.Date(2100, time.March, 4, 5, 6, 7, 123456000, time.UTC)

// At returns the suite's fixed base time plus d, in UTC with microsecond
// precision (for any d in whole microseconds). Backends may use it in their
// own tests to stay in step with the suite's times.
func At(d time.Duration) time.Time { return base.Add(d) }

// Hash returns the SHA-256 of s: a stand-in for the key and request hashes
// the server computes.
func Hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// NewProject returns a project with every field set, created at At(0).
func NewProject(id string) store.Project {
	return store.Project{
		ID:         id,
		Name:       "Project " + id,
		Repository: "https://git.example.com/" + id + "/docs.git",
		Ref:        "main",
		Model:      "model-" + id,
		Domain:     "docs-" + id,
		CreatedAt:  At(0),
	}
}

// NewJob returns a job to create in projectID with every field set and no
// idempotency key.
func NewJob(projectID, jobID string, createdAt time.Time) store.NewJob {
	return store.NewJob{
		ID:         jobID,
		ProjectID:  projectID,
		Prompt:     "Document the new flag of " + jobID,
		Repository: "https://git.example.com/" + projectID + "/docs.git",
		Ref:        "main",
		Model:      "model-" + projectID,
		Branch:     "docs-agent/" + jobID,
		CreatedAt:  createdAt,
	}
}

// createdJob is the job CreateJob must store for nj.
func createdJob(nj store.NewJob) store.Job {
	return store.Job{
		ID:         nj.ID,
		ProjectID:  nj.ProjectID,
		Status:     store.JobStatusActive,
		Repository: nj.Repository,
		Ref:        nj.Ref,
		Model:      nj.Model,
		Branch:     nj.Branch,
		Prompts:    []store.Prompt{{Text: nj.Prompt, At: nj.CreatedAt}},
		CreatedAt:  nj.CreatedAt,
		// A job that was never changed was last updated when it was
		// created (store.go).
		UpdatedAt: nj.CreatedAt,
	}
}

// Options for cmp: nil and empty slices are the same list (a backend need
// not remember which it was given); UpdatedAt is compared only where the
// suite pins it (see createdJob and the UpdatedAt subtest).
var (
	equateEmpty     = cmpopts.EquateEmpty()
	ignoreUpdatedAt = cmpopts.IgnoreFields(store.Job{}, "UpdatedAt")
)

// diff reports a difference between want and got as a test error.
func diff(t *testing.T, what string, want, got any, opts ...cmp.Option) {
	t.Helper()
	opts = append(opts, equateEmpty)
	if d := cmp.Diff(want, got, opts...); d != "" {
		t.Errorf("%s: mismatch (-want +got):\n%s", what, d)
	}
}

// diffJob compares two jobs field by field, UpdatedAt aside, and checks that
// got's times are UTC with microsecond precision.
func diffJob(t *testing.T, what string, want, got store.Job) {
	t.Helper()
	diff(t, what, want, got, ignoreUpdatedAt)
	checkTimes(t, what, jobTimes(got)...)
}

// jobTimes lists every time of j.
func jobTimes(j store.Job) []time.Time {
	ts := []time.Time{j.LeaseExpiresAt, j.CreatedAt, j.UpdatedAt, j.ArchivedAt}
	for _, p := range j.Prompts {
		ts = append(ts, p.At)
	}
	return ts
}

// checkTimes checks the storage conventions of store.go on returned times:
// UTC and whole microseconds. Zero times are "not set" and exempt.
func checkTimes(t *testing.T, what string, times ...time.Time) {
	t.Helper()
	for _, tm := range times {
		if tm.IsZero() {
			continue
		}
		if tm.Location() != time.UTC {
			t.Errorf("%s: time %v is in location %q, want UTC", what, tm, tm.Location())
		}
		if tm.Nanosecond()%1000 != 0 {
			t.Errorf("%s: time %v has sub-microsecond digits, want microsecond precision", what, tm)
		}
	}
}

// wantErr checks that err matches target with errors.Is.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error = %v, want %v", what, err, target)
	}
}

// must stops the test if a step the test builds on failed.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// mustProject creates the project id (as NewProject describes it).
func mustProject(t *testing.T, s store.Store, id string) store.Project {
	t.Helper()
	p := NewProject(id)
	must(t, "CreateProject "+id, s.CreateProject(t.Context(), p))
	return p
}

// mustCreateJob creates nj, which must not be a replay.
func mustCreateJob(t *testing.T, s store.Store, nj store.NewJob) store.Job {
	t.Helper()
	j, replayed, err := s.CreateJob(t.Context(), nj)
	must(t, "CreateJob "+nj.ID, err)
	if replayed {
		t.Fatalf("CreateJob %s: replayed = true for a new job", nj.ID)
	}
	return j
}

// mustJob reads a job back.
func mustJob(t *testing.T, s store.Store, projectID, jobID string) store.Job {
	t.Helper()
	j, err := s.Job(t.Context(), projectID, jobID)
	must(t, "Job "+jobID, err)
	return j
}

// mustAddPrompt appends a prompt without an idempotency key.
func mustAddPrompt(t *testing.T, s store.Store, projectID, jobID, text string, at time.Time) store.Job {
	t.Helper()
	j, replayed, err := s.AddPrompt(t.Context(), store.NewPrompt{ProjectID: projectID, JobID: jobID, Prompt: text, At: at})
	must(t, "AddPrompt "+jobID, err)
	if replayed {
		t.Fatalf("AddPrompt %s: replayed = true without an idempotency key", jobID)
	}
	return j
}

// Lease parameters of most claims: long enough that no claim in a test
// expires it by accident, and enough attempts that none fails a job.
const (
	leaseFor    = 10 * time.Minute
	maxAttempts = 5
)

// claim asks for a job on behalf of owner at now.
func claim(t *testing.T, s store.Store, owner string, now time.Time) (store.Job, error) {
	t.Helper()
	return s.ClaimJob(t.Context(), store.Claim{Owner: owner, Now: now, LeaseFor: leaseFor, MaxAttempts: maxAttempts})
}

// mustClaim claims a job that must be wantID.
func mustClaim(t *testing.T, s store.Store, owner string, now time.Time, wantID string) store.Job {
	t.Helper()
	j, err := claim(t, s, owner, now)
	must(t, "ClaimJob by "+owner, err)
	if j.ID != wantID {
		t.Fatalf("ClaimJob by %s: got job %q, want %q", owner, j.ID, wantID)
	}
	return j
}

// wantNoJob checks that no job is ready at now.
func wantNoJob(t *testing.T, s store.Store, what string, now time.Time) {
	t.Helper()
	j, err := claim(t, s, "probe", now)
	if !errors.Is(err, store.ErrNoJob) {
		t.Errorf("%s: ClaimJob = job %q, error %v; want %v", what, j.ID, err, store.ErrNoJob)
	}
}

// mustFinish finishes a run that must succeed.
func mustFinish(t *testing.T, s store.Store, f store.Finish) store.Job {
	t.Helper()
	j, err := s.FinishJob(t.Context(), f)
	must(t, "FinishJob "+f.JobID+" by "+f.Owner, err)
	return j
}

// Opened returns s, a store its backend's Open just returned with err, and
// closes it when the test ends. A failed Open stops the test at once; a
// failed Close fails it at its end.
func Opened[S io.Closer](t testing.TB, s S, err error) S {
	t.Helper()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
