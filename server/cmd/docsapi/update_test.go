package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/docsupdate"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/runner"
	"github.com/docsapi/docsapi-go/server/store"
)

// wakeUpdater forwards the Server's wake-ups to an Updater made after it.
type wakeUpdater struct {
	mu sync.Mutex
	u  *docsupdate.Updater
}

func (w *wakeUpdater) DocsUpdateQueued() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.u != nil {
		w.u.DocsUpdateQueued()
	}
}

// updateEnv is a server whose project alpha reads a real repository and
// beta a repository that does not exist; with run, an Updater works for
// both.
func updateEnv(t *testing.T, run bool) *servertest.Env {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is required")
	}
	wake := &wakeUpdater{}
	e := servertest.New(t, func(c *server.Config) { c.DocsUpdates = wake })
	for id, repo := range map[string]string{"alpha": bareRepo(t, gitBin), "beta": filepath.Join(t.TempDir(), "missing.git")} {
		p, err := e.Store.Project(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		p.Repository, p.Ref = repo, "main"
		if err := e.Store.UpdateProject(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	if !run {
		return e
	}
	repos, err := gitrepo.New(gitrepo.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	u, err := docsupdate.New(docsupdate.Config{Store: e.Store, Owner: "cli-test", Now: e.Clock.Now, RefreshInterval: -1,
		Refresh:      func(store.Project) bool { return false }, // no first index at start: the command makes it
		PollInterval: time.Hour, Trees: func(context.Context, store.Project) (docsupdate.TreeReader, error) { return repos, nil }})
	if err != nil {
		t.Fatal(err)
	}
	wake.mu.Lock()
	wake.u = u
	wake.mu.Unlock()
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); u.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	return e
}

// TestUpdateCommand: 'docsapi update' prints the status ID; with --wait it
// prints progress on stderr and the ended status on stdout, exit 0 on
// success, 3 on failure, 4 when the wait times out.
func TestUpdateCommand(t *testing.T) {
	e := updateEnv(t, true)
	base := e.Serve()
	env := map[string]string{"DOCSAPI_KEY": e.Keys["rw"], "DOCSAPI_BASE_URL": base, "DOCSAPI_PROJECT": "alpha"}

	r := runCLI(t, env, "", "update", "--wait", "--poll-interval", "10ms")
	r.expect(t, exitOK, ": success [", "pages indexed")
	var got struct {
		StatusID, Status, Summary string
		Commit                    struct {
			Ref          string
			FilesChanged map[string][]string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not the status as JSON: %v\n%s", err, r.stdout)
	}
	if !strings.HasPrefix(got.StatusID, "upd_") || got.Status != "success" || got.Commit.Ref != "main" ||
		strings.Join(got.Commit.FilesChanged["added"], ",") != "guide.md" {
		t.Errorf("printed status: %+v", got)
	}

	r = runCLI(t, env, "", "update")
	r.expect(t, exitOK)
	if !strings.Contains(r.stdout, `"statusId": "upd_`) {
		t.Errorf("update without --wait printed %q, want the status ID", r.stdout)
	}

	beta := withEnv(withEnv(env, "DOCSAPI_KEY", e.Keys["beta"]), "DOCSAPI_PROJECT", "beta")
	r = runCLI(t, beta, "", "update", "--wait", "--poll-interval", "10ms")
	r.expect(t, exitJobFailed, "failed: failed: ", "previous index still serves")
	if !strings.Contains(r.stdout, `"status": "failure"`) {
		t.Errorf("stdout of the failed update: %s", r.stdout)
	}

	idle := updateEnv(t, false) // no updater: the update stays queued
	env = map[string]string{"DOCSAPI_KEY": idle.Keys["rw"], "DOCSAPI_BASE_URL": idle.Serve(), "DOCSAPI_PROJECT": "alpha"}
	r = runCLI(t, env, "", "update", "--wait", "--poll-interval", "10ms", "--timeout", "200ms")
	r.expect(t, exitWaitTimeout, "stopped waiting after", "goes on")
	if !strings.Contains(r.stdout, `"status": "queued"`) {
		t.Errorf("stdout of the timed-out wait: %s", r.stdout)
	}
}

// TestDocsConfig: docs.refreshInterval absent takes the updater's default,
// "0s" turns the periodic refresh off, a negative one is refused; the
// periodic refresh covers the configured projects, whose docsRoot the
// updater reads pages under.
func TestDocsConfig(t *testing.T) {
	for _, tc := range []struct {
		file string
		want time.Duration
	}{
		{`{}`, 0},
		{`{"docs": {"refreshInterval": "0s"}}`, -1},
		{`{"docs": {"refreshInterval": "1h", "timeout": "2m"}}`, time.Hour},
	} {
		cfg, err := decodeConfig([]byte(tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if err := checkDocsConfig(cfg.Docs); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		got := docsUpdaterConfig(cfg.Docs, nil, nil, resolvedProjects{}, nil)
		if got.RefreshInterval != tc.want {
			t.Errorf("%s: RefreshInterval %v, want %v", tc.file, got.RefreshInterval, tc.want)
		}
	}
	cfg, err := decodeConfig([]byte(`{"docs": {"refreshInterval": "-1m"}}`))
	if err == nil {
		err = checkDocsConfig(cfg.Docs)
	}
	if err == nil || !strings.Contains(err.Error(), "refreshInterval") {
		t.Errorf("a negative refreshInterval: %v, want refused naming it", err)
	}
	projects := resolvedProjects{runner: map[string]runner.Project{"handbook": {}}, docs: map[string]docs.Options{"handbook": {Root: "docs"}}}
	got := docsUpdaterConfig(docsConfig{}, nil, nil, projects, nil)
	if !got.Refresh(store.Project{ID: "handbook"}) || got.Refresh(store.Project{ID: "other"}) {
		t.Errorf("Refresh covers handbook %v, other %v; want the configured project only",
			got.Refresh(store.Project{ID: "handbook"}), got.Refresh(store.Project{ID: "other"}))
	}
	if o := got.Options(store.Project{ID: "handbook"}); o.Root != "docs" {
		t.Errorf("handbook's options %+v, want root docs", o)
	}
}
