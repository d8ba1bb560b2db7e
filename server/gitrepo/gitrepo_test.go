package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/scripttest"
)

// The agent's edits in the tests: add, modify and delete, at the top and
// in subfolders.
func edit(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "README.md"), "# Project\n\nNow documented.\n")
	writeFile(t, filepath.Join(dir, "docs/new/page.md"), "# New page\n")
	for _, f := range []string{"old.txt", "docs/api/ref.md"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
}

const wantNameStatus = "M\tREADME.md\nD\tdocs/api/ref.md\nA\tdocs/new/page.md\nD\told.txt"

func TestOpenEditPublishClose(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, parent := newRepos(t, Config{AuthorName: "Docs Bot", AuthorEmail: "bot@docs.example"})
	const branch = "docsapi/job-1"
	ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: branch})

	if got := wsGit(t, ws, "symbolic-ref", "--short", "HEAD"); got != branch {
		t.Fatalf("checked out %q, want %q", got, branch)
	}
	for path, content := range mainFiles {
		if got := readFile(t, filepath.Join(ws.Dir(), path)); got != content {
			t.Fatalf("%s = %q, want %q", path, got, content)
		}
	}

	// Nothing changed: nothing to propose, and the remote has no branch.
	publish(t, ws, false)
	if out, err := gitE(t, remote, "rev-parse", "--verify", "refs/heads/"+branch); err == nil {
		t.Fatalf("the branch was pushed with no change: %s", out)
	}

	edit(t, ws.Dir())
	publish(t, ws, true)
	if got := gitT(t, remote, "diff", "--name-status", "main", branch); got != wantNameStatus {
		t.Fatalf("the pushed branch differs from main by\n%s\nwant\n%s", got, wantNameStatus)
	}
	if got := gitT(t, remote, "show", branch+":README.md"); got != "# Project\n\nNow documented." {
		t.Fatalf("pushed README.md = %q", got)
	}
	if got := gitT(t, remote, "show", branch+":docs/new/page.md"); got != "# New page" {
		t.Fatalf("pushed docs/new/page.md = %q", got)
	}
	got := gitT(t, remote, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", branch)
	if want := "Docs Bot <bot@docs.example>|Docs Bot <bot@docs.example>|Update the docs\n\nDetails."; got != want {
		t.Fatalf("the commit is\n%s\nwant\n%s", got, want)
	}

	// Publishing again commits and pushes nothing, and still proposes.
	publish(t, ws, true)
	if n := gitT(t, remote, "rev-list", "--count", "main.."+branch); n != "1" {
		t.Fatalf("the branch has %s commits over main, want 1", n)
	}

	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Close, Stat(Dir) = %v", err)
	}
	assertEmptyDir(t, parent)
	if err := ws.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := ws.Publish(context.Background(), "late"); err == nil {
		t.Fatal("Publish after Close succeeded")
	}
}

// A follow-up opens the branch an earlier run pushed, even after its base
// moved on; without edits it still proposes the earlier changes, and once
// they are reverted it proposes nothing.
func TestFollowUpContinuesTheBranch(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, parent := newRepos(t, Config{})
	spec := engine.RepoSpec{Repository: remote, Ref: "main", Branch: "docsapi/job-2"} // a plain path

	first := open(t, r, spec)
	edit(t, first.Dir())
	publish(t, first, true)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// The base moves on: its new commit is not the branch's change.
	oldMain := gitT(t, remote, "rev-parse", "main")
	advance(t, remote, "main", "docs/guide.md", "# Guide\n\nRewritten upstream.\n")

	second := open(t, r, spec)
	if got := readFile(t, filepath.Join(second.Dir(), "docs/new/page.md")); got != "# New page\n" {
		t.Fatalf("the follow-up does not start from the pushed branch: page.md = %q", got)
	}
	if got := wsGit(t, second, "rev-parse", "--abbrev-ref", "@{upstream}"); got != "origin/docsapi/job-2" {
		t.Fatalf("the branch tracks %q", got)
	}
	publish(t, second, true)
	if n := gitT(t, remote, "rev-list", "--count", oldMain+"..docsapi/job-2"); n != "1" {
		t.Fatalf("the branch has %s commits over the old main, want 1", n)
	}

	// Revert by hand, as an agent told to undo would.
	for path, content := range mainFiles {
		writeFile(t, filepath.Join(second.Dir(), path), content)
	}
	if err := os.RemoveAll(filepath.Join(second.Dir(), "docs/new")); err != nil {
		t.Fatal(err)
	}
	publish(t, second, false)
	// The revert was pushed, so the pull request shows no change either.
	if got := gitT(t, remote, "diff", "--name-status", oldMain, "docsapi/job-2"); got != "" {
		t.Fatalf("after the revert the branch still differs from its base:\n%s", got)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmptyDir(t, parent)
}

func TestOpenRefs(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, _ := newRepos(t, Config{})
	for _, tc := range []struct {
		ref, file string
	}{
		{"", "README.md"},                // the default branch
		{"other", "other.md"},            // another branch
		{"refs/heads/other", "other.md"}, // written in full
		{"v1", "old.txt"},                // a tag
	} {
		ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: tc.ref, Branch: "job-" + strings.ReplaceAll(tc.ref, "/", "-")})
		if _, err := os.Stat(filepath.Join(ws.Dir(), tc.file)); err != nil {
			t.Errorf("ref %q: %v", tc.ref, err)
		}
		// A new branch from any ref proposes nothing until edited.
		publish(t, ws, false)
		writeFile(t, filepath.Join(ws.Dir(), "x.md"), "x\n")
		publish(t, ws, true)
	}
	// Continuing each branch fetches its base (branch, tag or default) to
	// compare with: the branch still proposes its change.
	for _, ref := range []string{"", "other", "v1"} {
		ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: ref, Branch: "job-" + ref})
		publish(t, ws, true)
	}
	if got := gitT(t, remote, "diff", "--name-status", "other", "job-other"); got != "A\tx.md" {
		t.Fatalf("the branch made from other differs from it by %q", got)
	}
}

