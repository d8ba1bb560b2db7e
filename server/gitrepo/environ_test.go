package gitrepo

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/scripttest"
)

// configOf is the configuration an environment gives git through
// GIT_CONFIG_COUNT.
func configOf(t *testing.T, env []string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	n, err := strconv.Atoi(vars["GIT_CONFIG_COUNT"])
	if err != nil {
		t.Fatalf("GIT_CONFIG_COUNT = %q", vars["GIT_CONFIG_COUNT"])
	}
	config := map[string]string{}
	for i := range n {
		k, ok := vars["GIT_CONFIG_KEY_"+strconv.Itoa(i)]
		if !ok {
			t.Fatalf("GIT_CONFIG_KEY_%d is missing", i)
		}
		config[k] = vars["GIT_CONFIG_VALUE_"+strconv.Itoa(i)]
	}
	return config
}

func envVars(env []string) map[string]string {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return vars
}

func TestEnvironNamesTheRepositoryAndForcesConfig(t *testing.T) {
	t.Parallel()
	r, _ := newRepos(t, Config{})
	const repo = "https://git.example/o/r.git"
	env := r.environ(cmdSpec{dir: "/w/tree", home: "/w/home", gitDir: "/w/git", workTree: "/w/tree", url: repo})
	vars := envVars(env)
	for k, want := range map[string]string{
		"GIT_DIR":                 "/w/git",
		"GIT_WORK_TREE":           "/w/tree",
		"GIT_CEILING_DIRECTORIES": "",
		"GIT_PROXY_COMMAND":       "",
		"GIT_ATTR_NOSYSTEM":       "1",
	} {
		if got, ok := vars[k]; got != want || (k == "GIT_PROXY_COMMAND" && !ok) {
			t.Errorf("%s = %q (set %v), want %q", k, got, ok, want)
		}
	}
	config := configOf(t, env)
	for k, want := range map[string]string{
		"core.hooksPath":              os.DevNull,
		"core.fsmonitor":              "false",
		"credential.helper":           "",
		"core.askPass":                "",
		"commit.gpgSign":              "false",
		"push.gpgSign":                "false",
		"submodule.recurse":           "false",
		"push.recurseSubmodules":      "no",
		"maintenance.auto":            "false",
		"gc.auto":                     "0",
		"http." + repo + ".proxy":     "",
		"remote." + repo + ".proxy":   "",
		"http." + repo + ".sslVerify": "true",
	} {
		if got, ok := config[k]; !ok || got != want {
			t.Errorf("config %s = %q (set %v), want %q", k, got, ok, want)
		}
	}

	// Commands without a repository find none above their folder.
	vars = envVars(r.environ(cmdSpec{dir: "/w/home", home: "/w/home", url: "file:///srv/r.git"}))
	if _, ok := vars["GIT_DIR"]; ok || vars["GIT_CEILING_DIRECTORIES"] != "/w" {
		t.Errorf("without a repository: GIT_DIR %q, GIT_CEILING_DIRECTORIES %q", vars["GIT_DIR"], vars["GIT_CEILING_DIRECTORIES"])
	}
	if c := configOf(t, r.environ(cmdSpec{dir: "/w/home", home: "/w/home", url: "file:///srv/r.git"})); c["http.file:///srv/r.git.proxy"] != "" {
		t.Errorf("a proxy pinned for a file:// remote: %v", c)
	}
}

func TestProxyFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env        []string
		repo, want string
	}{
		{nil, "https://h/r.git", ""},
		{[]string{"HTTPS_PROXY=http://up:1"}, "https://h/r.git", "http://up:1"},
		{[]string{"HTTPS_PROXY=http://up:1", "https_proxy=http://low:2"}, "https://h/r.git", "http://low:2"},
		{[]string{"HTTPS_PROXY=http://up:1"}, "http://h/r.git", ""},
		{[]string{"http_proxy=http://p:3", "HTTP_PROXY=http://ignored:4"}, "http://h/r.git", "http://p:3"},
		{[]string{"ALL_PROXY=http://all:5"}, "http://h/r.git", "http://all:5"},
		{[]string{"ALL_PROXY=http://all:5", "all_proxy=http://all:6"}, "https://h/r.git", "http://all:6"},
		{[]string{"https_proxy=", "ALL_PROXY=http://all:5"}, "https://h/r.git", ""},
		{[]string{"https_proxy=http://a:1", "https_proxy=http://b:2"}, "https://h/r.git", "http://b:2"},
	} {
		r, _ := newRepos(t, Config{Env: tc.env})
		if got := r.proxyFor(tc.repo); got != tc.want {
			t.Errorf("proxyFor(%s) with %q = %q, want %q", tc.repo, tc.env, got, tc.want)
		}
	}
}

