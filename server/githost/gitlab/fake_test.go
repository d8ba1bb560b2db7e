package gitlab

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

// sentinelToken is the only token the fake accepts. Tests look for it in
// every error and log line: finding it there is a leak.
const sentinelToken = "glpat-SENTINEL_do_not_leak_4f9a2b"

// fakeGitLab answers the parts of GitLab's REST API v4 (as documented at
// docs.gitlab.com/api) that Ensure uses: one project, its merge requests,
// GitLab's rule of one open merge request per source and target branch.
// root is the instance's relative URL root ("" or "/gitlab"). It is the
// hosttest.Fake of the conformance suite.
type fakeGitLab struct {
	*hosttest.Server
	root string

	mu       sync.Mutex
	projects map[string]*fakeProject // full path → project
	mrs      []fakeMR
}

var _ hosttest.Fake = (*fakeGitLab)(nil)

type fakeProject struct {
	ID            int
	Path          string
	DefaultBranch string
}

type fakeMR struct {
	IID             int
	ProjectID       int
	SourceProjectID int
	Source, Target  string
	Title, Desc     string
	State           string
}

func newFakeGitLab(t *testing.T, root string) *fakeGitLab {
	t.Helper()
	f := &fakeGitLab{root: root, projects: map[string]*fakeProject{
		projectPath: {ID: 4711, Path: projectPath, DefaultBranch: "main"},
	}}
	mux := http.NewServeMux()
	api := "/api/v4"
	mux.HandleFunc("GET "+root+api+"/projects/{id}", f.getProject)
	mux.HandleFunc("GET "+root+api+"/projects/{id}/merge_requests", f.listMRs)
	mux.HandleFunc("POST "+root+api+"/projects/{id}/merge_requests", f.createMR)
	f.Server = hosttest.NewServer(t, hosttest.API{
		Handler: mux, Token: sentinelToken, Header: "Private-Token",
		Collection: "/merge_requests", WriteJSON: writeJSON, ErrorBody: errorBody,
	})
	return f
}

// baseURL is what a self-managed instance's configuration names: its root;
// client-go adds "/api/v4/".
func (f *fakeGitLab) baseURL() string { return f.URL + f.root }

// config is the Host configuration the suite's options ask for.
func (f *fakeGitLab) config(o hosttest.Options) Config {
	return Config{Token: o.Token, TokenFunc: o.TokenFunc, BaseURL: f.baseURL(), Logger: o.Logger}
}

func (f *fakeGitLab) New(t *testing.T, o hosttest.Options) engine.PullRequests {
	return hosttest.MustNew(t, New, f.config(o))
}

func (f *fakeGitLab) Config(o hosttest.Options) any { return f.config(o) }

// repoURL is the HTTP clone URL of a project on the fake.
func (f *fakeGitLab) repoURL(path string) string { return f.URL + f.root + "/" + path + ".git" }

func (f *fakeGitLab) Spec() engine.PullRequestSpec { return hosttest.JobSpec(f.repoURL(projectPath)) }

func (f *fakeGitLab) Missing() string { return f.repoURL("docs-team/guides/missing") }

func (f *fakeGitLab) webURL(path string, iid int) string {
	return fmt.Sprintf("%s%s/%s/-/merge_requests/%d", f.URL, f.root, path, iid)
}

func (f *fakeGitLab) Open() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.mrs {
		if m.State == "opened" {
			n++
		}
	}
	return n
}

// addMR stores a merge request as if someone had opened it on GitLab.
func (f *fakeGitLab) addMR(m fakeMR) fakeMR {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addMRLocked(m)
}

func (f *fakeGitLab) addMRLocked(m fakeMR) fakeMR {
	m.IID = len(f.mrs) + 1
	if m.State == "" {
		m.State = "opened"
	}
	if m.ProjectID == 0 {
		m.ProjectID = 4711
	}
	if m.SourceProjectID == 0 {
		m.SourceProjectID = m.ProjectID
	}
	f.mrs = append(f.mrs, m)
	return m
}

func (f *fakeGitLab) AddOpen(head, base string) string {
	m := f.addMR(fakeMR{Source: head, Target: base, Title: "someone's"})
	return f.webURL(projectPath, m.IID)
}

// project finds a project by the {id} path parameter: a number or a full
// path (which the client sends URL-encoded as one segment).
func (f *fakeGitLab) project(id string) *fakeProject {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, err := strconv.Atoi(id); err == nil {
		for _, p := range f.projects {
			if p.ID == n {
				return p
			}
		}
		return nil
	}
	return f.projects[id]
}

