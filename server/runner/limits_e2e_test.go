package runner_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/agent/sandbox/sandboxtest"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/runner"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// rig is a server and its engine running one project, handbook, on a
// local bare repository, with a sandboxed command agent.
type rig struct {
	srv    *server.Server
	client *docsapi.Client
	bare   string
}

// newRig starts the server and engine of a test; agent is the agent
// program's shell script, git the workspaces' settings. A failed run is
// tried again at once, up to three times, so that a failure that should
// be permanent shows as attempts.
func newRig(t *testing.T, agent string, via command.PromptVia, git gitrepo.Config) *rig {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	sandboxtest.Require(t, sandbox.Check(sandbox.DefaultBwrap))
	ctx := context.Background()
	bare := bareDocsRepo(t)
	script := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nset -e\n"+agent+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	git.Dir = t.TempDir()
	run, err := runner.New(runner.Config{
		Git: git,
		Projects: map[string]runner.Project{"handbook": {
			Host:  runner.Host{Kind: runner.PushOnly},
			Agent: runner.Agent{Kind: runner.Command, Command: command.Config{Command: script, PromptVia: via}},
		}},
	})
	if err != nil {
		t.Fatalf("runner.New: %v", err)
	}
	eng, err := engine.New(engine.Config{Store: st, Owner: "test", Parts: run.Parts, PollInterval: 50 * time.Millisecond,
		RetryDelay: time.Millisecond, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, Jobs: eng})
	if err != nil {
		t.Fatal(err)
	}
	eng.Start()
	t.Cleanup(func() { eng.Shutdown(context.Background()) })
	if _, err := srv.CreateProject(ctx, store.Project{ID: "handbook", Repository: bare, Ref: "main", Model: "test-model"}); err != nil {
		t.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Projects: []string{"handbook"}, Scopes: []store.Scope{store.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	client, err := docsapi.NewClient(key.Secret, docsapi.WithBaseURL(ts.URL), docsapi.WithProjectID("handbook"))
	if err != nil {
		t.Fatal(err)
	}
	return &rig{srv: srv, client: client, bare: bare}
}

// waitParams poll often, for a job that runs in seconds on a busy machine.
var waitParams = docsapi.WaitParams{MinInterval: 20 * time.Millisecond, MaxInterval: 200 * time.Millisecond, Timeout: 3 * time.Minute}

// wantFailed waits for the job and checks that it failed after one run,
// for a reason saying each of want.
func (r *rig) wantFailed(t *testing.T, id string, want ...string) store.Job {
	t.Helper()
	job, err := r.client.AgentJobs.Wait(context.Background(), "", id, waitParams)
	var failed *docsapi.JobFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("Wait = %+v, %v; want the job failed", job, err)
	}
	stored, err := r.srv.Job(context.Background(), "handbook", id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failure reason: %.600s", stored.FailureReason)
	for _, w := range want {
		if !strings.Contains(stored.FailureReason, w) {
			t.Errorf("the failure reason %q does not say %q", stored.FailureReason, w)
		}
	}
	if stored.Attempts != 1 {
		t.Errorf("the job ran %d times; a permanent failure runs once", stored.Attempts)
	}
	return stored
}

// wantNoBranch checks that the job's branch never reached the remote.
func (r *rig) wantNoBranch(t *testing.T, id string) {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", "refs/heads/docs-agent/"+id)
	cmd.Dir = r.bare
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("the remote received the job's branch: %s", out)
	}
	if got := git(t, r.bare, "for-each-ref", "--format=%(refname)"); strings.TrimSpace(got) != "refs/heads/main" {
		t.Errorf("the remote's refs are %q, want main alone", got)
	}
}

// The attack as found: an agent writes 20,003 files, in new folders, and
// the job pushed them as a docs change. Now it fails, once, saying what
// it would have published and what a job may, and the remote gets
// nothing.
func TestJobPastThePublishLimitFails(t *testing.T) {
	r := newRig(t, `mkdir spam && cd spam && for d in 0 1 2 3 4 5 6 7 8 9; do mkdir "d$d"; done
seq -f 'd%01.0f' 0 9 | while read d; do seq -f "$d/f%05.0f.md" 0 1999 | xargs touch; done
mkdir extra && touch extra/a.md extra/b.md extra/c.md`, command.PromptStdin, gitrepo.Config{})
	job, err := r.client.AgentJobs.Create(context.Background(), "", docsapi.CreateJobParams{Prompt: "Fix the typo in the guide"})
	if err != nil {
		t.Fatal(err)
	}
	r.wantFailed(t, job.ID, "publish refused", "the branch would change 20003 files", "a job may publish at most 1000")
	r.wantNoBranch(t, job.ID)
}

// One file of many megabytes fails its job the same way (the limit
// lowered, so that the agent writes 3 MiB rather than 210 MB).
func TestJobPastThePublishedBytesFails(t *testing.T) {
	r := newRig(t, `yes 'a line of the video transcript' | head -c 3145728 > transcript.md`, command.PromptStdin,
		gitrepo.Config{MaxPublishBytes: 2 << 20})
	job, err := r.client.AgentJobs.Create(context.Background(), "", docsapi.CreateJobParams{Prompt: "Add the transcript"})
	if err != nil {
		t.Fatal(err)
	}
	r.wantFailed(t, job.ID, "publish refused", "3145728 bytes", "at most 2097152 bytes (2 MiB)")
	r.wantNoBranch(t, job.ID)
}

// With promptVia arg, the history is one argument, which outgrows what
// Linux passes (128 KiB) as follow-ups come, well within the server's cap
// on a job's characters when they are not ASCII. The run that would not
// start fails the job, once, saying why and what to change: never an
// E2BIG retried until the attempts run out.
func TestPromptArgHistoryPastTheCommandLineFailsTheJob(t *testing.T) {
	r := newRig(t, `echo "one more run" >> guide.md`, command.PromptArg, gitrepo.Config{})
	ctx := context.Background()
	long := strings.Repeat("中", 32000) // 96,000 bytes: one fits, two do not
	job, err := r.client.AgentJobs.CreateAndWait(ctx, "", docsapi.CreateJobParams{Prompt: long}, waitParams)
	if err != nil || job.Status != docsapi.JobStatusCompleted {
		t.Fatalf("the first run: %+v, %v; want completed", job, err)
	}
	if _, err := r.client.AgentJobs.SendMessage(ctx, "", job.ID, docsapi.SendMessageParams{Prompt: long}); err != nil {
		t.Fatal(err)
	}
	stored := r.wantFailed(t, job.ID, "the prompt", "MAX_ARG_STRLEN", "promptVia stdin")
	if strings.Contains(stored.FailureReason, "中中") {
		t.Error("the failure reason quotes the prompt")
	}
}
