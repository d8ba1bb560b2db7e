package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/bench/internal/genclient"
)

// newHTTPClient is the one HTTP client every implementation uses in the
// per-request benchmarks, so that only what sits above net/http differs.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return &http.Client{Transport: t, Timeout: time.Minute}
}

func newSDK(tb testing.TB, srv *httptest.Server, hc *http.Client) *docsapi.Client {
	tb.Helper()
	opts := []docsapi.Option{docsapi.WithBaseURL(srv.URL), docsapi.WithProjectID(ProjectID)}
	if hc != nil {
		opts = append(opts, docsapi.WithHTTPClient(hc))
	}
	c, err := docsapi.NewClient(APIKey, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// The floor: a hand-written call with net/http and encoding/json, decoding
// into plain structs, with the same headers as the SDK and no retries,
// validation or error decoding beyond the status check.

type floorJob struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Source struct {
		Repository string  `json:"repository"`
		Ref        *string `json:"ref"`
	} `json:"source"`
	Model      string     `json:"model"`
	PRLink     *string    `json:"prLink"`
	CreatedAt  time.Time  `json:"createdAt"`
	ArchivedAt *time.Time `json:"archivedAt"`
}

type floorCounts struct {
	Human int64 `json:"human"`
	AI    int64 `json:"ai"`
	Total int64 `json:"total"`
}

type floorView struct {
	Path  string `json:"path"`
	Human int64  `json:"human"`
	AI    int64  `json:"ai"`
	Total int64  `json:"total"`
}

type floorPage struct {
	Totals  floorCounts `json:"totals"`
	Views   []floorView `json:"views"`
	HasMore bool        `json:"hasMore"`
}

func floorGet(ctx context.Context, hc *http.Client, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	headers(req.Header)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// genEditor adds the same headers to the generated client's requests.
func genEditor(_ context.Context, req *http.Request) error {
	headers(req.Header)
	return nil
}

func newGen(tb testing.TB, srv *httptest.Server, hc *http.Client) *genclient.ClientWithResponses {
	tb.Helper()
	c, err := genclient.NewClientWithResponses(srv.URL,
		genclient.WithHTTPClient(hc), genclient.WithRequestEditorFn(genEditor))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func BenchmarkGetJob(b *testing.B) {
	srv := NewServer(ServerConfig{})
	defer srv.Close()
	ctx := context.Background()

	b.Run("impl=floor", func(b *testing.B) {
		hc := newHTTPClient()
		url := srv.URL + "/v2/agent/" + ProjectID + "/job/" + JobID
		b.ReportAllocs()
		for b.Loop() {
			var job floorJob
			if err := floorGet(ctx, hc, url, &job); err != nil || job.ID != JobID {
				b.Fatal(err, job.ID)
			}
		}
	})
	b.Run("impl=sdk", func(b *testing.B) {
		c := newSDK(b, srv, newHTTPClient())
		b.ReportAllocs()
		for b.Loop() {
			job, err := c.AgentJobs.Get(ctx, "", JobID)
			if err != nil || job.ID != JobID {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=oapi-codegen", func(b *testing.B) {
		c := newGen(b, srv, newHTTPClient())
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.GetAgentJobWithResponse(ctx, ProjectID, JobID)
			if err != nil || res.JSON200 == nil || *res.JSON200.Id != JobID {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkViewsPage(b *testing.B) {
	srv := NewServer(ServerConfig{Paths: 100_000})
	defer srv.Close()
	ctx := context.Background()
	const query = "dateFrom=2026-10-01&dateTo=2026-11-01&limit=250"

	b.Run("impl=floor", func(b *testing.B) {
		hc := newHTTPClient()
		url := srv.URL + "/v1/analytics/" + ProjectID + "/views?" + query
		b.ReportAllocs()
		for b.Loop() {
			var page floorPage
			if err := floorGet(ctx, hc, url, &page); err != nil || len(page.Views) != PageLimit {
				b.Fatal(err, len(page.Views))
			}
		}
	})
	b.Run("impl=sdk", func(b *testing.B) {
		c := newSDK(b, srv, newHTTPClient())
		params := docsapi.ViewsParams{
			DateFrom: docsapi.Day(2026, time.October, 1),
			DateTo:   docsapi.Day(2026, time.November, 1),
			Limit:    PageLimit,
		}
		b.ReportAllocs()
		for b.Loop() {
			page, err := c.Analytics.Views(ctx, "", params)
			if err != nil || len(page.Views) != PageLimit {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=oapi-codegen", func(b *testing.B) {
		c := newGen(b, srv, newHTTPClient())
		from, to, limit := "2026-10-01", "2026-11-01", PageLimit
		params := &genclient.GetPageViewsParams{DateFrom: &from, DateTo: &to, Limit: &limit}
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.GetPageViewsWithResponse(ctx, ProjectID, params)
			if err != nil || res.JSON200 == nil || len(res.JSON200.Views) != PageLimit {
				b.Fatal(err)
			}
		}
	})
}
