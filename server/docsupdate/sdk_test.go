package docsupdate_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/docsupdate"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// wakeLater forwards the Server's wake-ups to an Updater made after it.
type wakeLater struct {
	mu sync.Mutex
	u  *docsupdate.Updater
}

func (w *wakeLater) DocsUpdateQueued() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.u != nil {
		w.u.DocsUpdateQueued()
	}
}

// TestSDKTriggersAndWaitsForAnUpdate drives the endpoints exactly as an SDK
// user does (Deployments.TriggerUpdate, then WaitUpdate) against a Server
// whose answers are checked against openapi.yaml, with an Updater reading a
// real repository; a second update after a commit reports the one file
// changed. Another project's key cannot read the status, and a read-only
// key cannot trigger.
func TestSDKTriggersAndWaitsForAnUpdate(t *testing.T) {
	wake := &wakeLater{}
	env := servertest.New(t, func(c *server.Config) { c.DocsUpdates = wake })
	r := newRepo(t, site())
	p, err := env.Store.Project(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	p.Repository, p.Domain = r.bare, "alpha-docs"
	if err := env.Store.UpdateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	repos, err := gitrepo.New(gitrepo.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	u, err := docsupdate.New(docsupdate.Config{
		Store: env.Store, Owner: "w1", Now: env.Clock.Now, RefreshInterval: -1, PollInterval: time.Hour,
		Refresh: func(store.Project) bool { return false }, // no first index at start: the trigger makes it
		Trees:   func(context.Context, store.Project) (docsupdate.TreeReader, error) { return repos, nil },
	})
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

	base := env.Serve()
	client := func(key string) *docsapi.Client {
		c, err := docsapi.NewClient(env.Keys[key], docsapi.WithBaseURL(base), docsapi.WithProjectID("alpha"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rw := client("rw")
	wait := docsapi.UpdateWaitParams{MinInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond, Timeout: 2 * time.Minute}

	trig, err := rw.Deployments.TriggerUpdate(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := rw.Deployments.WaitUpdate(t.Context(), trig.StatusID, wait)
	if err != nil {
		t.Fatalf("WaitUpdate: %v (status %+v)", err, st)
	}
	if st.ID != trig.StatusID || st.ProjectID != "alpha" || st.Status != docsapi.UpdateStateSuccess || st.Subdomain != "alpha-docs" ||
		st.Author != nil || st.EndedAt.IsZero() || st.Commit.Ref != "main" || len(st.Commit.SHA) != 40 {
		t.Errorf("first update as the SDK reads it: %+v", st)
	}
	if want := []string{"api.mdx", "docs.json", "guide.mdx", "index.mdx"}; !slices.Equal(st.Commit.FilesChanged.Added, want) {
		t.Errorf("filesChanged.added %v, want %v", st.Commit.FilesChanged.Added, want)
	}

	r.commit("Guide: use go get", map[string]string{"guide.mdx": "# Guide\n\nInstall with go get.\n"})
	trig, err = rw.Deployments.TriggerUpdate(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	st, err = rw.Deployments.WaitUpdate(t.Context(), trig.StatusID, wait)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Commit.FilesChanged.Modified, []string{"guide.mdx"}) || st.Commit.Message != "Guide: use go get\n" || st.Source != "api" {
		t.Errorf("second update: commit %+v, source %q", st.Commit, st.Source)
	}

	if _, err := client("beta").Deployments.UpdateStatus(t.Context(), trig.StatusID); !errors.Is(err, docsapi.ErrNotFound) {
		t.Errorf("another project's key reading the status: %v, want %v", err, docsapi.ErrNotFound)
	}
	if _, err := client("ro").Deployments.TriggerUpdate(t.Context(), ""); !errors.Is(err, docsapi.ErrForbidden) {
		t.Errorf("a read-only key triggering: %v, want %v", err, docsapi.ErrForbidden)
	}
	if _, err := rw.Deployments.UpdateStatus(t.Context(), "upd_unknown"); !errors.Is(err, docsapi.ErrNotFound) {
		t.Errorf("an unknown status: %v, want %v", err, docsapi.ErrNotFound)
	}
}