func TestOpenFailuresLeaveNothing(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, parent := newRepos(t, Config{})
	for _, tc := range []struct {
		name string
		spec engine.RepoSpec
		want string
	}{
		{"missing ref", engine.RepoSpec{Repository: remote, Ref: "nope", Branch: "b"}, `the ref "nope" does not exist`},
		{"missing repository", engine.RepoSpec{Repository: filepath.Join(t.TempDir(), "gone.git"), Branch: "b"}, "clone failed (git ls-remote)"},
		{"missing file:// repository", engine.RepoSpec{Repository: "file://" + filepath.Join(t.TempDir(), "gone.git"), Branch: "b"}, "clone failed"},
		{"option-like branch", engine.RepoSpec{Repository: remote, Branch: "--upload-pack=touch pwned"}, "starts with '-'"},
		{"option-like repository", engine.RepoSpec{Repository: "--upload-pack=touch pwned", Branch: "b"}, "starts with '-'"},
		{"invalid branch", engine.RepoSpec{Repository: remote, Branch: "a..b"}, "not a valid branch"},
		{"no branch", engine.RepoSpec{Repository: remote}, "branch is empty"},
		{"token in URL", engine.RepoSpec{Repository: "https://x-access-token:s3cr3t@git.example/o/r.git", Branch: "b"}, "Config.Credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := r.Open(context.Background(), tc.spec)
			if err == nil {
				ws.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("error %q shows the password", err)
			}
			if !engine.IsPermanent(err) {
				t.Fatalf("error %q is not permanent", err)
			}
			assertEmptyDir(t, parent)
		})
	}
}

// installHook makes a hook in the bare repository remote.
func installHook(t *testing.T, remote, name, script string) {
	t.Helper()
	scripttest.Write(t, filepath.Join(remote, "hooks", name), "#!/bin/sh\n"+script)
}

