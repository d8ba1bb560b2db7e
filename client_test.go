package docsapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

func TestNewClientRejectsABadKey(t *testing.T) {
	tests := []struct {
		name, key, wantReason string
	}{
		{"empty", "", "is empty"},
		{"spaces only", "   ", "is empty"},
		{"line breaks only", "\r\n\t", "is empty"},
		{"space inside", "mint_abc def", "contains white space"},
		{"tab inside", "mint_abc\tdef", "contains white space"},
		{"newline inside", "mint_abc\ndef", "contains white space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewClient(tt.key)
			if c != nil {
				t.Errorf("NewClient returned a client")
			}
			var verr *ValidationError
			if !errors.As(err, &verr) || verr.Param != "apiKey" || verr.Reason != tt.wantReason {
				t.Fatalf("err = %v, want apiKey %q", err, tt.wantReason)
			}
			if strings.Contains(err.Error(), "abc") {
				t.Errorf("err = %q repeats the key", err)
			}
		})
	}
}

// Keys pasted from a file or an environment variable often end in a newline.
func TestNewClientTrimsTheKey(t *testing.T) {
	mt := httpmock.NewMockTransport()
	rec, r := record(replyJSON(200, jobJSONJ1))
	mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
	c, err := NewClient("  "+testKey+"\n", WithHTTPClient(&http.Client{Transport: mt}), WithBaseURL(testBaseURL), WithProjectID("proj"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
		t.Fatal(err)
	}
	if got := rec.Requests()[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Error("Authorization is not Bearer followed by the trimmed key")
	}
}

func TestWithBaseURLRejects(t *testing.T) {
	tests := []struct {
		name, url, wantReason string
	}{
		{"other scheme", "ftp://api.example.test", "must start with http:// or https://"},
		{"mailto", "mailto:ops@example.test", "must start with http:// or https://"},
		{"no scheme", "api.example.test", "must start with http:// or https://"},
		{"scheme-relative", "//api.example.test", "must start with http:// or https://"},
		{"empty", "", "must start with http:// or https://"},
		{"no host", "https://", "has no host"},
		{"path without host", "https:///v2", "has no host"},
		{"user and password", "https://user:hunter2@api.example.test", "must not contain credentials"},
		{"user only", "https://user@api.example.test", "must not contain credentials"},
		{"query", "https://api.example.test?region=eu", "must not have a query or fragment"},
		{"query after a path", "https://api.example.test/p/?x=1", "must not have a query or fragment"},
		{"fragment", "https://api.example.test#top", "must not have a query or fragment"},
		{"bad escape", "https://api.example.test/%zz", "cannot be parsed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient(testKey, WithBaseURL(tt.url))
			var verr *ValidationError
			if !errors.As(err, &verr) || verr.Param != "baseURL" || !strings.HasPrefix(verr.Reason, tt.wantReason) {
				t.Fatalf("err = %v, want baseURL %q", err, tt.wantReason)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("err = %q repeats the password", err)
			}
		})
	}
}

func TestWithBaseURLAcceptsAPathPrefix(t *testing.T) {
	tests := []struct {
		base, wantURL string
	}{
		{"https://api.example.test", "https://api.example.test/v2/agent/proj/job/j1"},
		{"https://api.example.test/", "https://api.example.test/v2/agent/proj/job/j1"},
		{"https://api.example.test/prefix", "https://api.example.test/prefix/v2/agent/proj/job/j1"},
		{"https://api.example.test/prefix/", "https://api.example.test/prefix/v2/agent/proj/job/j1"},
		{"https://api.example.test/a/b//", "https://api.example.test/a/b/v2/agent/proj/job/j1"},
		{"  http://localhost:8080/docs-api  ", "http://localhost:8080/docs-api/v2/agent/proj/job/j1"},
	}
	for _, tt := range tests {
		t.Run(tt.base, func(t *testing.T) {
			c, mt := newTestClient(t, WithBaseURL(tt.base))
			mt.RegisterResponder(http.MethodGet, tt.wantURL, replyJSON(200, jobJSONJ1))
			if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
				t.Fatalf("Get: %v", err)
			}
			if n := callCount(mt, http.MethodGet, tt.wantURL); n != 1 {
				t.Errorf("calls to %s = %d, want 1 (calls: %v)", tt.wantURL, n, mt.GetCallCountInfo())
			}
		})
	}
}

