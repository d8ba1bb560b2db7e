package github

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

// sentinelToken is the only token the fake accepts. Tests look for it in
// every error and log line: finding it there is a leak.
const sentinelToken = "ghp_SENTINEL_do_not_leak_7d1e0c"

// fakeGitHub answers the parts of GitHub's REST API (as documented at
// docs.github.com/rest, version 2022-11-28) that Ensure uses, under the
// "/api/v3" prefix of GitHub Enterprise Server. It keeps pull requests in
// memory and enforces GitHub's rule of one open pull request per head and
// base. It is the hosttest.Fake of the conformance suite.
type fakeGitHub struct {
	*hosttest.Server

	mu    sync.Mutex
	repos map[string]string // "owner/repo" → default branch
	pulls []fakePull
}

var _ hosttest.Fake = (*fakeGitHub)(nil)

type fakePull struct {
	Number      int
	Owner, Repo string
	Head, Base  string
	Title, Body string
	Draft       bool
	State       string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{repos: map[string]string{"octo-org/docs": "main"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}", f.getRepo)
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/pulls", f.listPulls)
	mux.HandleFunc("POST /api/v3/repos/{owner}/{repo}/pulls", f.createPull)
	f.Server = hosttest.NewServer(t, hosttest.API{
		Handler: mux, Token: sentinelToken, Header: "Authorization", Prefix: "Bearer ",
		Collection: "/pulls", WriteJSON: writeJSON, ErrorBody: errorBody,
	})
	return f
}

// config is the Host configuration the suite's options ask for, as a GitHub
// Enterprise Server whose base URL is the httptest server's root;
// go-github adds "/api/v3/".
func (f *fakeGitHub) config(o hosttest.Options) Config {
	return Config{Token: o.Token, TokenFunc: o.TokenFunc, BaseURL: f.URL, Logger: o.Logger}
}

func (f *fakeGitHub) New(t *testing.T, o hosttest.Options) engine.PullRequests {
	return hosttest.MustNew(t, New, f.config(o))
}

func (f *fakeGitHub) Config(o hosttest.Options) any { return f.config(o) }

// repoURL is the clone URL of a repository on the fake's host.
func (f *fakeGitHub) repoURL(path string) string { return f.URL + "/" + path + ".git" }

func (f *fakeGitHub) Spec() engine.PullRequestSpec {
	return hosttest.JobSpec(f.repoURL("octo-org/docs"))
}

func (f *fakeGitHub) Missing() string { return f.repoURL("octo-org/missing") }

func (f *fakeGitHub) webURL(owner, repo string, n int) string {
	return fmt.Sprintf("%s/%s/%s/pull/%d", f.URL, owner, repo, n)
}

func (f *fakeGitHub) openPulls() []fakePull {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakePull
	for _, p := range f.pulls {
		if p.State == "open" {
			out = append(out, p)
		}
	}
	return out
}

func (f *fakeGitHub) Open() int { return len(f.openPulls()) }

// addPull stores a pull request as if someone had opened it on GitHub.
// The caller holds no lock.
func (f *fakeGitHub) addPull(p fakePull) fakePull {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addPullLocked(p)
}

func (f *fakeGitHub) addPullLocked(p fakePull) fakePull {
	p.Number = 100 + len(f.pulls) + 1
	if p.State == "" {
		p.State = "open"
	}
	f.pulls = append(f.pulls, p)
	return p
}

func (f *fakeGitHub) AddOpen(head, base string) string {
	p := f.addPull(fakePull{Owner: "octo-org", Repo: "docs", Head: head, Base: base, Title: "someone's"})
	return f.webURL(p.Owner, p.Repo, p.Number)
}

// known answers 404, as GitHub does for a repository it does not hold or
// hides from the token, and reports whether the repository is known.
func (f *fakeGitHub) known(w http.ResponseWriter, owner, repo, doc string) bool {
	f.mu.Lock()
	_, ok := f.repos[owner+"/"+repo]
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/" + doc, "status": "404"})
	}
	return ok
}

