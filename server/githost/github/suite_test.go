package github

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

func TestConformance(t *testing.T) {
	reset := fmt.Sprint(time.Now().Add(time.Hour).Unix())
	hosttest.Run(t, func(t *testing.T) hosttest.Fake { return newSuiteFake(t) },
		// GitHub answers its rate limits with 403 too; they pass.
		hosttest.Failure{Name: "403 rate limit", Answer: hosttest.Answer{Op: hosttest.List, Status: 403,
			Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {reset}},
			Body:   map[string]any{"message": "API rate limit exceeded for user ID 424242.", "status": "403"}}},
		hosttest.Failure{Name: "429 secondary rate limit", Answer: hosttest.Answer{Op: hosttest.Create, Status: 429,
			Header: http.Header{"Retry-After": {"60"}},
			Body: map[string]any{"message": "You have exceeded a secondary rate limit.",
				"documentation_url": "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"}}},
		// A refused create says why.
		hosttest.Failure{Name: "422 validation", Permanent: true, Mention: "No commits between", Answer: hosttest.Answer{Op: hosttest.Create, Status: 422,
			Body: map[string]any{"message": "Validation Failed", "status": "422",
				"errors": []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "No commits between main and docsapi/job_123"}}}}},
	)
}

// suiteFake is fakeGitHub as hosttest drives it.
type suiteFake struct {
	*fakeGitHub
	hosttest.Faults
}

func newSuiteFake(t *testing.T) *suiteFake {
	s := &suiteFake{fakeGitHub: newFakeGitHub(t)}
	s.intercept = func(w http.ResponseWriter, r *http.Request) bool {
		return strings.HasSuffix(r.URL.Path, "/pulls") && s.Override(w, hosttest.OpOf(r), writeJSON, errorBody)
	}
	return s
}

// errorBody is GitHub's usual answer with an error status.
func errorBody(status int) any {
	return map[string]any{"message": http.StatusText(status), "documentation_url": "https://docs.github.com/rest", "status": fmt.Sprint(status)}
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
func (s *suiteFake) Spec() engine.PullRequestSpec  { return jobSpec(s.fakeGitHub) }
func (s *suiteFake) Missing() string               { return s.repoURL("octo-org/missing") }
func (s *suiteFake) Requests() int                 { return len(s.log()) }
func (s *suiteFake) Creates() int                  { return s.createCount() }
func (s *suiteFake) Open() int                     { return len(s.openPulls()) }
func (s *suiteFake) Close()                        { s.srv.Close() }

func (s *suiteFake) AddOpen(head, base string) string {
	p := s.addPull(fakePull{Owner: "octo-org", Repo: "docs", Head: head, Base: base, Title: "someone's"})
	return s.webURL(p.Owner, p.Repo, p.Number)
}

func (s *suiteFake) BeforeCreate(fn func()) {
	s.fakeGitHub.mu.Lock()
	defer s.fakeGitHub.mu.Unlock()
	s.beforeCreate = func(*fakeGitHub, string, string) { fn() }
}