func TestNewClientRejectsInvalidOptions(t *testing.T) {
	tests := []struct {
		name      string
		opt       Option
		wantParam string
	}{
		{"nil HTTP client", WithHTTPClient(nil), "httpClient"},
		{"nil logger", WithLogger(nil), "logger"},
		{"nil rate limiter", WithRateLimiter(nil), "rateLimiter"},
		{"negative max retries", WithMaxRetries(-1), "maxRetries"},
		{"zero min delay", WithRetryDelays(0, time.Second), "retryDelays"},
		{"zero max delay", WithRetryDelays(time.Second, 0), "retryDelays"},
		{"negative min delay", WithRetryDelays(-time.Second, time.Second), "retryDelays"},
		{"min above max", WithRetryDelays(2*time.Second, time.Second), "retryDelays"},
		{"negative max Retry-After", WithMaxRetryAfter(-1), "maxRetryAfter"},
		{"empty project", WithProjectID(""), "projectID"},
		{"dot project", WithProjectID("."), "projectID"},
		{"dot-dot project", WithProjectID(".."), "projectID"},
		{"project with surrounding space", WithProjectID(" proj"), "projectID"},
		{"user agent with a newline", WithUserAgent("myapp/1\nX-Evil: 1"), "userAgent"},
		{"user agent with a carriage return", WithUserAgent("myapp/1\rb"), "userAgent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewClient(testKey, tt.opt)
			if c != nil {
				t.Error("NewClient returned a client")
			}
			var verr *ValidationError
			if !errors.As(err, &verr) || verr.Param != tt.wantParam {
				t.Fatalf("err = %v, want a *ValidationError for %q", err, tt.wantParam)
			}
			if !errors.Is(err, ErrInvalidParam) {
				t.Errorf("errors.Is(err, ErrInvalidParam) = false")
			}
		})
	}
}

func TestNewClientAcceptsBoundaryOptions(t *testing.T) {
	opts := []Option{
		nil,
		WithMaxRetries(0),
		WithRetryDelays(time.Second, time.Second),
		WithMaxRetryAfter(0),
		WithUserAgent("   "),
		WithLogger(slog.New(slog.DiscardHandler)),
	}
	if _, err := NewClient(testKey, opts...); err != nil {
		t.Fatalf("NewClient: %v", err)
	}
}

