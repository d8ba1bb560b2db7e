package docsupdate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/docsupdate"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/store"
)

const navJSON = `{"navigation": {"groups": [{"group": "Start", "pages": ["index", "guide", "api"]}]}}`

func site() map[string]string {
	return map[string]string{
		"docs.json":  navJSON,
		"index.mdx":  "---\ntitle: Home\n---\n\nWelcome to the docs.\n",
		"guide.mdx":  "# Guide\n\nInstall with go install.\n",
		"api.mdx":    "# API\n\nThe endpoints.\n",
		"README.txt": "not a page",
	}
}

// TestFirstIndexThenOnlyTheChangedFileIsRead: the first update reads every
// documentation file; a commit changing one page makes the next read that
// page alone (and the navigation, always read), and the index serves the
// new text with the others untouched.
func TestFirstIndexThenOnlyTheChangedFileIsRead(t *testing.T) {
	e := newEnv(t, site())
	u := e.updater("w1")
	first := e.update(u)
	wantSuccess(t, first)
	read, _ := e.reader.last()
	if want := []string{"api.mdx", "docs.json", "guide.mdx", "index.mdx"}; !slices.Equal(read, want) {
		t.Errorf("first index read %v, want %v", read, want)
	}
	if !slices.Equal(first.Commit.Added, []string{"api.mdx", "docs.json", "guide.mdx", "index.mdx"}) || len(first.Commit.Modified)+len(first.Commit.Removed) != 0 {
		t.Errorf("first index's filesChanged: %+v", first.Commit)
	}
	if first.Commit.Ref != "main" || first.Commit.Message != "Initial docs\n" || len(first.Commit.SHA) != 40 {
		t.Errorf("first index's commit: %+v", first.Commit)
	}
	if !strings.Contains(e.page("/guide"), "go install") {
		t.Fatalf("/guide after the first index: %q", e.page("/guide"))
	}

	e.repo.commit("Guide: use go get", map[string]string{"guide.mdx": "# Guide\n\nInstall with go get.\n"})
	second := e.update(u)
	wantSuccess(t, second)
	read, _ = e.reader.last()
	if want := []string{"docs.json", "guide.mdx"}; !slices.Equal(read, want) {
		t.Errorf("update after one page changed read %v, want %v (the page and the navigation)", read, want)
	}
	if !slices.Equal(second.Commit.Modified, []string{"guide.mdx"}) || len(second.Commit.Added)+len(second.Commit.Removed) != 0 {
		t.Errorf("filesChanged: %+v, want guide.mdx modified alone", second.Commit)
	}
	if second.Commit.Message != "Guide: use go get\n" {
		t.Errorf("commit message %q", second.Commit.Message)
	}
	if !strings.Contains(second.Summary, "1 pages updated from 1 changed files, 0 files removed") {
		t.Errorf("summary %q", second.Summary)
	}
	if got := e.page("/guide"); !strings.Contains(got, "go get") || strings.Contains(got, "go install") {
		t.Errorf("/guide after the update: %q", got)
	}
	if !strings.Contains(e.page("/api"), "endpoints") || !strings.Contains(e.page("/"), "Welcome") {
		t.Errorf("the unchanged pages are gone: /api %q, / %q", e.page("/api"), e.page("/"))
	}
	hits, err := e.st.SearchDocs(t.Context(), store.DocsQuery{ProjectID: "alpha", Query: "go get", Limit: 5})
	if err != nil || len(hits) == 0 || hits[0].Path != "/guide" || !slices.Equal(hits[0].Groups, []string{"Start"}) {
		t.Errorf("search after the update: %+v, %v; want /guide in group Start", hits, err)
	}

	// Nothing changed: nothing read, nothing written.
	third := e.update(u)
	wantSuccess(t, third)
	read, _ = e.reader.last()
	if !slices.Equal(read, []string{"docs.json"}) || !strings.HasPrefix(third.Summary, "no change") {
		t.Errorf("update without a change read %v, summary %q", read, third.Summary)
	}
}

