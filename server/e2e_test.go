package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/internal/isodate/isodatetest"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// client is a client of e's server (env.Serve) as the key named key.
func (e *env) client(key string, opts ...docsapi.Option) *docsapi.Client {
	e.T.Helper()
	base := []docsapi.Option{
		docsapi.WithBaseURL(e.Serve()),
		docsapi.WithProjectID("alpha"),
		docsapi.WithRetryDelays(time.Millisecond, 5*time.Millisecond),
	}
	c, err := docsapi.NewClient(e.Keys[key], append(base, opts...)...)
	if err != nil {
		e.T.Fatalf("NewClient: %v", err)
	}
	return c
}

// The SDK from the root package drives every operation of the self-hosted
// server, through a real HTTP listener and a path prefix.
func TestSDKAgainstServer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.client("rw")

	job, err := c.AgentJobs.Create(ctx, "", docsapi.CreateJobParams{Prompt: "Document the --verbose flag"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	// source.ref is the branch the agent works on, as the hosted service's
	// reference says; not the ref it starts from.
	if job.Status != docsapi.JobStatusActive || job.Source.Repository != "https://git.example.com/alpha/docs.git" ||
		job.Source.Ref != "docs-agent/"+job.ID || job.Model != "claude-sonnet-4" || job.PRLink != "" || !job.ArchivedAt.IsZero() {
		t.Fatalf("created job = %+v", job)
	}
	got, err := c.AgentJobs.Get(ctx, "", job.ID)
	if err != nil || *got != *job {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, job)
	}
	if _, err := c.AgentJobs.SendMessage(ctx, "", job.ID, docsapi.SendMessageParams{Prompt: "Add an example"}); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}

	// Errors arrive as the sentinels a user branches on.
	if _, err := c.AgentJobs.Get(ctx, "", "job_missing"); !errors.Is(err, docsapi.ErrNotFound) {
		t.Errorf("missing job: %v, want ErrNotFound", err)
	}
	if _, err := c.AgentJobs.Get(ctx, "beta", job.ID); !errors.Is(err, docsapi.ErrForbidden) {
		t.Errorf("other project: %v, want ErrForbidden", err)
	}
	if _, err := e.client("ro").AgentJobs.Create(ctx, "", docsapi.CreateJobParams{Prompt: "x"}); !errors.Is(err, docsapi.ErrForbidden) {
		t.Errorf("read-only create: %v, want ErrForbidden", err)
	}
	e.Keys["wrong"] = "mint_wrong"
	if _, err := e.client("wrong").AgentJobs.Get(ctx, "", job.ID); !errors.Is(err, docsapi.ErrUnauthorized) {
		t.Errorf("wrong key: %v, want ErrUnauthorized", err)
	}
	if _, err := e.Store.ArchiveJob(ctx, "alpha", job.ID, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = c.AgentJobs.SendMessage(ctx, "", job.ID, docsapi.SendMessageParams{Prompt: "more"})
	var apiErr *docsapi.APIError
	if !errors.Is(err, docsapi.ErrBadRequest) || !errors.As(err, &apiErr) || apiErr.RequestID == "" {
		t.Errorf("message to archived job: %v, want ErrBadRequest with a request id", err)
	}
	// Wait stops at once on an archived job: it is terminal.
	waited, err := c.AgentJobs.Wait(ctx, "", job.ID, docsapi.WaitParams{})
	if err != nil || waited.Status != docsapi.JobStatusArchived || waited.ArchivedAt.IsZero() {
		t.Errorf("Wait on archived job = %+v, %v", waited, err)
	}

	checkHostedClientFidelity(t, e)
}

// checkHostedClientFidelity sends what a client written for the hosted
// service sends, past the OpenAPI validator: fields the server does not
// know, dates in every ISO 8601 form the reference allows, and a project
// that names no model, whose jobs still name one.
func checkHostedClientFidelity(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"Document the flag","model":"claude-opus-4","source":{"ref":"dev"}}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create with unknown fields: %d %s", resp.StatusCode, body)
	}
	created := servertest.JobOf(t, body)
	id, _ := created["id"].(string)
	if created["model"] != "claude-sonnet-4" || created["source"].(map[string]any)["ref"] != "docs-agent/"+id {
		t.Errorf("create with unknown fields answered %s: they must change nothing", body)
	}
	resp, body = e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/message", `{"prompt":"And an example","model":"x","attachments":[]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("message with unknown fields: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{`{"prompt":5,"model":"x"}`, `{"model":"x"}`, `{"prompt":"","model":"x"}`, `[{"prompt":"x"}]`} {
		if resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", bad); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("create %s: %d %s, want 400", bad, resp.StatusCode, body)
		}
	}

	for _, tt := range isodatetest.Accepted {
		for _, export := range []string{"views", "visitors"} {
			target := "/v1/analytics/alpha/" + export + "?" + url.Values{"dateFrom": {tt.In}, "dateTo": {tt.In}}.Encode()
			if resp, body := e.Do("ro", "GET", target, ""); resp.StatusCode != http.StatusOK {
				t.Errorf("%s (%s): %d %s, want 200", target, tt.Name, resp.StatusCode, body)
			}
		}
	}
	for _, tt := range isodatetest.Refused {
		target := "/v1/analytics/alpha/views?" + url.Values{"dateFrom": {tt.In}}.Encode()
		resp, body := e.Do("ro", "GET", target, "")
		var got struct{ Details []docsapi.ErrorDetail }
		if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusBadRequest ||
			len(got.Details) != 1 || !strings.HasPrefix(got.Details[0].Message, "dateFrom "+isodatetest.Refusal(tt.In)) {
			t.Errorf("%s (%s): %d %s, want 400 naming dateFrom and the accepted forms", target, tt.Name, resp.StatusCode, body)
		}
	}

	// beta names no model.
	job, err := e.client("beta").AgentJobs.Create(ctx, "beta", docsapi.CreateJobParams{Prompt: "x"})
	if err != nil || job.Model != server.UnnamedModel {
		t.Errorf("job of a project without a model = %+v, %v; want the model %q", job, err, server.UnnamedModel)
	}
}

