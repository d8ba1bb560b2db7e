package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// newSDK returns the SDK's client of the server at baseURL, over hc, or
// over its own default HTTP client when hc is nil.
func newSDK(tb testing.TB, baseURL string, hc *http.Client) *docsapi.Client {
	tb.Helper()
	opts := []docsapi.Option{docsapi.WithBaseURL(baseURL), docsapi.WithProjectID(ProjectID)}
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

// floorBench is the floor's loop: GET url into a new T, which ok checks.
func floorBench[T any](url string, ok func(*T) bool) func(b *testing.B) {
	return func(b *testing.B) {
		hc := newHTTPClient()
		b.ReportAllocs()
		for b.Loop() {
			var v T
			if err := floorGet(context.Background(), hc, url, &v); err != nil || !ok(&v) {
				b.Fatal(err, v)
			}
		}
	}
}

// genEditor adds the same headers to the generated client's requests.
func genEditor(_ context.Context, req *http.Request) error {
	headers(req.Header)
	return nil
}

func newGen(tb testing.TB, baseURL string, hc *http.Client) *genclient.ClientWithResponses {
	tb.Helper()
	c, err := genclient.NewClientWithResponses(baseURL,
		genclient.WithHTTPClient(hc), genclient.WithRequestEditorFn(genEditor))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// onEachServer runs bench against the test server in this process, where
// the server's work is in every number (the same for each client), and in
// a process of its own, where allocations and CPU are the client's alone.
func onEachServer(b *testing.B, cfg ServerConfig, bench func(b *testing.B, srv *Server)) {
	b.Run("server=in-process", func(b *testing.B) {
		srv := StartServer(cfg)
		defer srv.Close()
		bench(b, srv)
	})
	b.Run("server=process", func(b *testing.B) {
		srv := StartProcessServer(b, cfg)
		defer srv.Close()
		bench(b, srv)
	})
}

func BenchmarkGetJob(b *testing.B) {
	ctx := context.Background()
	onEachServer(b, ServerConfig{}, func(b *testing.B, srv *Server) {
		b.Run("impl=floor", floorBench(srv.URL+"/v2/agent/"+ProjectID+"/job/"+JobID,
			func(job *floorJob) bool { return job.ID == JobID }))
		getJob := func(c *docsapi.Client) func(b *testing.B) {
			return func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					job, err := c.AgentJobs.Get(ctx, "", JobID)
					if err != nil || job.ID != JobID {
						b.Fatal(err)
					}
				}
			}
		}
		b.Run("impl=sdk", getJob(newSDK(b, srv.URL, newHTTPClient())))
		// With the SDK's own default HTTP client, as most callers use it.
		b.Run("impl=sdk-default", getJob(newSDK(b, srv.URL, nil)))
		b.Run("impl=oapi-codegen", func(b *testing.B) {
			c := newGen(b, srv.URL, newHTTPClient())
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.GetAgentJobWithResponse(ctx, ProjectID, JobID)
				if err != nil || res.JSON200 == nil || *res.JSON200.Id != JobID {
					b.Fatal(err)
				}
			}
		})
	})
}

func BenchmarkViewsPage(b *testing.B) {
	ctx := context.Background()
	const query = "dateFrom=2026-10-01&dateTo=2026-11-01&limit=250"
	onEachServer(b, ServerConfig{Paths: 100_000}, func(b *testing.B, srv *Server) {
		b.Run("impl=floor", floorBench(srv.URL+"/v1/analytics/"+ProjectID+"/views?"+query,
			func(page *floorPage) bool { return len(page.Views) == PageLimit }))
		viewsPage := func(c *docsapi.Client) func(b *testing.B) {
			return func(b *testing.B) {
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
			}
		}
		b.Run("impl=sdk", viewsPage(newSDK(b, srv.URL, newHTTPClient())))
		b.Run("impl=sdk-default", viewsPage(newSDK(b, srv.URL, nil)))
		b.Run("impl=oapi-codegen", func(b *testing.B) {
			c := newGen(b, srv.URL, newHTTPClient())
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
	})
}
