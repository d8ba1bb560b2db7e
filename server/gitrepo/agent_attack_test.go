package gitrepo

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/scripttest"
)

// The agent is untrusted: a model, or a third-party program with a shell.
// These tests play attacks that worked while the clone's .git lay inside
// the working tree.

// plant is a place where an attacking agent writes a git directory's files.
type plant struct {
	name string
	// dir is the folder the agent writes into.
	dir func(ws *Workspace) string
	// commondir: the agent points dir/commondir at a copy of the
	// repository's git directory whose config it wrote, so that git reads
	// that config and not dir/config. Otherwise it writes dir/config.
	commondir bool
	// refused is what Publish's refusal must say; "" means Publish must go
	// on as if nothing had been planted.
	refused string
}

var plants = []plant{
	// What an agent with file tools in Dir writes.
	{"tree .git", func(ws *Workspace) string { return filepath.Join(ws.Dir(), ".git") }, true,
		".git is a nested git repository"},
	// What a shell agent whose sandbox is off writes, finding the git
	// directory beside the tree.
	{"git dir commondir", gitDirOf, true, "commondir"},
	{"git dir config", gitDirOf, false, ""},
	// ... or guessing where git would look for one.
	{"beside the tree", func(ws *Workspace) string { return filepath.Join(filepath.Dir(ws.Dir()), ".git") }, true, ""},
}

// write plants config (git configuration text) for ws's git commands.
func (p plant) write(t *testing.T, ws *Workspace, config string) {
	t.Helper()
	dir := p.dir(ws)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if !p.commondir {
		appendFile(t, filepath.Join(dir, "config"), config)
		return
	}
	common := filepath.Join(t.TempDir(), "common")
	copyDir(t, gitDirOf(ws), common)
	appendFile(t, filepath.Join(common, "config"), config)
	writeFile(t, filepath.Join(dir, "commondir"), common+"\n")
}

// check tells whether Publish, which returned err, did what p expects:
// refused and pushed nothing, or pushed a.md to branch of remote.
func (p plant) check(t *testing.T, err error, remote, branch string) {
	t.Helper()
	if p.refused != "" {
		if err == nil {
			t.Fatal("Publish succeeded; it should have refused")
		}
		t.Logf("Publish: %v", err)
		if !engine.IsPermanent(err) || !strings.Contains(err.Error(), "gitrepo: publish refused: ") || !strings.Contains(err.Error(), p.refused) {
			t.Errorf("Publish = %v, want a permanent refusal saying %q", err, p.refused)
		}
		assertNoBranch(t, remote, branch)
		return
	}
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := gitT(t, remote, "diff", "--name-status", "main", branch); got != "A\ta.md" {
		t.Fatalf("the real remote's branch differs from main by %q", got)
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Attack 1: a commondir pointing at a config with core.fsmonitor made
// `git add --all` run the agent's program during Publish.
func TestPublishRunsNoProgramTheAgentConfigured(t *testing.T) {
	t.Parallel()
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			remote := newRemote(t, "", "docs.git")
			r, _ := newRepos(t, Config{})
			ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-fsmonitor"})
			writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")

			marker := filepath.Join(t.TempDir(), "ran")
			script := filepath.Join(t.TempDir(), "fsmonitor")
			scripttest.Write(t, script, "#!/bin/sh\necho \"fsmonitor $*\" >> '"+marker+"'\nexit 1\n")
			p.write(t, ws, "[core]\n\tfsmonitor = "+script+"\n")

			_, err := ws.Publish(context.Background(), "a")
			if b, rerr := os.ReadFile(marker); rerr == nil {
				t.Errorf("the agent's core.fsmonitor ran: %s", b)
			}
			p.check(t, err, remote, "job-fsmonitor")
		})
	}
}

// listener is a TCP listener that records every connection it is offered
// and what arrives on it, and answers nothing.
type listener struct {
	net.Listener
	mu    sync.Mutex
	conns int
	got   []byte
}

func newListener(t *testing.T) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{Listener: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			l.conns++
			l.mu.Unlock()
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
				b, _ := io.ReadAll(io.LimitReader(c, 1<<20))
				l.mu.Lock()
				l.got = append(l.got, b...)
				l.mu.Unlock()
			}()
		}
	}()
	return l
}

func (l *listener) seen() (int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns, string(l.got)
}