func TestNewClientDefaults(t *testing.T) {
	t.Run("base URL is the hosted service", func(t *testing.T) {
		mt := httpmock.NewMockTransport()
		const want = DefaultBaseURL + "/v2/agent/p/job/j1"
		mt.RegisterResponder(http.MethodGet, want, replyJSON(200, jobJSONJ1))
		c, err := NewClient(testKey, WithHTTPClient(&http.Client{Transport: mt}), WithProjectID("p"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
			t.Fatalf("Get: %v", err)
		}
		if n := callCount(mt, http.MethodGet, want); n != 1 {
			t.Errorf("calls to %s = %d, want 1", want, n)
		}
		if DefaultBaseURL != "https://api.mintlify.com" {
			t.Errorf("DefaultBaseURL = %q, want the hosted service", DefaultBaseURL)
		}
	})
	t.Run("HTTP client is pooled with a timeout and the safe redirect policy", func(t *testing.T) {
		c, err := NewClient(testKey)
		if err != nil {
			t.Fatal(err)
		}
		hc := c.cfg.httpClient
		if hc.Timeout != DefaultTimeout || DefaultTimeout != time.Minute {
			t.Errorf("Timeout = %v, want %v", hc.Timeout, time.Minute)
		}
		if _, ok := hc.Transport.(*http.Transport); !ok {
			t.Errorf("Transport = %T, want a pooled *http.Transport", hc.Transport)
		}
		if hc.CheckRedirect == nil {
			t.Error("CheckRedirect is nil: redirects would keep the key")
		}
	})
	t.Run("three retries with backoff from 500ms", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, mt := newTestClient(t)
			rec, r := record(replyJSON(503, maintenanceJSON))
			mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
			if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); !errors.Is(err, ErrServer) {
				t.Fatalf("err = %v, want ErrServer", err)
			}
			ms := time.Millisecond
			want := []time.Duration{0, 250 * ms, 750 * ms, 1750 * ms}
			if diff := cmp.Diff(want, rec.Times()); diff != "" {
				t.Errorf("attempt times (-want +got):\n%s", diff)
			}
			if DefaultMaxRetries != 3 || DefaultMinRetryDelay != 500*ms || DefaultMaxRetryDelay != 30*time.Second {
				t.Errorf("defaults = %d, %v, %v; want 3, 500ms, 30s", DefaultMaxRetries, DefaultMinRetryDelay, DefaultMaxRetryDelay)
			}
		})
	})
	t.Run("Retry-After honoured up to 60s", func(t *testing.T) {
		for _, tt := range []struct {
			retryAfter string
			want       []time.Duration
		}{
			{"60", []time.Duration{0, time.Minute}},
			{"61", []time.Duration{0}},
		} {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				rec, r := record(inTurn(
					replyJSON(429, `{"error":"rate limit exceeded"}`).HeaderSet(http.Header{"Retry-After": {tt.retryAfter}}),
					replyJSON(200, jobJSONJ1),
				))
				mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
				c.AgentJobs.Get(context.Background(), "", "j1")
				if diff := cmp.Diff(tt.want, rec.Times()); diff != "" {
					t.Errorf("Retry-After %s: attempt times (-want +got):\n%s", tt.retryAfter, diff)
				}
			})
		}
		if DefaultMaxRetryAfter != time.Minute {
			t.Errorf("DefaultMaxRetryAfter = %v, want 1m", DefaultMaxRetryAfter)
		}
	})
	t.Run("no default project", func(t *testing.T) {
		mt := httpmock.NewMockTransport()
		c, err := NewClient(testKey, WithHTTPClient(&http.Client{Transport: mt}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.AgentJobs.Get(context.Background(), "", "j1")
		var verr *ValidationError
		if !errors.As(err, &verr) || verr.Param != "projectID" {
			t.Errorf("err = %v, want a *ValidationError for projectID", err)
		}
		if n := mt.GetTotalCallCount(); n != 0 {
			t.Errorf("requests sent = %d, want 0", n)
		}
	})
}

func TestProjectIDArgumentOverridesTheDefault(t *testing.T) {
	c, mt := newTestClient(t)
	const other = testBaseURL + "/v2/agent/other/job/j1"
	mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(200, jobJSONJ1))
	mt.RegisterResponder(http.MethodGet, other, replyJSON(200, jobJSONJ1))
	if _, err := c.AgentJobs.Get(context.Background(), "other", "j1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"GET " + other: 1, "GET " + jobURLJ1: 1}
	if diff := cmp.Diff(want, mt.GetCallCountInfo()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestUserAgent(t *testing.T) {
	sdk := "docsapi-go/" + Version + " (" + runtime.Version() + ")"
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"SDK only", nil, sdk},
		{"application first", []Option{WithUserAgent("myapp/1")}, "myapp/1 " + sdk},
		{"application trimmed", []Option{WithUserAgent("  myapp/1  ")}, "myapp/1 " + sdk},
		{"blank application ignored", []Option{WithUserAgent(" ")}, sdk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t, tt.opts...)
			rec, r := record(replyJSON(200, jobJSONJ1))
			mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
			if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
				t.Fatal(err)
			}
			got := rec.Requests()[0].Header.Get("User-Agent")
			if got != tt.want {
				t.Errorf("User-Agent = %q, want %q", got, tt.want)
			}
			if !strings.Contains(got, "docsapi-go/"+Version+" (go") {
				t.Errorf("User-Agent = %q, want the SDK's product token with the Go version", got)
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	c, mt := newTestClient(t)
	getRec, getR := record(replyJSON(200, jobJSONJ1))
	postRec, postR := record(replyJSON(201, jobJSONJ1))
	mt.RegisterResponder(http.MethodGet, jobURLJ1, getR)
	mt.RegisterResponder(http.MethodPost, jobsURL, postR)
	if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2}); err != nil {
		t.Fatal(err)
	}
	get, post := getRec.Requests()[0], postRec.Requests()[0]
	for name, req := range map[string]sentRequest{"GET": get, "POST": post} {
		if got := req.Header.Get("Accept"); got != "application/json" {
			t.Errorf("%s: Accept = %q, want application/json", name, got)
		}
		if got := req.Header.Get("Authorization"); got != "Bearer "+testKey {
			t.Errorf("%s: Authorization is not Bearer and the key", name)
		}
		if v, ok := req.Header["Idempotency-Key"]; ok {
			t.Errorf("%s: Idempotency-Key %q sent without WithIdempotencyKey", name, v)
		}
	}
	if got := post.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("POST: Content-Type = %q, want application/json", got)
	}
	if post.Body != promptV2JSON {
		t.Errorf("POST: body = %q, want %q", post.Body, promptV2JSON)
	}
	if v, ok := get.Header["Content-Type"]; ok {
		t.Errorf("GET: Content-Type %q sent without a body", v)
	}
}

