package gitrepo

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
)

// A mirror that was damaged, or left half-written, is never used as it is
// to make a workspace: what the cheap checks catch is rebuilt before the
// fetch, what fails the fetch is rebuilt after git fsck, and what is merely
// stale is repaired. Each case damages a mirror that served a job, after
// the remote moved on, and the next job must get the remote's main as it
// is now, and publish.
func TestMirrorDamageIsRepaired(t *testing.T) {
	t.Parallel()
	largestPack := func(t *testing.T, m *mirror) string {
		t.Helper()
		packs, err := m.packs()
		if err != nil || len(packs) == 0 {
			t.Fatalf("the mirror's packs: %v %v", packs, err)
		}
		p := packs[0]
		for _, q := range packs {
			if q.pack > p.pack {
				p = q
			}
		}
		return filepath.Join(m.dir, "objects", "pack", p.name)
	}
	mainRef := func(m *mirror) string {
		return filepath.Join(m.dir, filepath.FromSlash(mirrorRef("refs/heads/main", true)))
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, m *mirror, remote string)
		// why is what the log gives as the reason for the rebuild;
		// "" when the mirror must be used as it is, repaired.
		why string
	}{
		{"truncated pack", func(t *testing.T, m *mirror, _ string) {
			p := largestPack(t, m) + ".pack"
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "is missing or damaged"},
		{"pack ends wrong", func(t *testing.T, m *mirror, _ string) {
			p := largestPack(t, m) + ".pack"
			b := []byte(readFile(t, p))
			b[len(b)-1] ^= 0xff
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o444); err != nil {
				t.Fatal(err)
			}
		}, "is missing or damaged"},
		{"pack removed", func(t *testing.T, m *mirror, _ string) {
			p := largestPack(t, m)
			for _, ext := range []string{".pack", ".idx"} {
				if err := os.Remove(p + ext); err != nil {
					t.Fatal(err)
				}
			}
		}, "is missing or damaged"},
		{"index removed", func(t *testing.T, m *mirror, _ string) {
			if err := os.Remove(largestPack(t, m) + ".idx"); err != nil {
				t.Fatal(err)
			}
		}, "is missing or damaged"},
		{"manifest removed", func(t *testing.T, m *mirror, _ string) {
			if err := os.Remove(filepath.Join(m.dir, manifestName)); err != nil {
				t.Fatal(err)
			}
		}, "has no manifest"},
		{"manifest garbled", func(t *testing.T, m *mirror, _ string) {
			writeFile(t, filepath.Join(m.dir, manifestName), manifestHeader+"\n../../etc/passwd 1 2\n")
		}, "a line that is not a pack"},
		{"alternates planted", func(t *testing.T, m *mirror, _ string) {
			decoy := newRemote(t, "", "decoy.git")
			writeFile(t, filepath.Join(m.dir, "objects", "info", "alternates"), filepath.Join(decoy, "objects")+"\n")
		}, "objects/info/alternates"},
		{"replaced by a link", func(t *testing.T, m *mirror, _ string) {
			decoy := newRemote(t, "", "decoy.git")
			if err := os.RemoveAll(m.dir); err != nil {
				t.Fatal(err)
			}
			symlink(t, decoy, m.dir)
		}, "it is not a folder"},
		{"ref to a missing object", func(t *testing.T, m *mirror, _ string) {
			writeFile(t, mainRef(m), strings.Repeat("1", 40)+"\n")
		}, "git fsck failed after a failed fetch"},
		{"ref garbled", func(t *testing.T, m *mirror, _ string) {
			writeFile(t, mainRef(m), "garbage\n")
		}, "git fsck failed after a failed fetch"},
		// Refs only tell the remote what not to send: the fetch moves
		// them to what the remote holds, or makes them again.
		{"ref removed", func(t *testing.T, m *mirror, _ string) {
			if err := os.Remove(mainRef(m)); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"ref moved", func(t *testing.T, m *mirror, remote string) {
			writeFile(t, mainRef(m), gitT(t, remote, "rev-parse", "main~2")+"\n")
		}, ""},
		// What a git killed on the mirror leaves, which would fail the
		// next fetch ("Unable to create '…/packed-refs.lock'").
		{"stale locks", func(t *testing.T, m *mirror, _ string) {
			for _, p := range staleFiles {
				writeFile(t, filepath.Join(m.dir, filepath.FromSlash(p)), "x")
			}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newMirrorFixture(t)
			remote, m := f.remote, f.m
			// Two jobs, each after the remote moved on: the mirror holds
			// two commits of main, and more than one pack.
			for i, branch := range []string{"job-first", "job-second"} {
				f.job(t, branch)
				advance(t, remote, "main", "docs/guide.md", "# Guide\n\nUpstream "+strconv.Itoa(i)+".\n")
			}
			tc.damage(t, m, remote)

			ws := f.open(t, "job-next")
			assertWorkspaceIs(t, ws, remote)
			logs := f.logs.String()
			if rebuilt := strings.Contains(logs, "rebuilding the mirror"); rebuilt != (tc.why != "") || !strings.Contains(logs, tc.why) {
				t.Errorf("rebuilt = %v, want %v, because %q; logs:\n%s", rebuilt, tc.why != "", tc.why, logs)
			}
			if problem := m.check(); problem != "" {
				t.Errorf("the mirror after the job: %s", problem)
			}
			for _, p := range staleFiles {
				if _, err := os.Lstat(filepath.Join(m.dir, filepath.FromSlash(p))); err == nil {
					t.Errorf("%s is still in the mirror", p)
				}
			}
			gitT(t, m.dir, "fsck", "--no-dangling")
			publishNew(t, ws, remote, "a.md")
		})
	}
}