// Attack 2: configuration the agent wrote sent the push, with the host's
// token, elsewhere: url.<x>.insteadOf to another repository, http.proxy to
// a listener of its own.
func TestPublishPushesOnlyToTheRepository(t *testing.T) {
	t.Parallel()
	const user, token = "x-access-token", "redirect-sentinel-3c4d"
	header := base64.StdEncoding.EncodeToString([]byte(user + ":" + token))
	for _, p := range plants {
		for _, attack := range []string{"insteadOf", "http.proxy"} {
			t.Run(p.name+"/"+attack, func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				remote := newRemote(t, root, "docs.git")
				srv, _ := gitHTTPServer(t, root, user, token)
				url := srv.URL + "/git/docs.git"
				decoy := newRemote(t, "", "decoy.git")
				proxy := newListener(t)

				r, _ := newRepos(t, Config{Credentials: func(context.Context, string) (string, string, error) {
					return user, token, nil
				}})
				ws := open(t, r, engine.RepoSpec{Repository: url, Ref: "main", Branch: "job-redirect"})
				writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")
				config := "[url \"file://" + decoy + "\"]\n\tinsteadOf = " + url + "\n"
				if attack == "http.proxy" {
					config = "[http]\n\tproxy = http://" + proxy.Addr().String() + "\n"
				}
				p.write(t, ws, config)

				_, err := ws.Publish(context.Background(), "a")
				assertNoBranch(t, decoy, "job-redirect")
				if n, got := proxy.seen(); n != 0 {
					t.Errorf("the agent's listener was offered %d connections", n)
					if strings.Contains(got, token) || strings.Contains(got, header) {
						t.Errorf("the token reached the agent's listener:\n%s", got)
					}
				}
				p.check(t, err, remote, "job-redirect")
			})
		}
	}
}

// Attack 3: a link the agent leaves in the tree aims into a git directory,
// where anything later written through it becomes a hook or a config.
func TestPublishRefusesLinksIntoGitDirectories(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, link, target, want string
	}{
		{"tree .git", "docs/x.md", "../.git/hooks/pre-commit",
			"docs/x.md is a symbolic link into a git directory (../.git/hooks/pre-commit)"},
		{"git dir", "docs/x.md", "../../git/hooks/pre-commit",
			"docs/x.md is a symbolic link that leaves the tree (../../git/hooks/pre-commit)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			remote := newRemote(t, "", "docs.git")
			r, _ := newRepos(t, Config{})
			ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-link"})
			writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")
			symlink(t, tc.target, filepath.Join(ws.Dir(), tc.link))

			_, err := ws.Publish(context.Background(), "a")
			if err == nil || !engine.IsPermanent(err) || !strings.Contains(err.Error(), "gitrepo: publish refused: "+tc.want) {
				t.Fatalf("Publish = %v, want a permanent refusal saying %q", err, tc.want)
			}
			assertNoBranch(t, remote, "job-link")
		})
	}
}

// Links that stay inside the tree are ordinary content, dangling or not.
func TestPublishKeepsLinksInsideTheTree(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, _ := newRepos(t, Config{})
	ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-links"})
	writeFile(t, filepath.Join(ws.Dir(), "docs/index.md"), "# Index\n")
	links := map[string]string{
		"INDEX.md":          "docs/index.md",
		"docs/readme.md":    "../README.md",
		"docs/api/guide.md": "../guide.md",
		"docs/later.md":     "new/later.md", // dangling, inside
		"docs/self":         ".",
	}
	for link, target := range links {
		symlink(t, target, filepath.Join(ws.Dir(), link))
	}
	publish(t, ws, true)
	for link, target := range links {
		if got := gitT(t, remote, "cat-file", "-p", "job-links:"+link); got != target {
			t.Errorf("pushed %s -> %q, want -> %q", link, got, target)
		}
	}
}

// A gitlink (a submodule's commit) staged in the index, as an agent that
// reached the git directory could stage one, is not published.
func TestPublishRefusesANewGitlink(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, _ := newRepos(t, Config{})
	ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-gitlink"})
	head := wsGit(t, ws, "rev-parse", "HEAD")
	if err := os.Mkdir(filepath.Join(ws.Dir(), "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	wsGit(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	// The agent's .gitmodules asks git to ignore the submodule: the check
	// must see it all the same.
	writeFile(t, filepath.Join(ws.Dir(), ".gitmodules"), "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n\tignore = all\n")

	_, err := ws.Publish(context.Background(), "a")
	if want := "gitrepo: publish refused: sub is a submodule (gitlink)"; err == nil || !engine.IsPermanent(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Publish = %v, want a permanent refusal saying %q", err, want)
	}
	assertNoBranch(t, remote, "job-gitlink")
}

// The working tree holds the files and nothing of git's; Close removes
// the whole workspace.
func TestWorkspaceLayout(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	r, parent := newRepos(t, Config{})
	ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-layout"})
	if _, err := os.Lstat(filepath.Join(ws.Dir(), ".git")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Dir holds .git (Lstat: %v)", err)
	}
	root := filepath.Dir(ws.Dir())
	if rel, err := filepath.Rel(root, gitDirOf(ws)); err != nil || strings.HasPrefix(rel, "..") || strings.HasPrefix(rel, filepath.Base(ws.Dir())) {
		t.Fatalf("the git directory %s is not in the workspace %s beside the tree", gitDirOf(ws), root)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Close, Lstat(%s) = %v", root, err)
	}
	assertEmptyDir(t, parent)
}
