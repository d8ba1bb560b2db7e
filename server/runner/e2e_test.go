package runner_test

import (
	"context"
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

// git runs git in dir for the test's own set-up and checks.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// bareDocsRepo makes a bare repository whose main branch holds guide.md.
func bareDocsRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "docs.git")
	git(t, root, "init", "--bare", bare)
	work := filepath.Join(root, "scratch")
	git(t, root, "clone", bare, work)
	if err := os.WriteFile(filepath.Join(work, "guide.md"), []byte("# Guide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "guide.md")
	git(t, work, "commit", "-m", "Initial docs")
	git(t, work, "push", "origin", "HEAD:main")
	return bare
}

// TestSDKToPushedBranch runs a job the way a user meets it: the SDK creates
// it on the server, the engine clones the repository, a command agent edits
// a file, the branch is pushed, and the SDK sees the job completed. A
// follow-up then continues on the same branch. The agent runs in the
// sandbox, as it does by default.
func TestSDKToPushedBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	sandboxtest.Require(t, sandbox.Check(sandbox.DefaultBwrap))
	ctx := context.Background()
	bare := bareDocsRepo(t)

	// The agent: appends the newest instruction to guide.md.
	script := filepath.Join(t.TempDir(), "agent.sh")
	agentSource := "#!/bin/sh\nset -e\nprintf '\\n%s\\n' \"$(tail -n 1)\" >> guide.md\n"
	if err := os.WriteFile(script, []byte(agentSource), 0o755); err != nil {
		t.Fatal(err)
	}

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := runner.New(runner.Config{
		// Not the default, the system's temporary folder: the mirror
		// of the test's repository would outlive the test there.
		Git: gitrepo.Config{Dir: t.TempDir()},
		Projects: map[string]runner.Project{"handbook": {
			Host:  runner.Host{Kind: runner.PushOnly},
			Agent: runner.Agent{Kind: runner.Command, Command: command.Config{Command: script, PromptVia: command.PromptStdin}},
		}},
	})
	if err != nil {
		t.Fatalf("runner.New: %v", err)
	}
	eng, err := engine.New(engine.Config{Store: st, Owner: "test", Parts: run.Parts, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, Jobs: eng})
	if err != nil {
		t.Fatal(err)
	}
	eng.Start()
	defer eng.Shutdown(ctx)
	if _, err := srv.CreateProject(ctx, store.Project{ID: "handbook", Repository: bare, Ref: "main", Model: "test-model"}); err != nil {
		t.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Projects: []string{"handbook"}, Scopes: []store.Scope{store.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	client, err := docsapi.NewClient(key.Secret, docsapi.WithBaseURL(ts.URL), docsapi.WithProjectID("handbook"))
	if err != nil {
		t.Fatal(err)
	}
	fast := docsapi.WaitParams{MinInterval: 20 * time.Millisecond, MaxInterval: 100 * time.Millisecond, Timeout: time.Minute}
	job, err := client.AgentJobs.CreateAndWait(ctx, "", docsapi.CreateJobParams{Prompt: "Add a troubleshooting section"}, fast)
	if err != nil {
		t.Fatalf("CreateAndWait: %v (job %+v)", err, job)
	}
	if job.Status != docsapi.JobStatusCompleted || job.PRLink != "" || job.Model != "test-model" {
		t.Fatalf("job = %+v, want completed without a pull request (push-only)", job)
	}
	branch := "docs-agent/" + job.ID
	if got := git(t, bare, "diff", "--name-status", "main", branch); strings.TrimSpace(got) != "M\tguide.md" {
		t.Fatalf("the branch changes %q, want exactly guide.md modified", got)
	}
	if got := git(t, bare, "show", branch+":guide.md"); got != "# Guide\n\nAdd a troubleshooting section\n" {
		t.Fatalf("guide.md on the branch = %q", got)
	}

	if _, err := client.AgentJobs.SendMessage(ctx, "", job.ID, docsapi.SendMessageParams{Prompt: "Also link the FAQ"}); err != nil {
		t.Fatal(err)
	}
	job, err = client.AgentJobs.Wait(ctx, "", job.ID, fast)
	if err != nil || job.Status != docsapi.JobStatusCompleted {
		t.Fatalf("after the follow-up: %+v, %v", job, err)
	}
	if got := git(t, bare, "show", branch+":guide.md"); got != "# Guide\n\nAdd a troubleshooting section\n\nAlso link the FAQ\n" {
		t.Fatalf("guide.md after the follow-up = %q", got)
	}
	if n := strings.Count(git(t, bare, "log", "--format=%s", "main.."+branch), "\n"); n != 2 {
		t.Fatalf("the branch has %d commits over main, want 2 (one per run, on the same branch)", n)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	// The sandbox is off: the test is about the refusals of the runner's
	// own settings, not about whether this machine can run the sandbox.
	good := runner.Agent{Kind: runner.Command, Command: command.Config{Command: "sh", Sandbox: sandbox.Config{Mode: sandbox.Off}}}
	for name, cfg := range map[string]runner.Config{
		"no projects":          {},
		"unknown host":         {Projects: map[string]runner.Project{"p": {Host: runner.Host{Kind: "bitbucket"}, Agent: good}}},
		"github without token": {Projects: map[string]runner.Project{"p": {Host: runner.Host{Kind: runner.GitHub}, Agent: good}}},
		"unknown agent":        {Projects: map[string]runner.Project{"p": {Host: runner.Host{Kind: runner.PushOnly}, Agent: runner.Agent{Kind: "magic"}}}},
		"command without program": {Projects: map[string]runner.Project{"p": {Host: runner.Host{Kind: runner.PushOnly},
			Agent: runner.Agent{Kind: runner.Command}}}},
	} {
		if _, err := runner.New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		} else if name != "no projects" && !strings.Contains(err.Error(), `project "p"`) {
			t.Errorf("%s: error %q does not name the project", name, err)
		}
	}
	r, err := runner.New(runner.Config{Projects: map[string]runner.Project{"p": {Host: runner.Host{Kind: runner.PushOnly}, Agent: good}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Parts(context.Background(), store.Project{ID: "other"}); err == nil || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("Parts of an unconfigured project: %v, want an error naming it", err)
	}
}
