package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// The analytics targets as a user meets them: the exports and the
// dashboard's overview served over HTTP by server.New's handler on each
// backend, and the recorder's flush. Two datasets, each recorded through
// the store as flushes would:
//
//   - month: the visitors dataset (fillVisitors): 30 days of 5,000 paths,
//     100,000 visitors a day, a view and the visitors of every path seen
//     in an hour, the day's salt asked for as each day starts, so that
//     the days before yesterday are closed and the last two open;
//   - cap: one day holding the default cap of distinct paths
//     (store.DefaultDailyPathCap), each with a view and a visitor or two,
//     closed (the salt of two days later asked for).
//
// The month's pages: the views and the visitors of the 30 days, first page
// of 50 rows, and the dashboard's overview of the same days, signed in.
// The cap's: the first and a deep page of the day's views and visitors.
// Each reports the median time of a request (p50-ms).

// httpAnalytics is a server over a store, with a read key and a signed-in
// dashboard session.
type httpAnalytics struct {
	url, key string
	hc       *http.Client // with the session's cookie
}

// newHTTPAnalytics serves st through server.New on a local listener.
func newHTTPAnalytics(b *testing.B, st store.Store) *httpAnalytics {
	b.Helper()
	ctx := context.Background()
	srv, err := server.New(server.Config{Store: st, Dashboard: server.DashboardConfig{Enabled: true}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.CreateProject(ctx, store.Project{ID: viewsProject, Repository: "https://github.com/acme/docs.git"}); err != nil {
		b.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Name: "bench", Projects: []string{viewsProject}, Scopes: []store.Scope{store.ScopeRead}})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	jar, err := cookiejar.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	hc := newHTTPClient()
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	b.Cleanup(hc.CloseIdleConnections)
	a := &httpAnalytics{url: hs.URL, key: key.Secret, hc: hc}
	a.signIn(b)
	return a
}

var csrfValue = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn opens a dashboard session with the read key, through the form.
func (a *httpAnalytics) signIn(b *testing.B) {
	b.Helper()
	status, page, err := a.get("/dashboard/login", false)
	if err != nil || status != http.StatusOK {
		b.Fatalf("GET /dashboard/login: %d %v", status, err)
	}
	m := csrfValue.FindStringSubmatch(page)
	if m == nil {
		b.Fatal("no CSRF token on the sign-in page")
	}
	form := url.Values{"csrf": {m[1]}, "key": {a.key}}
	resp, err := a.hc.PostForm(a.url+"/dashboard/login", form)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		b.Fatalf("signing in: %d", resp.StatusCode)
	}
}

// get requests path, with the key when api, and returns the answer.
func (a *httpAnalytics) get(path string, api bool) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, a.url+path, nil)
	if err != nil {
		return 0, "", err
	}
	if api {
		req.Header.Set("Authorization", "Bearer "+a.key)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body), err
}

// bench measures GET path, which must answer 200 with a body holding want.
func (a *httpAnalytics) bench(b *testing.B, path string, api bool, want string) {
	b.Helper()
	status, body, err := a.get(path, api)
	if err != nil || status != http.StatusOK || !strings.Contains(body, want) {
		b.Fatalf("GET %s: %d %v, want 200 and %q in\n%.400s", path, status, err, want, body)
	}
	reportP50(b, func() error {
		status, _, err := a.get(path, api)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("GET %s: %d", path, status)
		}
		return err
	})
}

// capDay is the day of the cap dataset.
var capDay = time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)

// capPath names the cap dataset's path i, in an order unlike i's.
func capPath(i int) string { return madeUpPath(i) }

// fillCap records the cap dataset: store.DefaultDailyPathCap paths over
// the day's hours, a flush an hour, then, if closeDay, the day closed.
func fillCap(b *testing.B, st store.Store, closeDay bool) {
	ctx := context.Background()
	if _, err := st.VisitorSalt(ctx, capDay); err != nil {
		b.Fatal(err)
	}
	n := store.DefaultDailyPathCap
	for h := range 24 {
		hour := capDay.Add(time.Duration(h) * time.Hour)
		var views []store.ViewCount
		var visitors []store.VisitorCount
		for i := h; i < n; i += 24 {
			views = append(views, store.ViewCount{ProjectID: viewsProject, Path: capPath(i), Hour: hour, Human: int64(1 + i%3), AI: int64(i % 2)})
			visitors = append(visitors, store.VisitorCount{ProjectID: viewsProject, Path: capPath(i), Hour: hour,
				Human: storetest.VisitorSketch(uint64(i), uint64(i+n)), AI: storetest.VisitorSketch(uint64(i) * 7)})
		}
		if err := st.AddViews(ctx, views); err != nil {
			b.Fatal(err)
		}
		if err := st.AddVisitors(ctx, visitors); err != nil {
			b.Fatal(err)
		}
	}
	if !closeDay {
		return
	}
	if _, err := st.VisitorSalt(ctx, capDay.Add(48*time.Hour)); err != nil {
		b.Fatal(err)
	}
}

// dateParams is the query of the views and visitors exports over
// [from, to).
func dateParams(from, to time.Time, offset int) string {
	return fmt.Sprintf("?dateFrom=%s&dateTo=%s&limit=50&offset=%d", from.Format(time.DateOnly), to.Format(time.DateOnly), offset)
}