func TestSDKPaginatesAllViews(t *testing.T) {
	e := newEnv(t)
	h := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	var counts []store.ViewCount
	const paths = 620
	for i := range paths {
		// Distinct totals, so the expected order is known: /p0000 first.
		counts = append(counts, store.ViewCount{ProjectID: "alpha", Path: fmt.Sprintf("/p%04d", i), Hour: h, Human: int64(paths - i), AI: 1})
	}
	e.addViews(counts...)
	var requests atomic.Int32
	c := e.client("ro", docsapi.WithHTTPClient(&http.Client{Transport: countingTransport{&requests, http.DefaultTransport}}))

	params := docsapi.ViewsParams{DateFrom: docsapi.Day(2026, 8, 1), DateTo: docsapi.Day(2026, 8, 2), Limit: 50}
	rows, err := docsapi.Collect(c.Analytics.AllViews(context.Background(), "", params))
	if err != nil {
		t.Fatalf("AllViews: %v", err)
	}
	if len(rows) != paths || requests.Load() != 13 {
		t.Fatalf("%d rows in %d requests, want %d in 13", len(rows), requests.Load(), paths)
	}
	for i, r := range rows {
		if want := fmt.Sprintf("/p%04d", i); r.Path != want || r.Total != int64(paths-i)+1 {
			t.Fatalf("row %d = %+v, want path %s", i, r, want)
		}
	}
	page, err := c.Analytics.Views(context.Background(), "", params)
	if err != nil || page.Totals.Total != int64(paths*(paths+1)/2+paths) || !page.HasMore {
		t.Fatalf("Views totals = %+v, %v", page, err)
	}
}

type countingTransport struct {
	n    *atomic.Int32
	next http.RoundTripper
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

// loseFirstResponse lets the first POST reach the server, which acts on it,
// and then tells the client the gateway failed: the case where a retry
// without an idempotency key would start a second agent.
type loseFirstResponse struct {
	lost atomic.Bool
	next http.RoundTripper
}

func (t *loseFirstResponse) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || t.lost.Swap(true) {
		return resp, err
	}
	resp.Body.Close()
	return &http.Response{StatusCode: http.StatusBadGateway, Status: "502 Bad Gateway", Header: http.Header{},
		Body: http.NoBody, Request: r}, nil
}

func TestSDKRetriesCreateSafelyWithIdempotencyKey(t *testing.T) {
	t.Run("with a key the retry finds the same job", func(t *testing.T) {
		e := newEnv(t)
		c := e.client("rw", docsapi.WithHTTPClient(&http.Client{Transport: &loseFirstResponse{next: http.DefaultTransport}}))
		var resp docsapi.Response
		job, err := c.AgentJobs.Create(context.Background(), "", docsapi.CreateJobParams{Prompt: "p"},
			docsapi.WithIdempotencyKey("op-7"), docsapi.WithResponse(&resp))
		if err != nil || resp.Attempts != 2 {
			t.Fatalf("Create = %v after %d attempts, want success on the second", err, resp.Attempts)
		}
		if n := countJobs(t, e, "alpha"); n != 1 {
			t.Fatalf("%d jobs stored, want exactly 1", n)
		}
		if _, err := e.Store.Job(context.Background(), "alpha", job.ID); err != nil {
			t.Fatalf("the returned job is not the stored one: %v", err)
		}
	})
	t.Run("without a key the SDK does not retry", func(t *testing.T) {
		e := newEnv(t)
		c := e.client("rw", docsapi.WithHTTPClient(&http.Client{Transport: &loseFirstResponse{next: http.DefaultTransport}}))
		_, err := c.AgentJobs.Create(context.Background(), "", docsapi.CreateJobParams{Prompt: "p"})
		if !errors.Is(err, docsapi.ErrServer) {
			t.Fatalf("Create = %v, want the 502", err)
		}
		if n := countJobs(t, e, "alpha"); n != 1 {
			t.Fatalf("%d jobs stored, want 1: the server did act, so a blind retry would have made 2", n)
		}
	})
}

func TestSDKSeesRetryAfterOf429(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.RateLimits = server.RateLimits{Analytics: server.Limit{Requests: 1, Per: 10 * time.Second}}
	})
	// A cap of zero makes the SDK hand the Retry-After to the caller rather
	// than sleep on it.
	c := e.client("ro", docsapi.WithMaxRetryAfter(0))
	if _, err := c.Analytics.Views(context.Background(), "", docsapi.ViewsParams{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Analytics.Views(context.Background(), "", docsapi.ViewsParams{})
	var apiErr *docsapi.APIError
	if !errors.Is(err, docsapi.ErrRateLimited) || !errors.As(err, &apiErr) || apiErr.RetryAfter != 10*time.Second {
		t.Fatalf("second request: %v, want 429 with Retry-After 10s", err)
	}
}