func (f *fakeGitHub) getRepo(w http.ResponseWriter, r *http.Request) {
	owner, repo := r.PathValue("owner"), r.PathValue("repo")
	if !f.known(w, owner, repo, "repos/repos#get-a-repository") {
		return
	}
	f.mu.Lock()
	def := f.repos[owner+"/"+repo]
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"id":             1296269,
		"node_id":        "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
		"name":           repo,
		"full_name":      owner + "/" + repo,
		"private":        true,
		"owner":          map[string]any{"login": owner, "id": 583231, "type": "Organization"},
		"html_url":       f.URL + "/" + owner + "/" + repo,
		"url":            f.URL + "/api/v3/repos/" + owner + "/" + repo,
		"clone_url":      f.URL + "/" + owner + "/" + repo + ".git",
		"default_branch": def,
		"visibility":     "private",
		"archived":       false,
		"created_at":     "2024-01-26T19:01:12Z",
		"updated_at":     "2025-06-01T08:30:00Z",
		"pushed_at":      "2025-06-01T08:29:58Z",
	})
}

func (f *fakeGitHub) listPulls(w http.ResponseWriter, r *http.Request) {
	owner, repo := r.PathValue("owner"), r.PathValue("repo")
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if !f.known(w, owner, repo, "pulls/pulls#list-pull-requests") {
		return
	}
	f.mu.Lock()
	var out []any
	for _, p := range f.pulls {
		if p.Owner != owner || p.Repo != repo || (state != "all" && p.State != state) {
			continue
		}
		if h := q.Get("head"); h != "" && h != p.Owner+":"+p.Head {
			continue
		}
		if b := q.Get("base"); b != "" && b != p.Base {
			continue
		}
		out = append(out, f.pullJSON(p))
	}
	f.mu.Unlock()
	if out == nil {
		out = []any{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *fakeGitHub) createPull(w http.ResponseWriter, r *http.Request) {
	owner, repo := r.PathValue("owner"), r.PathValue("repo")
	var in struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	f.Creating()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.repos[owner+"/"+repo]; !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "status": "404"})
		return
	}
	head := strings.TrimPrefix(in.Head, owner+":")
	for _, p := range f.pulls {
		if p.Owner == owner && p.Repo == repo && p.Head == head && p.Base == in.Base && p.State == "open" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
				"message": "Validation Failed",
				"errors": []any{map[string]any{
					"resource": "PullRequest",
					"code":     "custom",
					"message":  "A pull request already exists for " + owner + ":" + head + ".",
				}},
				"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
				"status":            "422",
			})
			return
		}
	}
	p := f.addPullLocked(fakePull{Owner: owner, Repo: repo, Head: head, Base: in.Base, Title: in.Title, Body: in.Body, Draft: in.Draft})
	w.Header().Set("Location", f.URL+"/api/v3/repos/"+owner+"/"+repo+"/pulls/"+fmt.Sprint(p.Number))
	writeJSON(w, http.StatusCreated, f.pullJSON(p))
}

// pullJSON is a pull request as GitHub returns it (the fields Ensure or a
// reader would look at; GitHub sends many more).
func (f *fakeGitHub) pullJSON(p fakePull) map[string]any {
	repo := map[string]any{"id": 1296269, "name": p.Repo, "full_name": p.Owner + "/" + p.Repo, "owner": map[string]any{"login": p.Owner}}
	return map[string]any{
		"url":        fmt.Sprintf("%s/api/v3/repos/%s/%s/pulls/%d", f.URL, p.Owner, p.Repo, p.Number),
		"id":         1000 + p.Number,
		"node_id":    "PR_kwDOABCD" + fmt.Sprint(p.Number),
		"html_url":   f.webURL(p.Owner, p.Repo, p.Number),
		"diff_url":   f.webURL(p.Owner, p.Repo, p.Number) + ".diff",
		"number":     p.Number,
		"state":      p.State,
		"locked":     false,
		"title":      p.Title,
		"body":       p.Body,
		"draft":      p.Draft,
		"user":       map[string]any{"login": "docs-bot", "id": 424242, "type": "Bot"},
		"created_at": "2025-06-01T08:30:05Z",
		"updated_at": "2025-06-01T08:30:05Z",
		"merged_at":  nil,
		"head":       map[string]any{"label": p.Owner + ":" + p.Head, "ref": p.Head, "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "repo": repo},
		"base":       map[string]any{"label": p.Owner + ":" + p.Base, "ref": p.Base, "sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6", "repo": repo},
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	if w.Header().Get("X-RateLimit-Remaining") == "" {
		// A healthy quota, unless the test answers with another.
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "4999")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is GitHub's usual answer with an error status.
func errorBody(status int) any {
	msg := http.StatusText(status)
	if status == http.StatusUnauthorized {
		msg = "Bad credentials"
	}
	return map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": fmt.Sprint(status)}
}
