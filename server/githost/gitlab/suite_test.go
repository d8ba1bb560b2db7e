package gitlab

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

func TestConformance(t *testing.T) {
	hosttest.Run(t, func(t *testing.T) hosttest.Fake { return newSuiteFake(t) },
		// A refused create says why, in GitLab's list of messages.
		hosttest.Failure{Name: "422 refused", Permanent: true, Mention: "Source branch does not exist", Answer: hosttest.Answer{Op: hosttest.Create, Status: 422,
			Body: map[string]any{"message": []any{"Source branch does not exist"}}}},
		// A conflict that is not "already exists" passes.
		hosttest.Failure{Name: "409 other conflict", Mention: "409", Answer: hosttest.Answer{Op: hosttest.Create, Status: 409,
			Body: map[string]any{"message": "Resource lock"}}},
	)
}

// suiteFake is fakeGitLab as hosttest drives it.
type suiteFake struct {
	*fakeGitLab
	hosttest.Faults
}

func newSuiteFake(t *testing.T) *suiteFake {
	s := &suiteFake{fakeGitLab: newFakeGitLab(t, "")}
	s.intercept = func(w http.ResponseWriter, r *http.Request) bool {
		return strings.HasSuffix(r.URL.Path, "/merge_requests") && s.Override(w, hosttest.OpOf(r), writeJSON, errorBody)
	}
	return s
}

// errorBody is GitLab's usual answer with an error status.
func errorBody(status int) any {
	return map[string]any{"message": fmt.Sprintf("%d %s", status, http.StatusText(status))}
}

func (s *suiteFake) config(o hosttest.Options) Config {
	return Config{Token: o.Token, TokenFunc: o.TokenFunc, BaseURL: s.baseURL(), Logger: o.Logger}
}

func (s *suiteFake) New(t *testing.T, o hosttest.Options) engine.PullRequests {
	h, err := New(s.config(o))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

func (s *suiteFake) Config(o hosttest.Options) any { return s.config(o) }
func (s *suiteFake) Token() string                 { return sentinelToken }
func (s *suiteFake) Spec() engine.PullRequestSpec  { return jobSpec(s.fakeGitLab) }
func (s *suiteFake) Missing() string               { return s.repoURL("docs-team/guides/missing") }
func (s *suiteFake) Requests() int                 { return len(s.log()) }
func (s *suiteFake) Creates() int                  { return s.createCount() }
func (s *suiteFake) Open() int                     { return len(s.openMRs()) }
func (s *suiteFake) Close()                        { s.srv.Close() }

func (s *suiteFake) AddOpen(head, base string) string {
	m := s.addMR(fakeMR{Source: head, Target: base, Title: "someone's"})
	return s.webURL(projectPath, m.IID)
}

func (s *suiteFake) BeforeCreate(fn func()) {
	s.fakeGitLab.mu.Lock()
	defer s.fakeGitLab.mu.Unlock()
	s.beforeCreate = func(*fakeGitLab, *fakeProject) { fn() }
}
