package gitrepo

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
)

// mirrorPacks lists the names of the packs in the mirror m.
func mirrorPacks(t *testing.T, m *mirror) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(m.dir, "objects", "pack", "pack-*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = strings.TrimSuffix(filepath.Base(n), ".pack")
	}
	return names
}

// advanceBig pushes to branch a commit adding file with size random
// (incompressible) bytes, so that fetching it takes a pack of that size.
func advanceBig(t *testing.T, remote, branch, file string, size int) {
	t.Helper()
	b := make([]byte, size)
	_, _ = rand.Read(b)
	advance(t, remote, branch, file, string(b))
}

// assertWorkspaceIs fails unless ws holds the tip of the remote's branch
// main, checked out whole, on its own branch.
func assertWorkspaceIs(t *testing.T, ws *Workspace, remote string) {
	t.Helper()
	if got, want := wsGit(t, ws, "rev-parse", "HEAD"), gitT(t, remote, "rev-parse", "main"); got != want {
		t.Fatalf("the workspace is at %s, the remote's main at %s", got, want)
	}
	if got := wsGit(t, ws, "status", "--porcelain"); got != "" {
		t.Fatalf("the working tree differs from HEAD:\n%s", got)
	}
	wsGit(t, ws, "fsck", "--no-dangling")
}

// mirrorFixture is a test remote, Repositories in a new folder whose logs
// the test reads, and the remote's mirror.
type mirrorFixture struct {
	remote, url string
	r           *Repositories
	m           *mirror
	logs        *logBuffer
}

func newMirrorFixture(t *testing.T) *mirrorFixture {
	t.Helper()
	f := &mirrorFixture{remote: newRemote(t, "", "docs.git"), logs: &logBuffer{}}
	f.url = "file://" + f.remote
	f.r, _ = newRepos(t, Config{Logger: f.logs.logger()})
	f.m = f.r.mirrorOf(f.url)
	return f
}

// open opens a workspace on branch, made from main if new.
func (f *mirrorFixture) open(t *testing.T, branch string) *Workspace {
	t.Helper()
	return open(t, f.r, engine.RepoSpec{Repository: f.url, Ref: "main", Branch: branch})
}

// job opens a workspace on branch and closes it: a job that changed
// nothing, after which the mirror holds the remote's main.
func (f *mirrorFixture) job(t *testing.T, branch string) {
	t.Helper()
	if err := f.open(t, branch).Close(); err != nil {
		t.Fatal(err)
	}
}

// publishNew adds the file name to ws, publishes, and checks that the
// remote's branch adds just that to main (since they parted).
func publishNew(t *testing.T, ws *Workspace, remote, name string) {
	t.Helper()
	writeFile(t, filepath.Join(ws.Dir(), name), name+"\n")
	publish(t, ws, true)
	if got := gitT(t, remote, "diff", "--name-status", "main..."+ws.branch); got != "A\t"+name {
		t.Fatalf("the pushed branch %s differs from main by %q", ws.branch, got)
	}
}

// Later jobs build their workspaces from the mirror the first one made,
// fetching nothing when the remote has not changed; each workspace's packs
// are the mirror's own files.
func TestMirrorReusedAcrossJobs(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	m := f.m
	f.job(t, "job-a")
	packs := mirrorPacks(t, m)
	if len(packs) != 1 {
		t.Fatalf("the mirror holds the packs %v, want one", packs)
	}
	second := f.open(t, "job-b")
	if got := mirrorPacks(t, m); !slices.Equal(got, packs) {
		t.Fatalf("the second job changed the mirror's packs from %v to %v", packs, got)
	}
	assertWorkspaceIs(t, second, f.remote)
	for _, ext := range []string{".pack", ".idx"} {
		a, err := os.Stat(filepath.Join(m.dir, "objects", "pack", packs[0]+ext))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.Stat(filepath.Join(gitDirOf(second), "objects", "pack", packs[0]+ext))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(a, b) {
			t.Errorf("the workspace's %s is not the mirror's file", packs[0]+ext)
		}
	}
	publishNew(t, second, f.remote, "b.md")
}