// Should a config file in the git directory hold settings that run
// programs or send the push elsewhere (the config is restored before
// Publish, and the git directory is out of the agent's reach: this is the
// second line), the forced configuration outranks them.
func TestForcedConfigOutranksTheRepositorysConfig(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	newRemote(t, root, "docs.git")
	srv, _ := gitHTTPServer(t, root, "u", "p")
	httpURL := srv.URL + "/git/docs.git"
	proxy := newListener(t)

	work := filepath.Join(t.TempDir(), "work")
	gitT(t, filepath.Dir(work), "init", "--quiet", work)
	writeFile(t, filepath.Join(work, "a.md"), "a\n")
	marker := filepath.Join(t.TempDir(), "ran")
	script := func(name string) string {
		p := filepath.Join(t.TempDir(), name)
		scripttest.Write(t, p, "#!/bin/sh\necho "+name+" >> '"+marker+"'\nexit 1\n")
		return p
	}
	appendFile(t, filepath.Join(work, ".git", "config"), "[core]\n"+
		"\tfsmonitor = "+script("fsmonitor")+"\n"+
		"\taskPass = "+script("askpass")+"\n"+
		"\tgitProxy = "+script("gitproxy")+"\n"+
		"\tsshCommand = "+script("sshcommand")+"\n"+
		"[credential]\n\thelper = !"+script("helper")+"\n"+
		"[http]\n\tproxy = http://"+proxy.Addr().String()+"\n"+
		"[remote \""+httpURL+"\"]\n\tproxy = http://"+proxy.Addr().String()+"\n")

	r, _ := newRepos(t, Config{})
	spec := func(url string) cmdSpec {
		return cmdSpec{step: "test", dir: work, home: t.TempDir(), gitDir: filepath.Join(work, ".git"), workTree: work, url: url}
	}
	ctx := context.Background()
	if _, err := r.run(ctx, spec(""), "add", "--all"); err != nil {
		t.Fatal(err)
	}
	// No credentials: the server asks for them, which would run the
	// helper and askpass; through the proxy, were it used.
	if _, err := r.run(ctx, spec(httpURL), "ls-remote", "--", httpURL); err == nil {
		t.Error("ls-remote without credentials succeeded")
	}
	// Nothing listens on port 1; what matters is what git starts.
	_, _ = r.run(ctx, spec("git://127.0.0.1:1/docs.git"), "ls-remote", "--", "git://127.0.0.1:1/docs.git")
	_, _ = r.run(ctx, spec("ssh://127.0.0.1:1/docs.git"), "ls-remote", "--", "ssh://127.0.0.1:1/docs.git")

	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("programs of the repository's config ran:\n%s", b)
	}
	if n, _ := proxy.seen(); n != 0 {
		t.Errorf("the repository's http.proxy was offered %d connections", n)
	}
}

// A deployment's proxy, given in Config.Env, still carries the traffic:
// the pinned proxy is the one git would have taken from the environment.
func TestDeploymentProxyIsUsed(t *testing.T) {
	t.Parallel()
	const user, token = "x-access-token", "proxy-sentinel-1a2b"
	root := t.TempDir()
	remote := newRemote(t, root, "docs.git")
	srv, _ := gitHTTPServer(t, root, user, token)
	var proxied atomic.Int32
	forward := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.URL = pr.In.URL }, // absolute: a proxy request
		Transport: &http.Transport{},
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !req.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		proxied.Add(1)
		forward.ServeHTTP(w, req)
	}))
	t.Cleanup(proxy.Close)

	r, _ := newRepos(t, Config{
		Env: []string{"http_proxy=" + proxy.URL},
		Credentials: func(context.Context, string) (string, string, error) {
			return user, token, nil
		},
	})
	ws := open(t, r, engine.RepoSpec{Repository: srv.URL + "/git/docs.git", Ref: "main", Branch: "job-proxy"})
	writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")
	publish(t, ws, true)
	if got := gitT(t, remote, "diff", "--name-status", "main", "job-proxy"); got != "A\ta.md" {
		t.Fatalf("the branch pushed through the proxy differs from main by %q", got)
	}
	if proxied.Load() == 0 {
		t.Fatal("nothing went through the deployment's proxy")
	}
}
