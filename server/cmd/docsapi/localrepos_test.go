//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// localProject is a configuration of one project on repository, with the
// ref given, whose agent never runs here; beside it a project on a remote
// repository, which start-up never checks (it needs no network).
func localProject(t *testing.T, dir, repository, ref string) string {
	t.Helper()
	return writeFile(t, filepath.Join(dir, "docsapi.json"), `{"git": {"workDir": "runs"}, "projects": [
  {"id": "remote", "repository": "https://git.invalid/docs.git", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "sandbox": "off"}},
  {"id": "handbook", "repository": "`+repository+`", "ref": "`+ref+`", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "sandbox": "off"}}]}`)
}

// advised returns the commands serve's message says to run: its lines
// indented by four spaces, with YOUR-DOCS-CLONE replaced by clone.
func advised(t *testing.T, stderr, clone string) []string {
	t.Helper()
	var cmds []string
	for line := range strings.Lines(stderr) {
		if cmd, ok := strings.CutPrefix(line, "    "); ok && strings.HasPrefix(cmd, "git ") {
			cmds = append(cmds, strings.ReplaceAll(strings.TrimSpace(cmd), "YOUR-DOCS-CLONE", shellQuote(clone)))
		}
	}
	if len(cmds) == 0 {
		t.Fatalf("the message advises no command:\n%s", stderr)
	}
	return cmds
}

// runAdvised runs the commands with sh as an operator would paste them,
// with an identity for commits and no configuration of the machine's.
func runAdvised(t *testing.T, dir string, cmds []string) {
	t.Helper()
	for _, c := range cmds {
		cmd := exec.Command("sh", "-c", c)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=Operator", "GIT_AUTHOR_EMAIL=op@example.com", "GIT_COMMITTER_NAME=Operator", "GIT_COMMITTER_EMAIL=op@example.com"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the advised %q: %v\n%s", c, err, out)
		}
	}
}

// docsClone is a repository with one commit of docs, on branch trunk: the
// advice must not depend on the clone's branch name.
func docsClone(t *testing.T, gitBin string) string {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "my docs")
	gitOut(t, gitBin, t.TempDir(), "init", "--initial-branch=trunk", clone)
	writeFile(t, filepath.Join(clone, "index.md"), "# Docs\n")
	gitOut(t, gitBin, clone, "add", "index.md")
	gitOut(t, gitBin, clone, "commit", "-m", "Docs")
	return clone
}

// serve refuses to start on a local repository no job could start from,
// says why and what to run; run as written, that lets it start.
func TestServeChecksLocalRepositories(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for _, tc := range []struct {
		name string
		// setup makes what the configuration names, in dir; it returns
		// the repository and the ref to configure.
		setup func(t *testing.T, dir string) (repository, ref string)
		says  []string
	}{
		{"missing", func(t *testing.T, dir string) (string, string) {
			return "handbook.git", "main"
		}, []string{"handbook.git does not exist", "git init --bare --initial-branch=main ", "git -C YOUR-DOCS-CLONE push "}},
		{"missing, default branch", func(t *testing.T, dir string) (string, string) {
			return "file://" + filepath.Join(dir, "handbook.git"), ""
		}, []string{"handbook.git does not exist", "--initial-branch=main", "HEAD:main"}},
		{"dangling link", func(t *testing.T, dir string) (string, string) {
			if err := os.Symlink("elsewhere/docs.git", filepath.Join(dir, "handbook.git")); err != nil {
				t.Fatal(err)
			}
			return "handbook.git", "docs"
		}, []string{"is a symbolic link to elsewhere/docs.git, which does not exist", "elsewhere/docs.git", "--initial-branch=docs", "HEAD:docs"}},
		{"empty folder", func(t *testing.T, dir string) (string, string) {
			if err := os.Mkdir(filepath.Join(dir, "handbook.git"), 0o755); err != nil {
				t.Fatal(err)
			}
			return "handbook.git", "main"
		}, []string{"is not a git repository (git: ", "The folder is empty", "git init --bare"}},
		{"folder of docs", func(t *testing.T, dir string) (string, string) {
			if err := os.MkdirAll(filepath.Join(dir, "the docs"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "the docs", "index.md"), "# Docs\n")
			return "the docs", "main"
		}, []string{"is not a git repository", "If the folder holds the docs", "init --initial-branch=main"}},
		{"no commits", func(t *testing.T, dir string) (string, string) {
			gitOut(t, gitBin, dir, "init", "--bare", "handbook.git")
			return "handbook.git", "main"
		}, []string{"handbook.git has no commits", "push "}},
		{"no such branch", func(t *testing.T, dir string) (string, string) {
			gitOut(t, gitBin, dir, "clone", "--bare", docsClone(t, gitBin), "handbook.git")
			return "handbook.git", "main"
		}, []string{`has no branch or tag "main"`, "(its branches: trunk)", "branch main trunk"}},
		{"no default branch", func(t *testing.T, dir string) (string, string) {
			gitOut(t, gitBin, dir, "clone", "--bare", docsClone(t, gitBin), "handbook.git")
			gitOut(t, gitBin, filepath.Join(dir, "handbook.git"), "symbolic-ref", "HEAD", "refs/heads/gone")
			return "handbook.git", ""
		}, []string{"has no default branch", "symbolic-ref HEAD refs/heads/trunk"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			repo, ref := tc.setup(t, dir)
			config := localProject(t, dir, repo, ref)
			env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
			// Bounded: a serve that wrongly starts ends, and fails the test.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			r := runCLIContext(ctx, t, env, "", "serve", "--config", config, "--listen", "127.0.0.1:0")
			r.expect(t, exitUsage, append([]string{"configuration file " + config + `: projects[1] ("handbook"): repository `}, tc.says...)...)
			if strings.Contains(r.stderr, "git.invalid") {
				t.Errorf("the remote repository was checked:\n%s", r.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
				t.Errorf("the storage was opened before the check")
			}
			runAdvised(t, dir, advised(t, r.stderr, docsClone(t, gitBin)))
			_, logs, stop := serveInProcess(t, env, "--config", config)
			if code := stop(); code != exitOK {
				t.Fatalf("after the advised commands, serve exited %d:\n%s", code, logs)
			}
		})
	}
}

// A file is no repository, and nothing to run mends that; every project
// in the wrong is named at once.
func TestServeNamesEveryBadLocalRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	file := writeFile(t, filepath.Join(dir, "notes.txt"), "notes\n")
	config := writeFile(t, filepath.Join(dir, "docsapi.json"), `{"projects": [
  {"id": "a", "repository": "`+file+`", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": "off"}},
  {"id": "b", "repository": "b.git", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": "off"}}]}`)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r := runCLIContext(ctx, t, map[string]string{"HOME": dir}, "", "serve", "--config", config, "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0")
	r.expect(t, exitUsage,
		`projects[0] ("a"): repository `+file+` is a file, not a git repository: set "repository"`,
		`projects[1] ("b"): repository `+filepath.Join(dir, "b.git")+" does not exist")
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/srv/git/docs.git": "/srv/git/docs.git",
		"/srv/my docs":      "'/srv/my docs'",
		"/srv/it's":         `'/srv/it'\''s'`,
		"/srv/$HOME":        "'/srv/$HOME'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
