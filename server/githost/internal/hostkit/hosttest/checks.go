package hosttest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/engine"
)

// JobSpec is the pull request a job asks for, into "main" of repository:
// the same words for every host, so that the hosts' tests differ only in
// what their APIs make of them.
func JobSpec(repository string) engine.PullRequestSpec {
	return engine.PullRequestSpec{
		Repository: repository,
		Base:       "main",
		Branch:     "docsapi/job_123",
		Title:      "Docs: document the export command",
		Body:       "Opened by docsapi for job job_123.\n\n> document the export command",
	}
}

// MustNew returns newHost(cfg) after applying edits to cfg, and ends the
// test when the host refuses the configuration.
func MustNew[C, H any](t *testing.T, newHost func(C) (H, error), cfg C, edits ...func(*C)) H {
	t.Helper()
	for _, edit := range edits {
		edit(&cfg)
	}
	h, err := newHost(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

// MustEnsure returns the URL Ensure gives for spec, and ends the test when
// it gives none.
func MustEnsure(t *testing.T, h engine.PullRequests, spec engine.PullRequestSpec) string {
	t.Helper()
	url, err := h.Ensure(context.Background(), spec)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if url == "" {
		t.Fatal("Ensure returned no URL")
	}
	return url
}

// Call is a request as the tests compare it: its query parsed, so that the
// order of the parameters does not matter, and without headers or body,
// which the tests check apart.
type Call struct {
	Method, Path string
	Query        url.Values
}

// Calls is reqs as the tests compare them.
func Calls(reqs []Request) []Call {
	out := make([]Call, len(reqs))
	for i, r := range reqs {
		q, _ := url.ParseQuery(r.Query)
		if len(q) == 0 {
			q = nil
		}
		out[i] = Call{Method: r.Method, Path: r.Path, Query: q}
	}
	return out
}

// Expect calls Ensure with spec and checks that it returns wantURL after
// sending exactly the calls want, each with the token. It compares the
// whole log, so s must not have been called before. It returns the
// requests, whose bodies the caller checks.
func (s *Server) Expect(t *testing.T, h engine.PullRequests, spec engine.PullRequestSpec, wantURL string, want ...Call) []Request {
	t.Helper()
	if got := MustEnsure(t, h, spec); got != wantURL {
		t.Errorf("URL = %q, want %q", got, wantURL)
	}
	reqs := s.Log()
	if diff := cmp.Diff(want, Calls(reqs)); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
	for _, r := range reqs {
		if got := r.Header.Get(s.api.Header); got != s.api.Prefix+s.api.Token {
			t.Errorf("%s %s: %s = %q, want the token", r.Method, r.Path, s.api.Header, got)
		}
	}
	return reqs
}

// BaseURLForms checks that a host finds its API at root+api whichever way
// its base URL gives it: the root alone, with or without a slash, or the
// API's own URL, with or without one. newHost returns the host for base,
// and the API base URL its library settled on.
func BaseURLForms(t *testing.T, root, api string, spec engine.PullRequestSpec, newHost func(t *testing.T, base string) (engine.PullRequests, string)) {
	want := root + api
	for _, base := range []string{root, root + "/", strings.TrimSuffix(want, "/"), want} {
		t.Run(base, func(t *testing.T) {
			h, got := newHost(t, base)
			if got != want {
				t.Errorf("API base %q, want %q", got, want)
			}
			MustEnsure(t, h, spec)
		})
	}
}

// CheckParsed checks what a parser made of a URL that may carry secret:
// got and err are its results, and the zero want means that it must refuse
// the URL, with an error that does not show the secret.
func CheckParsed[W comparable](t *testing.T, secret string, got W, err error, want W) {
	t.Helper()
	var refused W
	if want == refused {
		if err == nil {
			t.Fatalf("accepted as %+v", got)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the secret: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// CheckURLs runs a subtest per URL of want, checking with CheckParsed what
// read makes of it; the zero value wants the URL refused.
func CheckURLs[W comparable](t *testing.T, secret string, read func(raw string) (W, error), want map[string]W) {
	for raw, w := range want {
		t.Run(raw, func(t *testing.T) {
			got, err := read(raw)
			CheckParsed(t, secret, got, err, w)
		})
	}
}
