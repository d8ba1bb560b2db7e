package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

// Job throughput of the self-hosted server, on each backend (see backends):
// the SDK, as a caller uses it, against server.New's handler on a real local
// listener, storing into the backend's store. No job engine runs
// (server.Config.Jobs is nil), so every job created stays active, waiting
// for an engine: what is measured is the API and the store, not an agent.
// Each case starts from a new, empty store holding one project and one key.

const jobsProject = "handbook"

// jobsPrompt is a typical prompt: a few sentences.
const jobsPrompt = "Document the new rate-limit headers (X-RateLimit-Limit, X-RateLimit-Remaining, " +
	"Retry-After) in the API reference, with an example of backing off after a 429, " +
	"and link the page from the getting-started guide."

// selfHosted is a self-hosted server on a new store, with an SDK client
// holding a write key for its one project.
type selfHosted struct {
	store  store.Store
	client *docsapi.Client
}

// newSelfHosted starts the server on a new store of be; everything is
// closed when the benchmark (each of its runs) ends.
func newSelfHosted(b *testing.B, be backend) *selfHosted {
	b.Helper()
	ctx := context.Background()
	st := be.open(b)
	srv, err := server.New(server.Config{Store: st}) // no Jobs: no engine hears of new jobs
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.CreateProject(ctx, store.Project{
		ID: jobsProject, Repository: "https://github.com/acme/handbook.git", Ref: "main", Model: "claude-sonnet-4-5",
	}); err != nil {
		b.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{
		Name: "bench", Projects: []string{jobsProject}, Scopes: []store.Scope{store.ScopeWrite},
	})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	// A pool larger than the most concurrent callers, so that no call
	// dials a new connection once the pool is warm.
	hc := newHTTPClient()
	b.Cleanup(hc.CloseIdleConnections)
	c, err := docsapi.NewClient(key.Secret,
		docsapi.WithBaseURL(hs.URL), docsapi.WithProjectID(jobsProject), docsapi.WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	return &selfHosted{store: st, client: c}
}

// checkActiveJobs fails b unless the store holds exactly n active jobs, all
// of the project, with the benchmark's prompt. No store method lists or
// counts jobs, so it counts them as an engine would take them: ClaimJob
// leases the oldest ready job, until ErrNoJob says none is left (with no
// engine running, the active jobs are exactly the ready ones), and FinishJob
// completes each one claimed. Completing matters: a job merely leased stays
// in the index of active jobs, which every later claim would scan past, so
// the check would take time quadratic in n. Going through the store.Store
// interface checks every backend the same way. It changes the jobs, so it
// comes after the timed calls, untimed.
func (s *selfHosted) checkActiveJobs(b *testing.B, n int) {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	claim := store.Claim{Owner: "bench-check", Now: now, LeaseFor: time.Hour, MaxAttempts: 1}
	seen := make(map[string]bool, n)
	for {
		job, err := s.store.ClaimJob(ctx, claim)
		if errors.Is(err, store.ErrNoJob) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		switch {
		case seen[job.ID]:
			b.Fatalf("job %s claimed twice", job.ID)
		case job.ProjectID != jobsProject || job.Status != store.JobStatusActive ||
			len(job.Prompts) != 1 || job.Prompts[0].Text != jobsPrompt:
			b.Fatalf("unexpected job in the store: %+v", job)
		}
		seen[job.ID] = true
		if len(seen) > n {
			b.Fatalf("the store holds more than %d active jobs after %d creates", n, n)
		}
		if _, err := s.store.FinishJob(ctx, store.Finish{
			JobID: job.ID, Owner: claim.Owner, At: now, Outcome: store.Completed, Handled: 1,
		}); err != nil {
			b.Fatal(err)
		}
	}
	if len(seen) != n {
		b.Fatalf("the store holds %d active jobs after %d creates", len(seen), n)
	}
}

// checkJob is what every answer must be: an active job of the project's
// repository, created just now.
func checkJob(job *docsapi.Job, wantID string) error {
	switch {
	case job.ID == "" || (wantID != "" && job.ID != wantID):
		return fmt.Errorf("job ID %q, want %q", job.ID, wantID)
	case job.Status != docsapi.JobStatusActive:
		return fmt.Errorf("job %s: status %q, want active (no engine runs)", job.ID, job.Status)
	case job.Source.Repository != "https://github.com/acme/handbook.git" || job.CreatedAt.IsZero():
		return fmt.Errorf("job %s: unexpected %+v", job.ID, job)
	}
	return nil
}

// BenchmarkServerCreateJob: AgentJobs.Create, one job per call, on each
// backend. The store then holds exactly b.N active jobs, which is checked.
func BenchmarkServerCreateJob(b *testing.B) {
	for _, be := range backends() {
		b.Run("backend="+be.name, func(b *testing.B) { benchCreateJob(b, be) })
	}
}

func benchCreateJob(b *testing.B, be backend) {
	ctx := context.Background()
	params := docsapi.CreateJobParams{Prompt: jobsPrompt}
	for _, callers := range callerCounts() {
		b.Run("via=sdk/"+callersName(callers), func(b *testing.B) {
			s := newSelfHosted(b, be)
			runCallers(b, callers, "jobs/s", func(int) error {
				job, err := s.client.AgentJobs.Create(ctx, "", params)
				if err != nil {
					return err
				}
				return checkJob(job, "")
			})
			s.checkActiveJobs(b, b.N)
		})
	}
	// For reference, the store's share: the same write straight into the
	// backend's store, without HTTP, authentication or JSON.
	b.Run("via=store/"+callersName(1), func(b *testing.B) {
		s := newSelfHosted(b, be)
		runCallers(b, 1, "jobs/s", func(i int) error {
			id := fmt.Sprintf("job_bench%015d", i)
			now := time.Now().UTC().Truncate(time.Microsecond)
			_, _, err := s.store.CreateJob(ctx, store.NewJob{
				ID: id, ProjectID: jobsProject, Prompt: jobsPrompt,
				Repository: "https://github.com/acme/handbook.git", Ref: "main", Model: "claude-sonnet-4-5",
				Branch: "docs-agent/" + id, CreatedAt: now,
			})
			return err
		})
		s.checkActiveJobs(b, b.N)
	})
}

// getJobs is how many jobs BenchmarkServerGetJob reads in turn.
const getJobs = 100

// BenchmarkServerGetJob: AgentJobs.Get on each backend, cycling over 100
// jobs created through the API beforehand; every answer is checked to be
// the job asked for.
func BenchmarkServerGetJob(b *testing.B) {
	for _, be := range backends() {
		b.Run("backend="+be.name, func(b *testing.B) { benchGetJob(b, be) })
	}
}

func benchGetJob(b *testing.B, be backend) {
	ctx := context.Background()
	setup := func(b *testing.B) (*selfHosted, []string) {
		s := newSelfHosted(b, be)
		ids := make([]string, getJobs)
		for i := range ids {
			job, err := s.client.AgentJobs.Create(ctx, "", docsapi.CreateJobParams{Prompt: jobsPrompt})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = job.ID
		}
		return s, ids
	}
	for _, callers := range callerCounts() {
		b.Run("via=sdk/"+callersName(callers), func(b *testing.B) {
			s, ids := setup(b)
			runCallers(b, callers, "jobs/s", func(i int) error {
				id := ids[i%len(ids)]
				job, err := s.client.AgentJobs.Get(ctx, "", id)
				if err != nil {
					return err
				}
				return checkJob(job, id)
			})
		})
	}
	b.Run("via=store/"+callersName(1), func(b *testing.B) {
		s, ids := setup(b)
		runCallers(b, 1, "jobs/s", func(i int) error {
			id := ids[i%len(ids)]
			job, err := s.store.Job(ctx, jobsProject, id)
			if err != nil {
				return err
			}
			if job.ID != id || len(job.Prompts) != 1 || job.Prompts[0].Text != jobsPrompt {
				return fmt.Errorf("store returned %+v for job %s", job, id)
			}
			return nil
		})
	})
}
