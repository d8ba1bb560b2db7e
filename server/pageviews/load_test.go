package pageviews_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/thorough"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// TestLoadEveryViewIsExported sends page views from concurrent HTTP
// clients through the middleware of a docs site, with the recorder flushing
// into SQLite on a short interval and one client flushing too as it goes
// (so that flushes overlap the other clients' views however fast the
// machine), shuts the recorder down gracefully, and checks that the views
// export counts every view exactly: per path, and human and AI apart.
// 4,000 views always; 200,000 in the thorough tier (package thorough).
func TestLoadEveryViewIsExported(t *testing.T) {
	t.Run("4,000 views", func(t *testing.T) { testLoad(t, 16, 250, 50) })
	t.Run("200,000 views", func(t *testing.T) {
		thorough.Require(t, "sends 200,000 requests")
		testLoad(t, 16, 12_500, 50)
	})
}

// testLoad is TestLoadEveryViewIsExported: clients send perUser views
// each, over paths pages.
func testLoad(t *testing.T, clients, perUser, paths int) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "views.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err := pageviews.New(pageviews.Config{Sink: st, FlushInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec.Start()
	mw, err := rec.Middleware(pageviews.MiddlewareConfig{Project: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("<h1>page</h1>"))
	})))
	defer site.Close()

	agents := []struct {
		ua    string
		human bool
	}{
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", true},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)", false},
	}
	// Client c sends request i for path (c+i) % paths, as a human when
	// (c+i) is even: the expected counts follow from the arithmetic.
	want := map[string]*docsapi.PageView{}
	for c := range clients {
		for i := range perUser {
			p := fmt.Sprintf("/docs/page-%02d", (c+i)%paths)
			v := want[p]
			if v == nil {
				v = &docsapi.PageView{Path: p}
				want[p] = v
			}
			if (c+i)%2 == 0 {
				v.Human++
			} else {
				v.AI++
			}
			v.Total++
		}
	}

	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	defer transport.CloseIdleConnections()
	httpClient := &http.Client{Transport: transport}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perUser {
				// Trailing slashes and query strings vary, as in real
				// traffic; the middleware folds them into one page.
				url := fmt.Sprintf("%s/docs/page-%02d/?ref=%d", site.URL, (c+i)%paths, i%3)
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("User-Agent", agents[(c+i)%2].ua)
				resp, err := httpClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("status %d", resp.StatusCode)
					return
				}
				if c == 0 && i%25 == 24 {
					if err := rec.Flush(ctx); err != nil {
						errs <- fmt.Errorf("Flush: %w", err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	closeCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := rec.Close(closeCtx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if st := rec.Stats(); st.Recorded != int64(clients*perUser) || st.Pending != 0 || st.Overflowed != 0 {
		t.Fatalf("recorder stats = %+v", st)
	}

	// Export through the API, as a user would.
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.CreateProject(ctx, store.Project{ID: "docs"}); err != nil {
		t.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Projects: []string{"docs"}, Scopes: []store.Scope{store.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/v1/analytics/docs/views?limit=250", nil)
	req.Header.Set("Authorization", "Bearer "+key.Secret)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	var page docsapi.ViewsPage
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || w.Code != http.StatusOK {
		t.Fatalf("export: %d %s", w.Code, w.Body)
	}
	if page.Totals.Total != int64(clients*perUser) || page.Totals.Human != int64(clients*perUser/2) || len(page.Views) != paths || page.HasMore {
		t.Fatalf("totals = %+v with %d rows, want %d views (half human) on %d paths", page.Totals, len(page.Views), clients*perUser, paths)
	}
	for _, got := range page.Views {
		if w := want[got.Path]; w == nil || *w != got {
			t.Errorf("path %s: exported %+v, want %+v", got.Path, got, w)
		}
	}
}

// flakyStore is the real SQLite store whose AddViews fails while down is
// set: storage that is unreachable for a while.
type flakyStore struct {
	*sqlite.Store
	down  bool
	tries int
}

func (f *flakyStore) AddViews(ctx context.Context, counts []store.ViewCount) error {
	f.tries++
	if f.down {
		return errors.New("database is unreachable")
	}
	return f.Store.AddViews(ctx, counts)
}

// TestFlushFailureEndsExactOnSQLite: while the storage fails, flushes fail
// and views keep arriving; once it recovers, the stored counts are exact,
// with no view lost and none counted twice.
func TestFlushFailureEndsExactOnSQLite(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "views.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	flaky := &flakyStore{Store: st}
	at := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	rec, err := pageviews.New(pageviews.Config{Sink: flaky, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	record := func(round int) {
		for i := range 5 {
			rec.Record("docs", fmt.Sprintf("/p%d", i), traffic.Human, at, int64(round+1))
			rec.Record("docs", fmt.Sprintf("/p%d", i), traffic.AI, at, 1)
		}
	}
	record(0)
	if err := rec.Flush(ctx); err != nil { // storage up: stored
		t.Fatal(err)
	}
	flaky.down = true
	for round := 1; round <= 3; round++ {
		record(round)
		if err := rec.Flush(ctx); err == nil {
			t.Fatalf("round %d: a flush into failing storage reported success", round)
		}
	}
	flaky.down = false
	record(4)
	if err := rec.Flush(ctx); err != nil {
		t.Fatalf("flush after recovery: %v", err)
	}
	if err := rec.Flush(ctx); err != nil { // nothing left: nothing written twice
		t.Fatal(err)
	}
	res, err := st.QueryViews(ctx, store.ViewsQuery{ProjectID: "docs", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	// Per path: human 1+2+3+4+5 = 15, AI 5.
	if res.Totals.Human != 75 || res.Totals.AI != 25 || len(res.Rows) != 5 {
		t.Fatalf("stored %+v with %d rows, want 75 human and 25 AI views on 5 paths", res.Totals, len(res.Rows))
	}
	for _, row := range res.Rows {
		if row.Human != 15 || row.AI != 5 {
			t.Errorf("%s: %+v, want 15 human and 5 AI", row.Path, row.Counts)
		}
	}
	if s := rec.Stats(); s.Pending != 0 || s.FlushErrors < 3 || flaky.tries < 6 {
		t.Errorf("stats %+v after %d AddViews calls", s, flaky.tries)
	}
}
