package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// Job throughput of the self-hosted server on SQLite: the SDK, as a caller
// uses it, against server.New's handler on a real local listener, storing
// into a database file. No job engine runs (server.Config.Jobs is nil), so
// every job created stays active, waiting for an engine: what is measured is
// the API and the store, not an agent. Each case starts from a new database
// holding one project and one key.

const jobsProject = "handbook"

// jobsPrompt is a typical prompt: a few sentences.
const jobsPrompt = "Document the new rate-limit headers (X-RateLimit-Limit, X-RateLimit-Remaining, " +
	"Retry-After) in the API reference, with an example of backing off after a 429, " +
	"and link the page from the getting-started guide."

// selfHosted is a self-hosted server on a fresh SQLite file, with an SDK
// client holding a write key for its one project.
type selfHosted struct {
	db     string // the database file
	store  *sqlite.Store
	client *docsapi.Client
}

// newSelfHosted starts the server; everything is closed when the benchmark
// (each of its runs) ends.
func newSelfHosted(b *testing.B) *selfHosted {
	b.Helper()
	ctx := context.Background()
	db := filepath.Join(b.TempDir(), "docsapi.db")
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := st.Close(); err != nil {
			b.Error(err)
		}
	})
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
	return &selfHosted{db: db, store: st, client: c}
}

// activeJobs counts the project's active jobs in the database file, read
// apart from the store under test.
func (s *selfHosted) activeJobs(b *testing.B) int {
	b.Helper()
	conn, err := sql.Open("sqlite", "file:"+filepath.ToSlash(s.db)+"?_pragma=query_only(1)")
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(`SELECT count(*) FROM jobs WHERE project_id = ? AND status = 'active'`, jobsProject).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
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

// BenchmarkServerCreateJob: AgentJobs.Create, one job per call. The store
// then holds exactly b.N active jobs, which is checked.
func BenchmarkServerCreateJob(b *testing.B) {
	ctx := context.Background()
	params := docsapi.CreateJobParams{Prompt: jobsPrompt}
	for _, callers := range callerCounts() {
		b.Run("via=sdk/"+callersName(callers), func(b *testing.B) {
			s := newSelfHosted(b)
			runCallers(b, callers, "jobs/s", func(int) error {
				job, err := s.client.AgentJobs.Create(ctx, "", params)
				if err != nil {
					return err
				}
				return checkJob(job, "")
			})
			if n := s.activeJobs(b); n != b.N {
				b.Fatalf("the store holds %d active jobs after %d creates", n, b.N)
			}
		})
	}
	// For reference, the store's share: the same write straight into the
	// sqlite.Store, without HTTP, authentication or JSON.
	b.Run("via=store/"+callersName(1), func(b *testing.B) {
		s := newSelfHosted(b)
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
		if n := s.activeJobs(b); n != b.N {
			b.Fatalf("the store holds %d active jobs after %d creates", n, b.N)
		}
	})
}

// getJobs is how many jobs BenchmarkServerGetJob reads in turn.
const getJobs = 100

// BenchmarkServerGetJob: AgentJobs.Get, cycling over 100 jobs created
// through the API beforehand; every answer is checked to be the job asked for.
func BenchmarkServerGetJob(b *testing.B) {
	ctx := context.Background()
	setup := func(b *testing.B) (*selfHosted, []string) {
		s := newSelfHosted(b)
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
