package docsupdate_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/docsupdate"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/internal/sqlitetest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// repo is a bare repository and a clone of it where the test commits.
type repo struct {
	t          testing.TB
	bare, work string
}

func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newRepo makes a bare repository whose main branch holds files.
func newRepo(t testing.TB, files map[string]string) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required")
	}
	root := t.TempDir()
	r := &repo{t: t, bare: filepath.Join(root, "docs.git"), work: filepath.Join(root, "work")}
	runGit(t, root, "init", "--bare", r.bare)
	runGit(t, root, "clone", r.bare, r.work)
	r.commit("Initial docs", files)
	return r
}

// commit writes files ("" removes one), commits with message and pushes.
func (r *repo) commit(message string, files map[string]string) {
	r.t.Helper()
	for name, text := range files {
		p := filepath.Join(r.work, filepath.FromSlash(name))
		if text == "" {
			runGit(r.t, r.work, "rm", "-q", name)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			r.t.Fatal(err)
		}
		runGit(r.t, r.work, "add", name)
	}
	runGit(r.t, r.work, "commit", "-q", "-m", message)
	runGit(r.t, r.work, "push", "-q", "origin", "HEAD:main")
}

// countingReader is the real gitrepo reader, recording which files each
// read took the contents of.
type countingReader struct {
	inner docsupdate.TreeReader
	mu    sync.Mutex
	reads [][]string
}

func (c *countingReader) ReadTree(ctx context.Context, repository string, spec gitrepo.TreeSpec) (*gitrepo.Tree, error) {
	tree, err := c.inner.ReadTree(ctx, repository, spec)
	if err != nil {
		return nil, err
	}
	var read []string
	for _, f := range tree.Files {
		if f.Data != nil {
			read = append(read, f.Path)
		}
	}
	c.mu.Lock()
	c.reads = append(c.reads, read)
	c.mu.Unlock()
	return tree, nil
}

// last returns the files the last read took, and how many reads there were.
func (c *countingReader) last() ([]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reads) == 0 {
		return nil, 0
	}
	return slices.Clone(c.reads[len(c.reads)-1]), len(c.reads)
}

// env is a SQLite store with one project on a repository, and the
// reader an Updater uses.
type env struct {
	t      testing.TB
	st     store.Store
	repo   *repo
	reader *countingReader
	clock  *servertest.Clock
}

func newEnv(t testing.TB, files map[string]string) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlitetest.FreshFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := newRepo(t, files)
	if err := st.CreateProject(t.Context(), store.Project{ID: "alpha", Repository: r.bare, Ref: "main", Domain: "alpha", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	repos, err := gitrepo.New(gitrepo.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, st: st, repo: r, reader: &countingReader{inner: repos},
		clock: servertest.NewClock(time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC))}
}

// updater returns an Updater named owner on the env's store, reader and
// clock, with cfg's other settings.
func (e *env) updater(owner string, mutate ...func(*docsupdate.Config)) *docsupdate.Updater {
	e.t.Helper()
	cfg := docsupdate.Config{
		Store: e.st, Owner: owner, Now: e.clock.Now, LeaseFor: time.Minute, RefreshInterval: -1,
		Trees: func(context.Context, store.Project) (docsupdate.TreeReader, error) { return e.reader, nil },
	}
	for _, m := range mutate {
		m(&cfg)
	}
	u, err := docsupdate.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// update queues an update of alpha, runs it with u and returns it ended.
func (e *env) update(u *docsupdate.Updater) store.DocsUpdateRecord {
	e.t.Helper()
	rec, err := u.Queue(e.t.Context(), "alpha", store.DocsTriggerAPI)
	if err != nil {
		e.t.Fatal(err)
	}
	ran, err := u.RunOne(e.t.Context())
	if err != nil || !ran {
		e.t.Fatalf("RunOne: ran %v, error %v", ran, err)
	}
	got, err := e.st.DocsUpdate(e.t.Context(), rec.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	if !got.Status.Ended() {
		e.t.Fatalf("update %s after RunOne: status %q", got.ID, got.Status)
	}
	return got
}

// page returns the text of the page at path, or "" if there is none.
func (e *env) page(path string) string {
	e.t.Helper()
	p, err := e.st.DocPage(e.t.Context(), "alpha", path)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, s := range p.Sections {
		b.WriteString(s.Heading + " " + s.Text)
	}
	return b.String()
}

func wantSuccess(t *testing.T, u store.DocsUpdateRecord) {
	t.Helper()
	if u.Status != store.DocsUpdateSuccess {
		t.Fatalf("update %s: status %q, summary %q, logs %q; want success", u.ID, u.Status, u.Summary, u.Logs)
	}
}