// TestNavigationChangeRereadsEveryPage: docs.json gives every page its
// groups and decides which are searchable, so a change to it reads all.
func TestNavigationChangeRereadsEveryPage(t *testing.T) {
	e := newEnv(t, site())
	u := e.updater("w1")
	wantSuccess(t, e.update(u))
	e.repo.commit("Hide the API page", map[string]string{
		"docs.json": `{"navigation": {"groups": [{"group": "Begin", "pages": ["index", "guide"]}]}}`,
	})
	got := e.update(u)
	wantSuccess(t, got)
	read, _ := e.reader.last()
	if want := []string{"api.mdx", "docs.json", "guide.mdx", "index.mdx"}; !slices.Equal(read, want) {
		t.Errorf("read %v after docs.json changed, want every file %v", read, want)
	}
	if !strings.Contains(got.Summary, "every page read (docs.json changed)") {
		t.Errorf("summary %q", got.Summary)
	}
	if e.page("/api") != "" {
		t.Errorf("/api, no longer in the navigation, still served: %q", e.page("/api"))
	}
	p, err := e.st.DocPage(t.Context(), "alpha", "/guide")
	if err != nil || !slices.Equal(p.Groups, []string{"Begin"}) {
		t.Errorf("/guide's groups after the navigation changed: %v, %v; want [Begin]", p.Groups, err)
	}
	if !slices.ContainsFunc(got.Logs, func(l string) bool { return strings.Contains(l, "api.mdx") && strings.Contains(l, "hidden") }) {
		t.Errorf("logs do not say api.mdx is skipped as hidden: %q", got.Logs)
	}
}

// TestRemovedFilesPagesGo: a page file deleted from the repository takes
// its page out of the index, and nothing else is read.
func TestRemovedFilesPagesGo(t *testing.T) {
	files := site()
	delete(files, "docs.json")
	e := newEnv(t, files)
	u := e.updater("w1")
	wantSuccess(t, e.update(u))
	e.repo.commit("Drop the API page", map[string]string{"api.mdx": ""})
	got := e.update(u)
	wantSuccess(t, got)
	if read, _ := e.reader.last(); len(read) != 0 {
		t.Errorf("read %v after a removal alone, want nothing", read)
	}
	if !slices.Equal(got.Commit.Removed, []string{"api.mdx"}) {
		t.Errorf("filesChanged.removed %v", got.Commit.Removed)
	}
	if e.page("/api") != "" || e.page("/guide") == "" {
		t.Errorf("after the removal: /api %q (want gone), /guide %q", e.page("/api"), e.page("/guide"))
	}
	state, err := e.st.DocsState(t.Context(), "alpha")
	if err != nil || state.Commit != got.Commit.SHA {
		t.Errorf("index commit %q (%v), want %s", state.Commit, err, got.Commit.SHA)
	}
}

// TestFailedUpdateKeepsTheIndexServing: a repository that breaks a limit
// fails its update, and the index keeps the previous commit's pages.
func TestFailedUpdateKeepsTheIndexServing(t *testing.T) {
	e := newEnv(t, site())
	u := e.updater("w1", func(c *docsupdate.Config) { c.Limits = gitrepo.TreeSpec{MaxFiles: 5} })
	first := e.update(u)
	wantSuccess(t, first)
	e.repo.commit("Many pages", map[string]string{
		"a.mdx": "# A\n", "b.mdx": "# B\n", "guide.mdx": "# Guide\n\nRewritten.\n",
	})
	got := e.update(u)
	if got.Status != store.DocsUpdateFailure || !strings.Contains(got.Summary, "MaxFiles") || !strings.Contains(got.Summary, "previous index still serves") {
		t.Fatalf("update past MaxFiles: status %q summary %q; want failure naming the limit", got.Status, got.Summary)
	}
	if got.EndedAt.IsZero() || got.Commit.SHA != "" {
		t.Errorf("failed update: ended %v, commit %+v", got.EndedAt, got.Commit)
	}
	if txt := e.page("/guide"); !strings.Contains(txt, "go install") {
		t.Errorf("/guide after the failed update: %q, want the previous text", txt)
	}
	state, err := e.st.DocsState(t.Context(), "alpha")
	if err != nil || state.Commit != first.Commit.SHA {
		t.Errorf("index commit %q, want the previous %s", state.Commit, first.Commit.SHA)
	}
}

