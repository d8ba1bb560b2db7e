package gitrepo

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
)

func TestEnvironWithCredentials(t *testing.T) {
	const parentSecret = "parent-env-secret-4b5c"
	t.Setenv("DOCSAPI_TEST_PARENT_SECRET", parentSecret)
	t.Setenv("GIT_TRACE_CURL", "1") // would print the header, were it passed
	r, _ := newRepos(t, Config{Env: []string{"HTTPS_PROXY=http://proxy.example:3128"}})
	home := t.TempDir()
	const repo = "https://git.example/org/docs.git"
	cred := &credential{url: repo, username: "x-access-token", password: "tok-123"}
	env := r.environ(cmdSpec{dir: home, home: home, url: repo, cred: cred})

	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := vars[k]; dup {
			t.Errorf("%s is set twice", k)
		}
		vars[k] = v
		if strings.Contains(v, parentSecret) {
			t.Errorf("the server's environment reached git: %s", kv)
		}
	}
	header := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:tok-123"))
	for k, want := range map[string]string{
		"HOME":                home,
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   os.DevNull,
		"GIT_TERMINAL_PROMPT": "0",
		"PATH":                os.Getenv("PATH"),
		"HTTPS_PROXY":         "http://proxy.example:3128",
		"GIT_COMMITTER_NAME":  DefaultAuthorName,
		"GIT_TRACE_CURL":      "",
		"GIT_ALLOW_PROTOCOL":  "file:git:http:https:ssh",
	} {
		if got := vars[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := configOf(t, env)["http."+repo+".extraHeader"]; got != header {
		t.Errorf("the header git is given is %q, want %q", got, header)
	}
	if without := r.environ(cmdSpec{dir: home, home: home, url: repo}); slices.ContainsFunc(without, func(kv string) bool { return strings.Contains(kv, "extraHeader") }) {
		t.Errorf("without credentials the environment still has a header: %q", without)
	}

	// Git itself reads the header for that repository, and for no other.
	spec := cmdSpec{step: "test", dir: home, home: home, cred: cred}
	got, err := r.run(context.Background(), spec, "config", "--get-urlmatch", "http.extraHeader", repo)
	if err != nil || strings.TrimSpace(got) != header {
		t.Fatalf("git's header for %s = %q, %v", repo, got, err)
	}
	for _, other := range []string{"https://evil.example/org/docs.git", "https://git.example/org/other.git", "http://git.example/org/docs.git"} {
		if got, err := r.run(context.Background(), spec, "config", "--get-urlmatch", "http.extraHeader", other); err == nil {
			t.Errorf("git sends the header to %s too: %q", other, got)
		}
	}
}

// file:// and path remotes are served by a local process that runs the
// remote's hooks; those must not see a token, so none is asked for.
func TestNoCredentialsForLocalRemotes(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, "", "docs.git")
	var calls atomic.Int32
	r, _ := newRepos(t, Config{Credentials: func(context.Context, string) (string, string, error) {
		calls.Add(1)
		return "x-access-token", "local-sentinel-9a8b", nil
	}})
	ws := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Branch: "job-8"})
	writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")
	publish(t, ws, true)
	if n := calls.Load(); n != 0 {
		t.Fatalf("Credentials was asked %d times for a file:// remote", n)
	}
}

