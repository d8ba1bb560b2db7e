package pageviews

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// Two replicas (two recorders, each with its own handle on one SQLite
// database, as two processes would have) count visitors through their
// middleware; the database's visitors query then counts each person once:
// both replicas hash with the one salt of the day the store keeps, and
// their sketches merge in the store.
func TestReplicasCountVisitorsOnceInTheStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docs.db")
	var sites []*Recorder
	var first store.Store
	for range 2 {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if first == nil {
			first = st
		}
		r := newRecorder(t, st)
		r.refreshSalts(ctx)
		sites = append(sites, r)
	}
	firefox := "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"
	for i, r := range sites {
		h := pageSite(r, "docs")
		// The same people on both replicas, and one more on each.
		get(h, "/guide/", "192.0.2.1", chromeUA)
		get(h, "/guide/", "192.0.2.1", firefox)
		get(h, "/api/", "192.0.2.1", chromeUA)
		get(h, "/guide/", "198.51.100.9", agentUA)
		get(h, "/guide/", "198.51.100.10", botUA)
		get(h, "/guide/", []string{"203.0.113.1", "203.0.113.2"}[i], chromeUA)
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	res, err := first.QueryVisitors(ctx, store.ViewsQuery{
		ProjectID: "docs", From: at.Truncate(24 * time.Hour), To: at.Truncate(24 * time.Hour).Add(24 * time.Hour), Limit: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.VisitorTotals{Human: 4, AI: 1, Total: 5}); res.Totals != want {
		t.Errorf("totals %+v, want %+v", res.Totals, want)
	}
	want := []store.PathVisitors{{Path: "/guide", Human: 4, AI: 1, Total: 5}, {Path: "/api", Human: 1, Total: 1}}
	if len(res.Rows) != len(want) || res.Rows[0] != want[0] || res.Rows[1] != want[1] {
		t.Errorf("rows %+v, want %+v", res.Rows, want)
	}
}
