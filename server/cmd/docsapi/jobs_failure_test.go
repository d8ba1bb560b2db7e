package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// jobs failure reads a failed job's reason from the storage, which the API
// keeps from its clients; says that a job that did not fail has none; and
// names an unknown job as such.
func TestJobsFailure(t *testing.T) {
	data := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"DOCSAPI_DATA": data}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://github.com/acme/handbook.git").expect(t, exitOK)
	st, err := sqlite.Open(t.Context(), filepath.Join(data, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"job_failed", "job_active"} {
		if _, _, err := st.CreateJob(t.Context(), store.NewJob{ID: id, ProjectID: "handbook", Prompt: "Fix the typos",
			Repository: "https://github.com/acme/handbook.git", Branch: "docs-agent/" + id, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
	}
	claimed, err := st.ClaimJob(t.Context(), store.Claim{Owner: "w1", Now: at, LeaseFor: time.Minute, MaxAttempts: 3})
	if err != nil || claimed.ID != "job_failed" {
		t.Fatalf("claimed %q, %v", claimed.ID, err)
	}
	const reason = "the agent exited with status 1: the model refused\nstderr: quota exceeded"
	if _, err := st.FinishJob(t.Context(), store.Finish{JobID: "job_failed", Owner: "w1", At: at.Add(time.Minute), Outcome: store.Failed, FailureReason: reason}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r := runCLI(t, env, "", "jobs", "failure", "--project", "handbook", "job_failed")
	r.expect(t, exitOK)
	if want := "job job_failed in project handbook: failed (last change 2026-10-01T12:01:02Z, 1 attempt)\nreason: " + reason + "\n"; r.stdout != want {
		t.Errorf("a failed job:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = runCLI(t, withEnv(env, "DOCSAPI_PROJECT", "handbook"), "", "jobs", "failure", "job_failed", "--format", "json")
	r.expect(t, exitOK)
	var got jobFailureJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--format json: %v\n%s", err, r.stdout)
	}
	if got.ID != "job_failed" || got.Status != "failed" || got.FailureReason == nil || *got.FailureReason != reason || got.Attempts != 1 {
		t.Errorf("--format json: %+v", got)
	}

	r = runCLI(t, env, "", "jobs", "failure", "--project", "handbook", "job_active")
	r.expect(t, exitOK)
	if want := "job job_active in project handbook: active (last change 2026-10-01T12:00:01Z, 0 attempts)\nit did not fail: no failure reason\n"; r.stdout != want {
		t.Errorf("a job that did not fail:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = runCLI(t, env, "", "jobs", "failure", "--project", "handbook", "--format", "json", "job_active")
	if r.expect(t, exitOK); !strings.Contains(r.stdout, `"failureReason":null`) {
		t.Errorf("--format json of a job that did not fail: %s", r.stdout)
	}

	r = runCLI(t, env, "", "jobs", "failure", "--project", "handbook", "job_nope")
	r.expect(t, exitFailure, `no job "job_nope" in project "handbook"`, "docsapi jobs list --status failed")
	if r.stdout != "" {
		t.Errorf("an unknown job printed %q", r.stdout)
	}
	// A job of another project is unknown in this one.
	runCLI(t, env, "", "project", "create", "--id", "other", "--repository", "https://github.com/acme/other.git").expect(t, exitOK)
	runCLI(t, env, "", "jobs", "failure", "--project", "other", "job_failed").expect(t, exitFailure, `no job "job_failed" in project "other"`)

	runCLI(t, env, "", "jobs", "failure", "--project", "handbook").expect(t, exitUsage, "missing argument ID")
	runCLI(t, env, "", "jobs", "failure", "job_failed").expect(t, exitUsage, "no project")
	runCLI(t, env, "", "jobs", "failure", "--project", "handbook", "--format", "xml", "job_failed").expect(t, exitUsage, `unknown format "xml"`)
	runCLI(t, map[string]string{"DOCSAPI_DATA": filepath.Join(t.TempDir(), "none")}, "", "jobs", "failure", "--project", "handbook", "job_failed").
		expect(t, exitFailure)
}