// What the remote gained since the last job arrives in one more pack: a
// commit on the base, and the branch an earlier run pushed, which a
// follow-up continues.
func TestMirrorFetchesWhatTheRemoteGained(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	remote, m := f.remote, f.m
	first := f.open(t, "job-c")
	publishNew(t, first, remote, "c.md")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	before := mirrorPacks(t, m)
	advance(t, remote, "main", "docs/guide.md", "# Guide\n\nUpstream.\n")

	other := f.open(t, "job-d")
	assertWorkspaceIs(t, other, remote)
	if got := readFile(t, filepath.Join(other.Dir(), "docs/guide.md")); got != "# Guide\n\nUpstream.\n" {
		t.Fatalf("the new job does not see the remote's new commit: guide.md = %q", got)
	}
	after := mirrorPacks(t, m)
	if len(after) != len(before)+1 || !slices.Equal(slices.DeleteFunc(slices.Clone(after), func(p string) bool { return !slices.Contains(before, p) }), before) {
		t.Fatalf("the mirror's packs went from %v to %v, want one more", before, after)
	}

	followUp := f.open(t, "job-c")
	if got := readFile(t, filepath.Join(followUp.Dir(), "c.md")); got != "c.md\n" {
		t.Fatalf("the follow-up does not continue the pushed branch: c.md = %q", got)
	}
	if got := wsGit(t, followUp, "rev-parse", "HEAD"); got != gitT(t, remote, "rev-parse", "job-c") {
		t.Fatalf("the follow-up is at %s, not at the pushed branch", got)
	}
	if got := wsGit(t, followUp, "rev-parse", "--abbrev-ref", "@{upstream}"); got != "origin/job-c" {
		t.Fatalf("the branch tracks %q", got)
	}
	// The base moved on after the branch was made: only c.md is proposed.
	publish(t, followUp, true)
}

// Jobs on one repository at once, from this process through several
// Repositories (each locks the mirror on a file of its own, as another
// process would) and from another process, share the mirror without harm.
func TestMirrorConcurrentJobs(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	advanceBig(t, remote, "main", "big.bin", 1<<20) // a first fetch that takes a while
	dir := t.TempDir()
	url := "file://" + remote

	child := startChild(t, childSpec{Dir: dir, Repository: url, Branch: "job-child", Publish: true})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			r, err := New(Config{Dir: dir})
			if err != nil {
				errs[i] = err
				return
			}
			ws, err := r.Open(context.Background(), engine.RepoSpec{Repository: url, Ref: "main", Branch: "job-" + string(rune('0'+i))})
			if err != nil {
				errs[i] = err
				return
			}
			defer ws.Close()
			if err := os.WriteFile(filepath.Join(ws.Dir(), "n.md"), []byte{byte('0' + i), '\n'}, 0o644); err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = ws.Publish(context.Background(), "n")
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("job %d: %v", i, err)
		}
	}
	if out := child.wait(t); !strings.HasPrefix(out, "ok") {
		t.Errorf("the other process's job: %s", out)
	}
	for _, branch := range []string{"job-0", "job-1", "job-2", "job-3", "job-child"} {
		if got := gitT(t, remote, "diff", "--name-status", "main", branch); got != "A\tn.md" {
			t.Errorf("the branch %s differs from main by %q", branch, got)
		}
	}
	r, _ := newRepos(t, Config{Dir: dir})
	if problem := r.mirrorOf(url).check(); problem != "" {
		t.Fatalf("the mirror after the jobs: %s", problem)
	}
	gitT(t, r.mirrorOf(url).dir, "fsck", "--no-dangling")
}