func (f *fakeGitLab) getProject(w http.ResponseWriter, r *http.Request) {
	p := f.project(r.PathValue("id"))
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Project Not Found"})
		return
	}
	web := f.URL + f.root + "/" + p.Path
	writeJSON(w, http.StatusOK, map[string]any{
		"id":                  p.ID,
		"description":         "The team handbook",
		"name":                "handbook",
		"name_with_namespace": "Docs Team / Guides / handbook",
		"path":                "handbook",
		"path_with_namespace": p.Path,
		"created_at":          "2024-03-04T10:11:12.000Z",
		"default_branch":      p.DefaultBranch,
		"ssh_url_to_repo":     "git@gitlab.example.com:" + p.Path + ".git",
		"http_url_to_repo":    web + ".git",
		"web_url":             web,
		"visibility":          "private",
		"archived":            false,
		"empty_repo":          false,
		"namespace":           map[string]any{"id": 77, "name": "Guides", "path": "guides", "kind": "group", "full_path": "docs-team/guides"},
	})
}

func (f *fakeGitLab) listMRs(w http.ResponseWriter, r *http.Request) {
	p := f.project(r.PathValue("id"))
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Project Not Found"})
		return
	}
	q := r.URL.Query()
	f.mu.Lock()
	out := []any{}
	for _, m := range f.mrs {
		if m.ProjectID != p.ID {
			continue
		}
		if s := q.Get("state"); s != "" && s != "all" && s != m.State {
			continue
		}
		if s := q.Get("source_branch"); s != "" && s != m.Source {
			continue
		}
		if s := q.Get("target_branch"); s != "" && s != m.Target {
			continue
		}
		out = append(out, f.mrJSON(p, m))
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (f *fakeGitLab) createMR(w http.ResponseWriter, r *http.Request) {
	p := f.project(r.PathValue("id"))
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Project Not Found"})
		return
	}
	var in struct {
		Title        string `json:"title"`
		Description  string `json:"description"`
		SourceBranch string `json:"source_branch"`
		TargetBranch string `json:"target_branch"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == "" || in.SourceBranch == "" || in.TargetBranch == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "title is missing, source_branch is missing, target_branch is missing"})
		return
	}
	f.Creating()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.mrs {
		if m.ProjectID == p.ID && m.SourceProjectID == p.ID && m.Source == in.SourceBranch && m.Target == in.TargetBranch && m.State == "opened" {
			writeJSON(w, http.StatusConflict, map[string]any{"message": []any{fmt.Sprintf("Another open merge request already exists for this source branch: !%d", m.IID)}})
			return
		}
	}
	m := f.addMRLocked(fakeMR{ProjectID: p.ID, Source: in.SourceBranch, Target: in.TargetBranch, Title: in.Title, Desc: in.Description})
	writeJSON(w, http.StatusCreated, f.mrJSON(p, m))
}

// mrJSON is a merge request as GitLab returns it (the fields Ensure or a
// reader would look at; GitLab sends many more).
func (f *fakeGitLab) mrJSON(p *fakeProject, m fakeMR) map[string]any {
	ref := fmt.Sprintf("!%d", m.IID)
	return map[string]any{
		"id":                          90000 + m.IID,
		"iid":                         m.IID,
		"project_id":                  m.ProjectID,
		"title":                       m.Title,
		"description":                 m.Desc,
		"state":                       m.State,
		"created_at":                  "2025-06-01T08:30:05.123Z",
		"updated_at":                  "2025-06-01T08:30:05.123Z",
		"merged_at":                   nil,
		"closed_at":                   nil,
		"target_branch":               m.Target,
		"source_branch":               m.Source,
		"source_project_id":           m.SourceProjectID,
		"target_project_id":           m.ProjectID,
		"author":                      map[string]any{"id": 31, "username": "docs-bot", "name": "Docs Bot", "state": "active"},
		"labels":                      []any{},
		"draft":                       len(m.Title) > 6 && m.Title[:6] == "Draft:",
		"merge_status":                "checking",
		"detailed_merge_status":       "checking",
		"sha":                         "6104942438c14ec7bd21c6cd5bd995272b3faff6",
		"merge_commit_sha":            nil,
		"user_notes_count":            0,
		"should_remove_source_branch": nil,
		"force_remove_source_branch":  false,
		"references":                  map[string]any{"short": ref, "relative": ref, "full": p.Path + ref},
		"web_url":                     f.webURL(p.Path, m.IID),
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is GitLab's usual answer with an error status.
func errorBody(status int) any {
	return map[string]any{"message": fmt.Sprintf("%d %s", status, http.StatusText(status))}
}
