package gitrepo

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
)

// Files of the test remote's main branch.
var mainFiles = map[string]string{
	"README.md":       "# Project\n",
	"docs/guide.md":   "# Guide\n\nStep one.\n",
	"docs/api/ref.md": "# Reference\n",
	"old.txt":         "obsolete\n",
}

// testEnv is a hermetic environment for the tests' own git commands, so
// that the machine's ~/.gitconfig (say, init.defaultBranch) changes nothing.
// Each test has an empty home of its own for them.
func testEnv(t *testing.T) []string {
	t.Helper()
	home, ok := homes.Load(t)
	if !ok {
		home = t.TempDir()
		homes.Store(t, home)
		t.Cleanup(func() { homes.Delete(t) })
	}
	return gitEnv(home.(string))
}

// homes holds each running test's home for its git commands.
var homes sync.Map // *testing.T → string

// gitEnv is testEnv with the home folder home.
func gitEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"LC_ALL=C",
		"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=tester@example.com",
	}
}

// gitT runs git in dir and returns its trimmed output, failing the test
// on error.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitE(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// gitE runs git in dir and returns its trimmed combined output and error.
func gitE(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = testEnv(t)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// gitDirOf is the workspace's git directory, beside the working tree.
func gitDirOf(ws *Workspace) string { return ws.gitDir }

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

// wsGit runs git on the workspace's repository, naming its git directory
// and working tree, as the package itself does.
func wsGit(t *testing.T, ws *Workspace, args ...string) string {
	t.Helper()
	return gitT(t, ws.Dir(), append([]string{"--git-dir=" + gitDirOf(ws), "--work-tree=" + ws.Dir()}, args...)...)
}

// copyDir copies the files and folders under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// symlink makes a symbolic link at path (its folders made first) to target.
func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// assertNoBranch fails if the bare repository remote has branch.
func assertNoBranch(t *testing.T, remote, branch string) {
	t.Helper()
	if out, err := gitE(t, remote, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		t.Fatalf("%s received the branch %s (%s)", remote, branch, out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newRemote makes a bare repository in parent/name (parent "" for a new
// temporary folder) whose main branch holds mainFiles, with a branch
// "other" and a tag "v1" besides, and returns its path. It is a copy of
// one made once for all the tests (remote), which takes a dozen git
// commands.
func newRemote(t *testing.T, parent, name string) string {
	t.Helper()
	if parent == "" {
		parent = t.TempDir()
	}
	remote.once.Do(makeRemote)
	if remote.err != nil {
		t.Fatalf("making the test remote: %v", remote.err)
	}
	bare := filepath.Join(parent, name)
	if err := os.CopyFS(bare, os.DirFS(remote.bare)); err != nil {
		t.Fatal(err)
	}
	return bare
}

// remote is the repository newRemote copies, in a folder TestMain removes.
var remote struct {
	once      sync.Once
	dir, bare string
	err       error
}

func makeRemote() {
	if remote.dir, remote.err = os.MkdirTemp("", "gitrepo-test-remote-"); remote.err != nil {
		return
	}
	git := func(dir string, args ...string) {
		if remote.err != nil {
			return
		}
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = gitEnv(remote.dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			remote.err = fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	bare, work := filepath.Join(remote.dir, "docs.git"), filepath.Join(remote.dir, "w")
	git(remote.dir, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	git(remote.dir, "clone", "--quiet", bare, work)
	write := func(path, content string) {
		if remote.err == nil {
			if remote.err = os.MkdirAll(filepath.Dir(path), 0o755); remote.err == nil {
				remote.err = os.WriteFile(path, []byte(content), 0o644)
			}
		}
	}
	for path, content := range mainFiles {
		write(filepath.Join(work, path), content)
	}
	git(work, "add", "--all")
	git(work, "commit", "--quiet", "-m", "initial")
	git(work, "tag", "v1")
	git(work, "checkout", "--quiet", "-b", "other")
	write(filepath.Join(work, "other.md"), "other branch\n")
	git(work, "add", "--all")
	git(work, "commit", "--quiet", "-m", "other")
	git(work, "push", "--quiet", "origin", "main", "other", "v1")
	remote.bare = bare
}

// advance pushes one more commit to branch in the remote, as someone else
// would.
func advance(t *testing.T, remote, branch, file, content string) {
	t.Helper()
	scratch := t.TempDir()
	gitT(t, scratch, "clone", "--quiet", "--branch", branch, remote, "w")
	work := filepath.Join(scratch, "w")
	writeFile(t, filepath.Join(work, file), content)
	gitT(t, work, "add", "--all")
	gitT(t, work, "commit", "--quiet", "-m", "advance "+file)
	gitT(t, work, "push", "--quiet", "origin", branch)
}

// newRepos makes Repositories whose workspaces go in a fresh folder,
// returned too so that tests can see that nothing is left behind.
func newRepos(t *testing.T, cfg Config) (*Repositories, string) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, cfg.Dir
}

func open(t *testing.T, r *Repositories, spec engine.RepoSpec) *Workspace {
	t.Helper()
	ws, err := r.Open(context.Background(), spec)
	if err != nil {
		t.Fatalf("Open(%+v): %v", spec, err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return ws.(*Workspace)
}

func publish(t *testing.T, ws engine.Workspace, want bool) {
	t.Helper()
	got, err := ws.Publish(context.Background(), "Update the docs\n\nDetails.\n")
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got != want {
		t.Fatalf("Publish reported changed = %v, want %v", got, want)
	}
}

// assertEmptyDir fails unless dir exists and holds nothing but the mirror
// folder, which is kept from job to job: a workspace that failed to open,
// or was closed, left nothing behind.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != MirrorFolder {
			names = append(names, e.Name())
		}
	}
	if len(names) != 0 {
		t.Fatalf("%s still holds %v", dir, names)
	}
}

// logBuffer is a debug-level JSON logger whose output the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// gitHTTPServer serves the bare repositories under root over smart HTTP
// through the real `git http-backend`, and lets only requests with Basic
// credentials user:pass through. Wrong credentials get a 403 whose body
// echoes them back, which git shows to the user: the test that errors are
// scrubbed relies on it. It returns the server and the number of requests
// it authorised.
func gitHTTPServer(t *testing.T, root, user, pass string) (*httptest.Server, func() int) {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Root: "/git",
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + t.TempDir(),
			// Pushing over http needs an authenticated user or this.
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true",
		},
		Stderr: io.Discard,
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	var mu sync.Mutex
	authorised := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		switch got {
		case "":
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
		case want:
			mu.Lock()
			authorised++
			mu.Unlock()
			backend.ServeHTTP(w, r)
		default:
			u, p, _ := r.BasicAuth()
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "denied: Authorization: "+got+" (user "+u+", password "+p+")\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() int {
		mu.Lock()
		defer mu.Unlock()
		return authorised
	}
}

// walkFor fails the test if any file under root contains secret.
func walkFor(t *testing.T, root, secret string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s contains the secret", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("walked only %d files: is %s the workspace?", files, root)
	}
}