// While another process holds the mirror's lock, Open waits for it, and
// gives up when its context ends.
func TestMirrorLockedByAnotherProcess(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	holder := startChild(t, childSpec{HoldLock: f.m.lock})
	if line := holder.line(t); line != "locked" {
		t.Fatalf("the other process said %q", line)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		ws, err := f.r.Open(ctx, engine.RepoSpec{Repository: f.url, Ref: "main", Branch: "job-wait"})
		if err == nil {
			ws.Close()
		}
		done <- err
	}()
	// The workspace's repository is made just before the mirror's lock
	// is taken, and nothing in between ends with the context.
	waitFor(t, func() bool { return strings.Contains(f.logs.String(), `"command":"init"`) })
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "waiting for the mirror") {
		t.Fatalf("Open while the mirror is locked = %v, want it to give up waiting", err)
	}
	holder.kill(t)
	assertWorkspaceIs(t, f.open(t, "job-wait"), f.remote)
}

// A workspace holds no path to the mirror, and no alternates: nothing its
// git, or an agent that reached its git directory, reads leads there.
func TestWorkspaceNamesNoMirror(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	m := f.m
	ws := f.open(t, "job-names")
	root := filepath.Dir(ws.Dir())
	walkFor(t, root, m.dir)
	walkFor(t, root, filepath.Base(m.dir))
	walkFor(t, root, MirrorFolder)
	if _, err := os.Lstat(filepath.Join(gitDirOf(ws), "objects", "info", "alternates")); err == nil {
		t.Fatal("the workspace reads objects through alternates")
	}
}

// Links to the mirror, whether the repository holds them or the agent made
// them, are not published, and the mirror is left as it was.
func TestLinksToTheMirrorAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	remote := newRemote(t, "", "docs.git")
	url := "file://" + remote
	r, _ := newRepos(t, Config{Dir: dir})
	m := r.mirrorOf(url)
	rel, err := filepath.Rel(filepath.Join(dir, workspacePrefix+"-0123456789abcdef", "tree"), m.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, target string
		committed    bool
		want         string
	}{
		{"absolute, committed", m.dir, true, "is a symbolic link to an absolute path"},
		{"relative, committed", rel, true, "is a symbolic link that leaves the tree"},
		{"absolute, by the agent", filepath.Join(m.dir, "config"), false, "is a symbolic link to an absolute path"},
		{"relative, by the agent", filepath.Join(rel, "objects"), false, "is a symbolic link that leaves the tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			branch := "job-" + strings.NewReplacer(" ", "-", ",", "").Replace(tc.name)
			if tc.committed {
				scratch := t.TempDir()
				gitT(t, scratch, "clone", "--quiet", remote, "w")
				symlink(t, tc.target, filepath.Join(scratch, "w", "mirror"))
				gitT(t, filepath.Join(scratch, "w"), "add", "--all")
				gitT(t, filepath.Join(scratch, "w"), "commit", "--quiet", "-m", "a link")
				gitT(t, filepath.Join(scratch, "w"), "push", "--quiet", "origin", "HEAD:refs/heads/"+branch+"-base")
			}
			ref := "main"
			if tc.committed {
				ref = branch + "-base"
			}
			ws := open(t, r, engine.RepoSpec{Repository: url, Ref: ref, Branch: branch})
			before, err := os.ReadFile(filepath.Join(m.dir, manifestName))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.committed {
				symlink(t, tc.target, filepath.Join(ws.Dir(), "mirror"))
			}
			writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")
			_, err = ws.Publish(context.Background(), "a")
			if err == nil || !engine.IsPermanent(err) || !strings.Contains(err.Error(), "publish refused: mirror "+tc.want) {
				t.Fatalf("Publish = %v, want a refusal saying %q", err, tc.want)
			}
			assertNoBranch(t, remote, branch)
			if after, err := os.ReadFile(filepath.Join(m.dir, manifestName)); err != nil || string(after) != string(before) {
				t.Fatalf("the mirror's manifest changed: %v\n%s", err, after)
			}
			if problem := m.check(); problem != "" {
				t.Fatalf("the mirror: %s", problem)
			}
		})
	}
}

