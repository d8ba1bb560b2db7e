package server_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// jobEvents records what the server tells a job engine.
type jobEvents struct {
	mu       sync.Mutex
	queued   int
	archived []string
}

func (j *jobEvents) JobQueued() {
	j.mu.Lock()
	j.queued++
	j.mu.Unlock()
}

func (j *jobEvents) JobArchived(id string) {
	j.mu.Lock()
	j.archived = append(j.archived, id)
	j.mu.Unlock()
}

func (j *jobEvents) counts() (int, []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.queued, append([]string(nil), j.archived...)
}

func TestArchiveEndpointAndJobEvents(t *testing.T) {
	events := &jobEvents{}
	e := newEnv(t, func(c *server.Config) { c.Jobs = events })
	_, body := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"p"}`)
	id := servertest.JobOf(t, body)["id"].(string)
	e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/message", `{"prompt":"more"}`)
	// Refused writes queue nothing.
	e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":""}`)
	e.Do("ro", "POST", "/v2/agent/alpha/job", `{"prompt":"p"}`)
	if queued, _ := events.counts(); queued != 2 {
		t.Fatalf("JobQueued called %d times, want 2 (create and message)", queued)
	}

	if resp, body := e.Do("ro", "POST", "/v2/agent/alpha/job/"+id+"/archive", ""); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("read-only archive: %d %s, want 403", resp.StatusCode, body)
	}
	if resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job/job_missing/archive", ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("archive of a missing job: %d %s, want 404", resp.StatusCode, body)
	}
	resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/archive", "")
	job := servertest.JobOf(t, body)
	if resp.StatusCode != http.StatusOK || job["status"] != "archived" || job["archivedAt"] != "2026-08-14T09:00:00Z" {
		t.Fatalf("archive: %d %s", resp.StatusCode, body)
	}
	// Archiving again answers the job unchanged: the first time stays.
	e.Clock.Advance(time.Hour)
	_, body = e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/archive", "")
	if again := servertest.JobOf(t, body); !cmp.Equal(job, again) {
		t.Fatalf("second archive changed the job: %v, then %v", job, again)
	}
	if _, archived := events.counts(); !cmp.Equal(archived, []string{id, id}) {
		t.Fatalf("JobArchived calls = %v, want the job twice", archived)
	}
	if resp, _ := e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/message", `{"prompt":"late"}`); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("message after archive: %d, want 400", resp.StatusCode)
	}
	stored, err := e.Server.Job(t.Context(), "alpha", id)
	if err != nil || len(stored.Prompts) != 2 {
		t.Fatalf("stored job = %+v, %v; want the two prompts and no more", stored, err)
	}
}

// The engine is what the server tells about jobs.
var _ server.JobEvents = (*engine.Engine)(nil)