// BenchmarkAnalyticsHTTP runs the pages of both datasets on each backend.
func BenchmarkAnalyticsHTTP(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: the datasets take minutes to record")
	}
	for _, be := range backends() {
		b.Run("data=month/backend="+be.name, func(b *testing.B) {
			st := be.open(b)
			start := time.Now()
			fillVisitors(b, st)
			b.Logf("recorded in %v", time.Since(start).Round(time.Millisecond))
			a := newHTTPAnalytics(b, st)
			from, to := visitorsStart, visitorsStart.Add(visitorsDays*24*time.Hour)
			q := dateParams(from, to, 0)
			b.Run("page=views", func(b *testing.B) { a.bench(b, "/v1/analytics/"+viewsProject+"/views"+q, true, `"hasMore":true`) })
			b.Run("page=visitors", func(b *testing.B) {
				a.bench(b, "/v1/analytics/"+viewsProject+"/visitors"+q, true, `"hasMore":true`)
			})
			b.Run("page=overview", func(b *testing.B) {
				path := fmt.Sprintf("/dashboard/projects/%s/?from=%s&to=%s", viewsProject, from.Format(time.DateOnly), to.Add(-24*time.Hour).Format(time.DateOnly))
				a.bench(b, path, false, "<h1>Overview</h1>")
			})
		})
		b.Run("data=cap/backend="+be.name, func(b *testing.B) {
			st := be.open(b)
			start := time.Now()
			fillCap(b, st, true)
			b.Logf("recorded in %v", time.Since(start).Round(time.Millisecond))
			a := newHTTPAnalytics(b, st)
			for _, page := range []struct {
				name   string
				offset int
			}{{"first", 0}, {"deep", store.DefaultDailyPathCap / 2}} {
				q := dateParams(capDay, capDay.Add(24*time.Hour), page.offset)
				b.Run("page=views-"+page.name, func(b *testing.B) {
					a.bench(b, "/v1/analytics/"+viewsProject+"/views"+q, true, `"hasMore":true`)
				})
				b.Run("page=visitors-"+page.name, func(b *testing.B) {
					a.bench(b, "/v1/analytics/"+viewsProject+"/visitors"+q, true, `"hasMore":true`)
				})
			}
		})
	}
}

// BenchmarkRecorderFlush is the recorder's flush of flushPaths known
// paths, each viewed by a visitor of its own through the middleware, into
// the cap dataset's day (whose paths they are), at an hour of that day:
// the views, then the visitors, as a running server writes them every
// flush interval. One unmeasured flush first, as after a server's first.
func BenchmarkRecorderFlush(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: the dataset takes a minute to record")
	}
	const flushPaths = 5000
	for _, be := range backends() {
		b.Run("backend="+be.name, func(b *testing.B) {
			st := be.open(b)
			fillCap(b, st, false) // the day stays open: today's
			hour := capDay.Add(15 * time.Hour)
			rec, err := pageviews.New(pageviews.Config{Sink: st, FlushInterval: time.Hour, MaxKeys: 4 * flushPaths,
				Now: func() time.Time { return hour }})
			if err != nil {
				b.Fatal(err)
			}
			mw, err := rec.Middleware(pageviews.MiddlewareConfig{Project: viewsProject})
			if err != nil {
				b.Fatal(err)
			}
			h := mw(http.HandlerFunc(recordPage))
			reqs := make([]*http.Request, flushPaths)
			for i := range reqs {
				reqs[i] = httptest.NewRequest(http.MethodGet, capPath(i*(store.DefaultDailyPathCap/flushPaths)), nil)
				reqs[i].Header.Set("User-Agent", recordAgents[i%2])
				reqs[i].Header.Set("Accept", "text/html")
				reqs[i].RemoteAddr = fmt.Sprintf("10.%d.%d.%d:4000", i>>16, (i>>8)&255, i&255)
			}
			rec.Start()
			b.Cleanup(func() { rec.Close(context.Background()) })
			// The salts come from the flush goroutine's first refresh.
			for deadline := time.Now().Add(30 * time.Second); ; {
				before := rec.Stats().NoSalt
				h.ServeHTTP(httptest.NewRecorder(), reqs[0])
				if rec.Stats().NoSalt == before {
					break
				}
				if time.Now().After(deadline) {
					b.Fatal("the recorder got no salt")
				}
				time.Sleep(10 * time.Millisecond)
			}
			noSalt := rec.Stats().NoSalt // the probes' before the salt came
			round := 0
			record := func() {
				for i, req := range reqs {
					// Another client each round: new visitors.
					req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:4000", round, (i>>8)&255, i&255)
					h.ServeHTTP(httptest.NewRecorder(), req)
				}
				round++
			}
			record()
			if err := rec.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			times := make([]time.Duration, 0, 64)
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				record()
				b.StartTimer()
				t0 := time.Now()
				if err := rec.Flush(context.Background()); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			reportTimes(b, times)
			if st := rec.Stats(); st.Pending != 0 || st.NoSalt != noSalt || st.VisitorFlushErrors != 0 {
				b.Fatalf("recorder: %+v", st)
			}
		})
	}
}

// reportTimes reports the median of times as p50-ms.
func reportTimes(b *testing.B, times []time.Duration) {
	b.Helper()
	if len(times) == 0 {
		return
	}
	sorted := slices.Sorted(slices.Values(times))
	b.ReportMetric(float64(sorted[len(sorted)/2])/1e6, "p50-ms")
}