// Open dates the checkout a second back and records it, so that git tells
// every file from a later change by its time alone, without reading it
// again: every file is older than the index, to the second.
func TestCheckoutIsOlderThanItsIndex(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	ws := f.open(t, "job-dated")
	index, err := os.Stat(filepath.Join(gitDirOf(ws), "index"))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(ws.Dir(), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.ModTime().Unix() >= index.ModTime().Unix() {
			t.Errorf("%s dates from %v, the index from %v: git would read it again", p, fi.ModTime(), index.ModTime())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := wsGit(t, ws, "diff-files", "--name-only"); got != "" {
		t.Fatalf("the index does not match the dated files: %s", got)
	}
}

// What the agent writes at once, in place and at the same size, is
// published: its time is past the one the index recorded.
func TestImmediateSameSizeEditIsPublished(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	ws := f.open(t, "job-at-once")
	path := filepath.Join(ws.Dir(), "README.md")
	file, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.ToUpper(mainFiles["README.md"])
	if _, err := file.WriteString(edited); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	publish(t, ws, true)
	if got := gitT(t, f.remote, "show", "job-at-once:README.md"); got != strings.TrimSpace(edited) {
		t.Fatalf("the pushed README.md is %q, want %q", got, edited)
	}
}

// mirrorRefs lists the refs of the mirror m.
func mirrorRefs(t *testing.T, m *mirror) []string {
	t.Helper()
	return strings.Fields(gitT(t, m.dir, "for-each-ref", "--format=%(refname)"))
}

// Between jobs a mirror holds its bases only: a continued branch's ref goes
// once the workspace is built, and so do refs a process killed before that
// left, and those of the earlier layout (one ref name for bases and
// branches). Later follow-ups still find the branch, and what the remote
// pushed to it since.
func TestMirrorKeepsOnlyItsBases(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	remote, m := f.remote, f.m
	first := f.open(t, "job-e")
	publishNew(t, first, remote, "e.md")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	base := mirrorRef("refs/heads/main", true)
	if got := mirrorRefs(t, m); !slices.Equal(got, []string{base}) {
		t.Fatalf("after a new branch the mirror holds the refs %v, want only its base %s", got, base)
	}

	// What an earlier layout and a killed process would have left.
	tip := gitT(t, remote, "rev-parse", "main")
	oldLayout := "refs/docsapi/" + strings.TrimPrefix(mirrorRef("refs/heads/other", true), baseRefs)
	killed := mirrorRef("refs/heads/job-x", false)
	gitWithStdin(t, m.dir, "create "+oldLayout+" "+tip+"\ncreate "+killed+" "+tip+"\n", "update-ref", "--stdin")

	followUp := f.open(t, "job-e")
	if got := readFile(t, filepath.Join(followUp.Dir(), "e.md")); got != "e.md\n" {
		t.Fatalf("the follow-up does not continue the pushed branch: e.md = %q", got)
	}
	if err := followUp.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mirrorRefs(t, m); !slices.Equal(got, []string{base}) {
		t.Fatalf("after a follow-up the mirror holds the refs %v, want only its base %s", got, base)
	}

	advance(t, remote, "job-e", "later.md", "pushed by someone else\n")
	again := f.open(t, "job-e")
	if got := wsGit(t, again, "rev-parse", "HEAD"); got != gitT(t, remote, "rev-parse", "job-e") {
		t.Fatalf("the second follow-up is at %s, not at the remote's branch", got)
	}
	wsGit(t, again, "fsck", "--no-dangling")
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mirrorRefs(t, m); !slices.Equal(got, []string{base}) {
		t.Fatalf("after a second follow-up the mirror holds the refs %v, want only its base %s", got, base)
	}
}