func TestPushRejectedThenRetried(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	installHook(t, remote, "pre-receive", "echo 'policy: no pushes today' >&2\nexit 1\n")
	r, _ := newRepos(t, Config{})
	ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-3"})
	edit(t, ws.Dir())

	_, err := ws.Publish(context.Background(), "change")
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.Step != "push" {
		t.Fatalf("Publish = %v, want an *Error of the push step", err)
	}
	for _, want := range []string{"push failed", "policy: no pushes today", "pre-receive hook declined"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !engine.IsPermanent(err) {
		t.Fatalf("a declined push is not permanent: %v", err)
	}

	if err := os.Remove(filepath.Join(remote, "hooks", "pre-receive")); err != nil {
		t.Fatal(err)
	}
	publish(t, ws, true)
	if n := gitT(t, remote, "rev-list", "--count", "main..job-3"); n != "1" {
		t.Fatalf("after the retry the branch has %s commits over main, want 1", n)
	}
	if got := gitT(t, remote, "diff", "--name-status", "main", "job-3"); got != wantNameStatus {
		t.Fatalf("the pushed branch differs from main by\n%s", got)
	}
}

// Two runs of one job (a lease that expired under a slow run): the second
// push is not a fast-forward, an error that a retry can mend.
func TestPushNonFastForward(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, _ := newRepos(t, Config{})
	spec := engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-4"}
	a, b := open(t, r, spec), open(t, r, spec)
	writeFile(t, filepath.Join(a.Dir(), "a.md"), "a\n")
	writeFile(t, filepath.Join(b.Dir(), "b.md"), "b\n")
	publish(t, a, true)

	_, err := b.Publish(context.Background(), "b")
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.Step != "push" {
		t.Fatalf("Publish = %v, want an *Error of the push step", err)
	}
	if engine.IsPermanent(err) {
		t.Fatalf("a non-fast-forward push is permanent: %v", err)
	}
	if !strings.Contains(err.Error(), "another run pushed") {
		t.Fatalf("error %q does not explain", err)
	}
	if got := gitT(t, remote, "diff", "--name-status", "main", "job-4"); got != "A\ta.md" {
		t.Fatalf("the remote branch was overwritten: %q", got)
	}
}

// An agent whose sandbox is off may find the git directory beside the
// working tree and edit it. Publish must neither follow a rewritten remote
// nor run the repository's hooks.
func TestPublishIgnoresTheAgentsGitConfigAndHooks(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	decoy := newRemote(t, "", "decoy.git")
	r, _ := newRepos(t, Config{})
	url := "file://" + remote
	ws := open(t, r, engine.RepoSpec{Repository: url, Ref: "main", Branch: "job-5"})
	writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")

	wsGit(t, ws, "config", "url.file://"+decoy+".insteadOf", url)
	wsGit(t, ws, "config", "remote.origin.url", "file://"+decoy)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	for _, hook := range []string{"pre-commit", "prepare-commit-msg", "post-commit", "pre-push"} {
		scripttest.Write(t, filepath.Join(gitDirOf(ws), "hooks", hook), "#!/bin/sh\necho "+hook+" >> '"+marker+"'\n")
	}

	publish(t, ws, true)
	if got := gitT(t, remote, "diff", "--name-status", "main", "job-5"); got != "A\ta.md" {
		t.Fatalf("the real remote's branch differs from main by %q", got)
	}
	if out, err := gitE(t, decoy, "rev-parse", "--verify", "refs/heads/job-5"); err == nil {
		t.Fatalf("the push went to the decoy: %s", out)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the repository's hooks ran: %s", b)
	}
}

// Commits made in the git directory itself (by an agent whose sandbox is
// off) are published as they are.
func TestPublishPushesTheAgentsCommits(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, _ := newRepos(t, Config{})
	ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-6"})
	writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")
	wsGit(t, ws, "add", "a.md")
	wsGit(t, ws, "commit", "--quiet", "-m", "agent's own commit")
	publish(t, ws, true)
	if got := gitT(t, remote, "log", "--format=%s", "main..job-6"); got != "agent's own commit" {
		t.Fatalf("the branch's commits are %q", got)
	}
}

// The server's environment never reaches git: a hook of the remote records
// the environment that git's processes passed down.
func TestServerEnvironmentNotPassed(t *testing.T) {
	const sentinel = "server-secret-f1e2d3"
	t.Setenv("DOCSAPI_TEST_SERVER_SECRET", sentinel)
	remote := newRemote(t, "", "docs.git")
	dump := filepath.Join(t.TempDir(), "env")
	installHook(t, remote, "pre-receive", "env > '"+dump+"'\n")
	r, _ := newRepos(t, Config{})
	ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-7"})
	writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")
	publish(t, ws, true)

	env := readFile(t, dump)
	if !strings.Contains(env, "GIT_CONFIG_NOSYSTEM=1") {
		t.Fatalf("the hook's environment is not git's:\n%s", env)
	}
	if strings.Contains(env, sentinel) {
		t.Fatalf("the server's environment reached git:\n%s", env)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{Git: "no-such-git-binary"}); err == nil || !strings.Contains(err.Error(), "cannot find git") {
		t.Errorf("New with a missing git = %v", err)
	}
	notGit := filepath.Join(t.TempDir(), "fake-git")
	scripttest.Write(t, notGit, "#!/bin/sh\necho 'git version 2.20.1'\n")
	if _, err := New(Config{Git: notGit}); err == nil || !strings.Contains(err.Error(), "2.32 or newer") {
		t.Errorf("New with an old git = %v", err)
	}
	for _, env := range []string{"HOME=/", "GIT_CONFIG_COUNT=0", "git_config_parameters='x.y=1'", "NOEQUALS", "GIT_DIR=/srv/r.git", "git_work_tree=/tmp"} {
		if _, err := New(Config{Env: []string{env}}); err == nil {
			t.Errorf("New with Env %q succeeded", env)
		}
	}
	if _, err := New(Config{Dir: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("New with a missing Dir succeeded")
	}
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.AuthorName != DefaultAuthorName || r.cfg.AuthorEmail != DefaultAuthorEmail || r.cfg.Timeout != DefaultTimeout || r.cfg.Dir != os.TempDir() {
		t.Errorf("defaults not applied: %+v", r.cfg)
	}
}