func TestWithHTTPClientDoesNotModifyTheCallersClient(t *testing.T) {
	mt := httpmock.NewMockTransport()
	mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(200, jobJSONJ1))
	hc := &http.Client{Transport: mt}
	c, err := NewClient(testKey, WithHTTPClient(hc), WithBaseURL(testBaseURL), WithProjectID("proj"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
		t.Fatal(err)
	}
	if hc.CheckRedirect != nil {
		t.Error("the caller's CheckRedirect was set")
	}
	if hc.Timeout != 0 || hc.Transport != mt || hc.Jar != nil {
		t.Errorf("the caller's client changed: %+v", hc)
	}
	if c.cfg.httpClient == hc {
		t.Error("the client uses the caller's *http.Client itself, not a copy")
	}
	if c.cfg.httpClient.Transport != mt {
		t.Error("the copy lost the caller's transport")
	}
}

// A caller's own redirect policy still runs after the SDK's, and sees the
// request with the key already removed.
func TestCallerRedirectPolicyRunsAfterTheKeyIsDropped(t *testing.T) {
	const elsewhere = "https://cdn.example.test/jobs/j1"
	mt := httpmock.NewMockTransport()
	mt.RegisterResponder(http.MethodGet, jobURLJ1, httpmock.NewStringResponder(http.StatusFound, "").
		HeaderSet(http.Header{"Location": {elsewhere}}))
	mt.RegisterResponder(http.MethodGet, elsewhere, replyJSON(200, jobJSONJ1))
	var seenAuth []string
	calls := 0
	hc := &http.Client{Transport: mt, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		calls++
		seenAuth = req.Header.Values("Authorization")
		return http.ErrUseLastResponse
	}}
	c, err := NewClient(testKey, WithHTTPClient(hc), WithBaseURL(testBaseURL), WithProjectID("proj"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.AgentJobs.Get(context.Background(), "", "j1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusFound {
		t.Fatalf("err = %v, want the 302 as an *APIError, since the caller's policy stopped the redirect", err)
	}
	if calls != 1 {
		t.Errorf("caller's CheckRedirect ran %d times, want 1", calls)
	}
	if len(seenAuth) != 0 {
		t.Error("caller's CheckRedirect saw Authorization on a request to another host")
	}
	if n := callCount(mt, http.MethodGet, elsewhere); n != 0 {
		t.Errorf("calls to the redirect target = %d, want 0", n)
	}
}

func TestSafeRedirectPolicy(t *testing.T) {
	const apiHost = "api.example.test"
	mustURL := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	tests := []struct {
		name     string
		from, to string
		wantAuth bool
	}{
		{"same host over https", "https://api.example.test/a", "https://api.example.test/b", true},
		{"same host over http from http", "http://api.example.test/a", "http://api.example.test/b", true},
		{"other host", "https://api.example.test/a", "https://evil.test/b", false},
		{"subdomain", "https://api.example.test/a", "https://eu.api.example.test/b", false},
		{"parent domain", "https://api.example.test/a", "https://example.test/b", false},
		{"same name, other port", "https://api.example.test/a", "https://api.example.test:8443/b", false},
		{"downgrade to http", "https://api.example.test/a", "http://api.example.test/b", false},
	}
	hc := withSafeRedirects(&http.Client{}, apiHost)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &http.Request{URL: mustURL(tt.to), Header: http.Header{"Authorization": {"Bearer " + testKey}, "Accept": {"application/json"}}}
			via := []*http.Request{{URL: mustURL(tt.from)}}
			if err := hc.CheckRedirect(req, via); err != nil {
				t.Fatalf("CheckRedirect: %v", err)
			}
			if got := req.Header.Get("Authorization") != ""; got != tt.wantAuth {
				t.Errorf("Authorization kept = %v, want %v", got, tt.wantAuth)
			}
			if req.Header.Get("Accept") != "application/json" {
				t.Error("other headers were removed")
			}
		})
	}
	t.Run("stops after 10 redirects", func(t *testing.T) {
		req := &http.Request{URL: mustURL("https://api.example.test/x"), Header: http.Header{}}
		via := make([]*http.Request, 9)
		for i := range via {
			via[i] = &http.Request{URL: mustURL("https://api.example.test/x")}
		}
		if err := hc.CheckRedirect(req, via); err != nil {
			t.Errorf("9 redirects: %v, want nil", err)
		}
		via = append(via, via[0])
		if err := hc.CheckRedirect(req, via); err == nil || !strings.Contains(err.Error(), "10 redirects") {
			t.Errorf("10 redirects: err = %v, want a stop", err)
		}
	})
}