// The real thing: clone and push over HTTP through git http-backend, which
// only a request with the right Basic credentials reaches.
func TestCredentialsOverHTTP(t *testing.T) {
	t.Parallel()
	const user, token = "x-access-token", "http-sentinel-7f3a9c"
	root := t.TempDir()
	remote := newRemote(t, root, "docs.git")
	srv, authorised := gitHTTPServer(t, root, user, token)
	url := srv.URL + "/git/docs.git"

	var logs logBuffer
	var asked []string
	r, parent := newRepos(t, Config{
		Logger: logs.logger(),
		Credentials: func(_ context.Context, repo string) (string, string, error) {
			asked = append(asked, repo)
			return user, token, nil
		},
	})
	ws := open(t, r, engine.RepoSpec{Repository: url, Ref: "main", Branch: "job-9"})
	edit(t, ws.Dir())
	publish(t, ws, true)

	if got := gitT(t, remote, "diff", "--name-status", "main", "job-9"); got != wantNameStatus {
		t.Fatalf("the branch pushed over http differs from main by\n%s", got)
	}
	if authorised() == 0 {
		t.Fatal("the server authorised no request")
	}
	if len(asked) != 2 || asked[0] != url || asked[1] != url {
		t.Fatalf("Credentials was asked for %q, want %s once for Open and once for the push", asked, url)
	}
	if got := wsGit(t, ws, "config", "remote.origin.url"); got != url {
		t.Fatalf("the remote URL in .git/config is %q, want %q", got, url)
	}
	header := base64.StdEncoding.EncodeToString([]byte(user + ":" + token))
	// The workspace and the mirror.
	walkFor(t, parent, token)
	walkFor(t, parent, header)
	if l := logs.String(); !strings.Contains(l, `"command":"push"`) || strings.Contains(l, token) || strings.Contains(l, header) {
		t.Fatalf("the logs lack the push or show the credentials:\n%s", l)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmptyDir(t, parent)
}

func TestRefusedCredentialsOverHTTP(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	newRemote(t, root, "docs.git")
	srv, _ := gitHTTPServer(t, root, "x-access-token", "right-token")
	url := srv.URL + "/git/docs.git"

	const wrong = "wrong-sentinel-5d6e"
	for _, tc := range []struct {
		name       string
		user, pass string
		want       string
	}{
		// The server echoes the credentials in its 403 page, which git
		// shows: the error must not.
		{"wrong", "x-access-token", wrong, "Authorization: [REDACTED] (user x-access-token, password [REDACTED])"},
		{"none", "", "", "could not read Username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			r, parent := newRepos(t, Config{Logger: logs.logger(), Credentials: func(context.Context, string) (string, string, error) {
				return tc.user, tc.pass, nil
			}})
			ws, err := r.Open(context.Background(), engine.RepoSpec{Repository: url, Branch: "job-10"})
			if err == nil {
				ws.Close()
				t.Fatal("Open succeeded")
			}
			t.Logf("Open: %v", err)
			if !engine.IsPermanent(err) {
				t.Errorf("refused credentials are not permanent: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "clone failed") {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if tc.pass != "" {
				header := base64.StdEncoding.EncodeToString([]byte(tc.user + ":" + tc.pass))
				for what, s := range map[string]string{"error": err.Error(), "logs": logs.String()} {
					if strings.Contains(s, wrong) || strings.Contains(s, header) {
						t.Errorf("the %s show the credentials: %s", what, s)
					}
				}
			}
			assertEmptyDir(t, parent)
		})
	}
}

func TestCredentialsErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("vault sealed")
	r, parent := newRepos(t, Config{Credentials: func(context.Context, string) (string, string, error) {
		return "", "", boom
	}})
	_, err := r.Open(context.Background(), engine.RepoSpec{Repository: "https://git.example/o/r.git", Branch: "b"})
	if !errors.Is(err, boom) {
		t.Fatalf("Open = %v, want the Credentials error", err)
	}
	assertEmptyDir(t, parent)

	r, _ = newRepos(t, Config{Credentials: func(context.Context, string) (string, string, error) {
		return "a:b", "secret-in-user", nil
	}})
	_, err = r.Open(context.Background(), engine.RepoSpec{Repository: "https://git.example/o/r.git", Branch: "b"})
	if err == nil || !engine.IsPermanent(err) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Open with a user name holding ':' = %v", err)
	}
}

// hangingServer accepts git's first request and answers nothing until the
// test ends; arrived tells when a request is in.
func hangingServer(t *testing.T) (url string, arrived <-chan struct{}) {
	t.Helper()
	done := make(chan struct{})
	in := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in <- struct{}{}
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: lets Close finish
	return srv.URL + "/docs.git", in
}

func TestCommandTimeout(t *testing.T) {
	t.Parallel()
	url, _ := hangingServer(t)
	r, parent := newRepos(t, Config{Timeout: 500 * time.Millisecond})
	start := time.Now()
	_, err := r.Open(context.Background(), engine.RepoSpec{Repository: url, Branch: "b"})
	t.Logf("Open: %v (after %s)", err, time.Since(start))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 500ms") {
		t.Fatalf("Open = %v, want a timeout", err)
	}
	if engine.IsPermanent(err) {
		t.Fatalf("a timeout is permanent: %v", err)
	}
	// The git helper that held the connection was killed with git, so
	// Open did not wait for WaitDelay.
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Open took %s", took)
	}
	assertEmptyDir(t, parent)
}

func TestOpenCancelled(t *testing.T) {
	t.Parallel()
	url, arrived := hangingServer(t)
	r, parent := newRepos(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := r.Open(ctx, engine.RepoSpec{Repository: url, Branch: "b"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Open = %v, want context.Canceled", err)
	}
	assertEmptyDir(t, parent)
}