// staleFiles are what git commands killed on a mirror leave: lock files,
// which fail the next command that needs the same lock ("Unable to create
// '…/packed-refs.lock': File exists"), and a pack half-written.
var staleFiles = []string{"packed-refs.lock", "HEAD.lock", "config.lock", mirrorRef("refs/heads/main", true) + ".lock",
	"objects/pack/tmp_pack_0Xa1b2", "objects/pack/tmp_idx_0Xa1b2", "objects/pack/pack-0123.keep"}

// An object damaged inside a pack, where its ends still match its index,
// passes the checks and the fetch; the workspace cannot read it, git fsck
// finds it, and the job goes on from a rebuilt mirror.
func TestMirrorUnreadableObjectIsRebuilt(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	remote, m := f.remote, f.m
	f.job(t, "job-first")
	packs := mirrorPacks(t, m)
	base := filepath.Join(m.dir, "objects", "pack", packs[0])
	// Where the pack holds README.md's blob, from its index.
	blob := gitT(t, remote, "rev-parse", "main:README.md")
	idx, err := os.Open(base + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "show-index")
	cmd.Stdin = idx
	out, err := cmd.Output()
	idx.Close()
	if err != nil {
		t.Fatal(err)
	}
	offset := -1
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) >= 2 && f[1] == blob {
			offset, _ = strconv.Atoi(f[0])
		}
	}
	if offset < 0 {
		t.Fatalf("README.md's blob %s is not in the mirror's pack", blob)
	}
	b := []byte(readFile(t, base+".pack"))
	b[offset+4] ^= 0xff // inside the object's compressed data
	if err := os.Chmod(base+".pack", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".pack", b, 0o444); err != nil {
		t.Fatal(err)
	}

	ws := f.open(t, "job-next")
	assertWorkspaceIs(t, ws, remote)
	if got := readFile(t, filepath.Join(ws.Dir(), "README.md")); got != mainFiles["README.md"] {
		t.Fatalf("README.md = %q", got)
	}
	if l := f.logs.String(); !strings.Contains(l, "discarding the mirror") || !strings.Contains(l, "rebuilding the mirror") {
		t.Fatalf("the mirror was not discarded and rebuilt; logs:\n%s", l)
	}
}