// blockingReader blocks every read until its context ends, after telling
// started.
type blockingReader struct{ started chan struct{} }

func (b blockingReader) ReadTree(ctx context.Context, _ string, _ gitrepo.TreeSpec) (*gitrepo.Tree, error) {
	close(b.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCrashedUpdateIsTakenOver: an Updater stopped in the middle of an
// update records nothing; the old index keeps serving; once the lease
// lapses another Updater takes the update over and ends it.
func TestCrashedUpdateIsTakenOver(t *testing.T) {
	e := newEnv(t, site())
	wantSuccess(t, e.update(e.updater("w0")))
	e.repo.commit("Guide: use go get", map[string]string{"guide.mdx": "# Guide\n\nInstall with go get.\n"})

	block := blockingReader{started: make(chan struct{})}
	crashing := e.updater("w1", func(c *docsupdate.Config) {
		c.Trees = func(context.Context, store.Project) (docsupdate.TreeReader, error) { return block, nil }
	})
	rec, err := crashing.Queue(t.Context(), "alpha", store.DocsTriggerAPI)
	if err != nil {
		t.Fatal(err)
	}
	ctx, crash := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		crashing.RunOne(ctx)
	}()
	select {
	case <-block.started:
	case <-time.After(time.Minute):
		t.Fatal("the update never started reading")
	}
	crash()
	<-done
	mid, err := e.st.DocsUpdate(t.Context(), rec.ID)
	if err != nil || mid.Status != store.DocsUpdateInProgress || mid.LeaseOwner != "w1" {
		t.Fatalf("after the crash: %+v, %v; want in progress, leased to w1", mid, err)
	}
	if !strings.Contains(e.page("/guide"), "go install") {
		t.Errorf("the old index does not serve during the crashed update: %q", e.page("/guide"))
	}
	other := e.updater("w2")
	if ran, err := other.RunOne(t.Context()); ran || err != nil {
		t.Fatalf("RunOne while w1's lease holds: ran %v, error %v; want nothing to run", ran, err)
	}
	e.clock.Advance(time.Minute + time.Second)
	if ran, err := other.RunOne(t.Context()); !ran || err != nil {
		t.Fatalf("RunOne after w1's lease lapsed: ran %v, error %v", ran, err)
	}
	got, err := e.st.DocsUpdate(t.Context(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, got)
	if got.Attempts != 2 || !slices.Equal(got.Commit.Modified, []string{"guide.mdx"}) {
		t.Errorf("taken over: attempts %d, filesChanged %+v", got.Attempts, got.Commit)
	}
	if !strings.Contains(e.page("/guide"), "go get") {
		t.Errorf("/guide after the takeover: %q", e.page("/guide"))
	}
}

// TestRefreshDueOnTheInterval: the first look queues the projects never
// indexed; then each project is queued once its interval passed since the
// last, never before; a negative interval never queues.
func TestRefreshDueOnTheInterval(t *testing.T) {
	e := newEnv(t, site())
	if err := e.st.CreateProject(t.Context(), store.Project{ID: "beta", Repository: e.repo.bare, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, e.update(e.updater("w0"))) // alpha is indexed, beta is not
	u := e.updater("w1", func(c *docsupdate.Config) { c.RefreshInterval = 10 * time.Minute })
	t0 := e.clock.Now()
	queued := func(at time.Time) []string {
		t.Helper()
		got, err := u.RefreshDue(t.Context(), at)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := queued(t0); !slices.Equal(got, []string{"beta"}) {
		t.Errorf("first look queued %v, want the project never indexed, beta", got)
	}
	if got := queued(t0.Add(10*time.Minute - time.Second)); len(got) != 0 {
		t.Errorf("before the interval: queued %v", got)
	}
	if got := queued(t0.Add(10 * time.Minute)); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("at the interval: queued %v, want both", got)
	}
	if got := queued(t0.Add(15 * time.Minute)); len(got) != 0 {
		t.Errorf("half an interval after: queued %v", got)
	}
	for ran := true; ran; {
		var err error
		if ran, err = u.RunOne(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	state, err := e.st.DocsState(t.Context(), "beta")
	if err != nil || state.Commit == "" {
		t.Errorf("beta after its refreshes ran: %+v, %v; want indexed", state, err)
	}
	if err := e.st.CreateProject(t.Context(), store.Project{ID: "gamma", Repository: e.repo.bare, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	off := e.updater("w2", func(c *docsupdate.Config) { c.RefreshInterval = -1 })
	if got, _ := off.RefreshDue(t.Context(), t0); !slices.Equal(got, []string{"gamma"}) {
		t.Errorf("first look with the interval off: queued %v, want the project never indexed, gamma", got)
	}
	if got, _ := off.RefreshDue(t.Context(), t0.Add(24*time.Hour)); len(got) != 0 {
		t.Errorf("with the interval off: queued %v", got)
	}
}

// TestCompletedJobRefreshesItsProject: the engine's OnRunEnd hook queues
// an update of the project of a completed job, and of no other outcome.
func TestCompletedJobRefreshesItsProject(t *testing.T) {
	e := newEnv(t, site())
	if err := e.st.CreateProject(t.Context(), store.Project{ID: "beta", Repository: e.repo.bare, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	u := e.updater("w1")
	for _, o := range []engine.RunOutcome{engine.RunFailed, engine.RunRetried, engine.RunReleased, engine.RunAbandoned} {
		u.JobRunEnded(engine.RunInfo{JobID: "j1", ProjectID: "beta", Outcome: o})
	}
	u.JobRunEnded(engine.RunInfo{JobID: "j2", ProjectID: "alpha", Outcome: engine.RunCompleted})
	u.Flush()
	if ran, err := u.RunOne(t.Context()); !ran || err != nil {
		t.Fatalf("RunOne after a completed job: ran %v, error %v", ran, err)
	}
	state, err := e.st.DocsState(t.Context(), "alpha")
	if err != nil || state.Commit == "" {
		t.Errorf("alpha after the refresh: %+v, %v", state, err)
	}
	if ran, _ := u.RunOne(t.Context()); ran {
		t.Errorf("a second update ran: a job that did not complete queued one")
	}
}

// TestEndedUpdatesArePrunedAfterTheirRetention: an ended update's record
// is kept for Retention, then deleted; the index it wrote stays.
func TestEndedUpdatesArePrunedAfterTheirRetention(t *testing.T) {
	e := newEnv(t, site())
	u := e.updater("w1", func(c *docsupdate.Config) { c.Retention = 24 * time.Hour })
	rec := e.update(u)
	if n, err := u.Prune(t.Context(), rec.EndedAt.Add(24*time.Hour-time.Second)); err != nil || n != 0 {
		t.Errorf("Prune within the retention: %d, %v; want none", n, err)
	}
	if n, err := u.Prune(t.Context(), rec.EndedAt.Add(24*time.Hour+time.Second)); err != nil || n != 1 {
		t.Errorf("Prune past the retention: %d, %v; want 1", n, err)
	}
	if _, err := e.st.DocsUpdate(t.Context(), rec.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the pruned update: %v, want not found", err)
	}
	if e.page("/guide") == "" {
		t.Errorf("the index went with the update's record")
	}
	keep := e.updater("w2", func(c *docsupdate.Config) { c.Retention = -1 })
	e.update(keep)
	if n, err := keep.Prune(t.Context(), e.clock.Now().Add(1000*time.Hour)); err != nil || n != 0 {
		t.Errorf("Prune with the retention off: %d, %v", n, err)
	}
}