// A tree the checkout refuses whatever the mirror holds fails the job
// without a rebuild: git fsck finds the mirror whole.
func TestMirrorKeptWhenTheTreeIsAtFault(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	// A tree with an entry named ".git", which git refuses to check out.
	blob := strings.TrimSpace(gitWithStdin(t, remote, "x\n", "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitWithStdin(t, remote, "100644 blob "+blob+"\t.git\n", "mktree"))
	commit := strings.TrimSpace(gitWithStdin(t, remote, "bad\n", "commit-tree", tree))
	gitT(t, remote, "update-ref", "refs/heads/bad", commit)

	var logs logBuffer
	r, parent := newRepos(t, Config{Logger: logs.logger()})
	_, err := r.Open(context.Background(), engine.RepoSpec{Repository: "file://" + remote, Ref: "bad", Branch: "job-bad"})
	if err == nil {
		t.Fatal("Open checked out a tree holding .git")
	}
	if l := logs.String(); strings.Contains(l, "discarding the mirror") || strings.Contains(l, "rebuilding the mirror") {
		t.Fatalf("a tree the checkout refuses touched the mirror; logs:\n%s", l)
	}
	assertEmptyDir(t, parent)
}

func gitWithStdin(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = testEnv(t)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// stallingServer serves root's repositories as gitHTTPServer does, but
// while stall is set, holds each fetch's pack after its first MiB until the
// test releases it or ends.
type stallingServer struct {
	url     string
	stall   atomic.Bool
	release chan struct{}
	once    sync.Once
}

func newStallingServer(t *testing.T, root, user, pass string) *stallingServer {
	t.Helper()
	inner, _ := gitHTTPServer(t, root, user, pass)
	s := &stallingServer{release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.stall.Load() && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			// Past the first pkt-lines of the pack (each up to 64 KiB),
			// which git passes on whole.
			w = &stallingWriter{ResponseWriter: w, after: 1 << 20, until: r.Context().Done(), release: s.release}
		}
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(s.unstall) // runs first: lets Close finish
	s.url = srv.URL
	return s
}

func (s *stallingServer) unstall() {
	s.stall.Store(false)
	s.once.Do(func() { close(s.release) })
}

// stallingWriter passes the first after bytes, then blocks.
type stallingWriter struct {
	http.ResponseWriter
	after          int
	written        int
	until, release <-chan struct{}
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	if w.written+len(p) > w.after {
		w.ResponseWriter.(http.Flusher).Flush()
		select {
		case <-w.until:
		case <-w.release:
		}
	}
	w.written += len(p)
	return w.ResponseWriter.Write(p)
}

// A server killed (SIGKILL) while fetching into the mirror, its first fetch
// or a later one, leaves a mirror the next job uses or rebuilds: never one
// that gives it a wrong workspace.
func TestMirrorKilledDuringFetch(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	const user, pass = "x-access-token", "kill-sentinel"
	for _, later := range []bool{false, true} {
		name := "first fetch"
		if later {
			name = "later fetch"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			remote := newRemote(t, root, "docs.git")
			srv := newStallingServer(t, root, user, pass)
			url := srv.url + "/git/docs.git"
			var logs logBuffer
			r, dir := newRepos(t, Config{Logger: logs.logger(), Credentials: func(context.Context, string) (string, string, error) {
				return user, pass, nil
			}})
			m := r.mirrorOf(url)
			if later {
				ws := open(t, r, engine.RepoSpec{Repository: url, Ref: "main", Branch: "job-first"})
				if err := ws.Close(); err != nil {
					t.Fatal(err)
				}
			}
			advanceBig(t, remote, "main", "big.bin", 4<<20)

			srv.stall.Store(true)
			c := startChild(t, childSpec{Dir: dir, Repository: url, Branch: "job-killed", User: user, Pass: pass})
			// Killed while its pack is half-written.
			c.waitFor(t, func() bool {
				tmp, _ := filepath.Glob(filepath.Join(m.dir, "objects", "pack", "tmp_pack_*"))
				for _, p := range tmp {
					if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
						return true
					}
				}
				return false
			})
			c.kill(t)
			srv.unstall()

			ws := open(t, r, engine.RepoSpec{Repository: url, Ref: "main", Branch: "job-next"})
			assertWorkspaceIs(t, ws, remote)
			if later && strings.Contains(logs.String(), "rebuilding the mirror") {
				t.Errorf("a later fetch killed halfway cost a rebuild; logs:\n%s", logs.String())
			}
			if problem := m.check(); problem != "" {
				t.Errorf("the mirror after the job: %s", problem)
			}
			tmp, _ := filepath.Glob(filepath.Join(m.dir, "objects", "pack", "tmp_*"))
			if len(tmp) != 0 {
				t.Errorf("the killed fetch's leftovers are still there: %v", tmp)
			}
		})
	}
}

// A mirror holding too many packs rolls the smaller ones into one, and a
// workspace that linked the packs it removed goes on.
func TestMirrorPacksAreRolledUp(t *testing.T) {
	defer func(n int) { maxMirrorPacks = n }(maxMirrorPacks)
	maxMirrorPacks = 2 // not parallel: other tests read it
	f := newMirrorFixture(t)
	remote, m := f.remote, f.m
	f.job(t, "job-0")
	advance(t, remote, "main", "one.md", "1\n")
	early := f.open(t, "job-1")
	linked := mirrorPacks(t, m)
	if len(linked) != 2 {
		t.Fatalf("the mirror holds %v, want two packs", linked)
	}
	for i := range 3 {
		advance(t, remote, "main", "more.md", strconv.Itoa(i)+"\n")
		assertWorkspaceIs(t, f.open(t, "job-"+strconv.Itoa(i+2)), remote)
		// Above the limit only while no two packs are worth rolling.
		if packs := mirrorPacks(t, m); len(packs) > maxMirrorPacks+1 {
			t.Fatalf("the mirror holds %d packs: %v", len(packs), packs)
		}
	}
	gone := 0
	for _, p := range linked {
		if !slices.Contains(mirrorPacks(t, m), p) {
			gone++
		}
	}
	if gone == 0 {
		t.Fatalf("no pack the early workspace linked was rolled up: %v, now %v", linked, mirrorPacks(t, m))
	}
	wsGit(t, early, "fsck", "--no-dangling")
	publishNew(t, early, remote, "e.md")
	if problem := m.check(); problem != "" {
		t.Fatalf("the mirror: %s", problem)
	}
	gitT(t, m.dir, "fsck", "--no-dangling")
}

func TestMirrorKeys(t *testing.T) {
	t.Parallel()
	r, dir := newRepos(t, Config{})
	folder := filepath.Join(dir, MirrorFolder)
	seen := map[string]string{}
	for _, url := range []string{
		"https://git.example/o/r.git",
		"https://git.example/o/r.git/",
		"https://git.example/o/../../../../etc/r.git",
		"../../../../etc",
		"/srv/git/docs repo ü #1 %2e%2e.git",
		"git@git.example:o/r.git",
		"ssh://git.example/" + strings.Repeat("long/", 2000),
		"C:\\repos\\docs",
		"",
	} {
		m := r.mirrorOf(url)
		if filepath.Dir(m.dir) != folder || filepath.Dir(m.lock) != folder {
			t.Errorf("the mirror of %q is at %s, %s: not in %s", url, m.dir, m.lock, folder)
		}
		name := strings.TrimSuffix(filepath.Base(m.dir), ".git")
		if len(name) != 64 || strings.Trim(name, "0123456789abcdef") != "" || m.lock != filepath.Join(folder, name+".lock") {
			t.Errorf("the mirror of %q is named %q (lock %s)", url, filepath.Base(m.dir), m.lock)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("%q and %q share a mirror", url, other)
		}
		seen[name] = url
	}
	// A repository at a path with odd characters, by path and by URL:
	// two spellings, two mirrors, both work.
	remote := newRemote(t, "", "docs repo ü #1.git")
	for _, url := range []string{remote, "file://" + remote} {
		ws := open(t, r, engine.RepoSpec{Repository: url, Ref: "main", Branch: "job-odd"})
		assertWorkspaceIs(t, ws, remote)
		if problem := r.mirrorOf(url).check(); problem != "" {
			t.Errorf("the mirror of %q: %s", url, problem)
		}
	}
	entries, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 5 { // two mirrors, two locks, the mark of the last prune
		t.Errorf("the mirror folder holds %d entries, want 5", len(entries))
	}
}

// Whoever can write the mirror folder chooses what the next workspace
// holds: New refuses one that is not this user's private folder.
func TestNewRefusesAnOpenMirrorFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	folder := filepath.Join(dir, MirrorFolder)
	if err := os.Mkdir(folder, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("New with a mirror folder of mode 0755 = %v", err)
	}
	if err := os.Remove(folder); err != nil {
		t.Fatal(err)
	}
	symlink(t, t.TempDir(), folder)
	if _, err := New(Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Errorf("New with a mirror folder that is a link = %v", err)
	}
	if err := os.Remove(folder); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(folder); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("New made the mirror folder %v (%v), want a 0700 folder", fi.Mode(), err)
	}
}

func TestRollable(t *testing.T) {
	t.Parallel()
	packs := func(sizes ...int64) []packFile {
		var ps []packFile
		for i, n := range sizes {
			ps = append(ps, packFile{name: "pack-" + strconv.Itoa(i), pack: n})
		}
		return ps
	}
	sizes := func(ps []packFile) []int64 {
		var ns []int64
		for _, p := range ps {
			ns = append(ns, p.pack)
		}
		return ns
	}
	for _, tc := range []struct {
		in, want []int64
	}{
		{[]int64{3, 1000, 10, 1, 5}, []int64{10, 5, 3, 1}}, // the first fetch's pack stays
		{[]int64{100, 40, 10}, nil},                        // a progression already
		{[]int64{5, 5, 5}, []int64{5, 5, 5}},
		{[]int64{1000, 400, 30, 30}, []int64{30, 30}},
		{nil, nil},
	} {
		if got := sizes(rollable(packs(tc.in...))); !slices.Equal(got, tc.want) {
			t.Errorf("rollable(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
