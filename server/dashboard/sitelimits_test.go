package dashboard_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// lockedBuffer is a log's destination that requests may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Operators see when a cap or a share is met: Config.OnSiteLimit hears of
// each submission, the log says it once per project, kind, reason and day
// (a flood does not flood the log), and the project's overview shows what
// today met.
func TestSiteLimitsAreShownToOperators(t *testing.T) {
	var logs lockedBuffer
	var heard []server.SiteLimitInfo
	var mu sync.Mutex
	d := newDashEnv(t, servertest.NoSiteBudget, func(c *server.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.OnSiteLimit = func(l server.SiteLimitInfo) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, l)
		}
		c.Site.MaxFeedbackPerDay, c.Site.MaxFeedbackPerAddress, c.Site.MaxFeedbackPerNetwork = 30, 2, 20
		c.Site.MaxQueriesPerDay, c.Site.MaxQueriesPerAddress, c.Site.MaxQueriesPerNetwork = 3, 1, 3
	})
	tok, err := d.Server.CreateSiteToken(t.Context(), server.SiteTokenParams{Project: "alpha", Name: "docs", Origins: []string{servertest.SiteOrigin}})
	if err != nil {
		t.Fatal(err)
	}
	d.Keys["site"] = tok.Token

	b := d.browser(t)
	b.signIn("ro")
	if doc, _ := b.page("/dashboard/projects/alpha/"); strings.Contains(doc, `id="site-limits"`) {
		t.Fatal("the overview speaks of limits before any was met")
	}

	// Five addresses of one /24 send five entries each: each stores two,
	// and is refused three times by its share.
	for i := range 5 {
		accepted, _ := d.FloodFeedback([]string{fmt.Sprintf("192.0.2.%d:1", i+1)}, 5)
		if accepted != 2 {
			t.Fatalf("address %d stored %d, want 2", i, accepted)
		}
		for range 3 - 1 { // the flood stopped at the first refusal
			d.PostFrom("feedback", fmt.Sprintf("192.0.2.%d:1", i+1), `{"path": "/a", "helpful": true}`)
		}
	}
	// Networks of their own fill the cap: 30 entries in all.
	accepted, _ := d.FloodFeedback(servertest.Addrs(20, func(i int) string { return fmt.Sprintf("10.%d.0.1:1", i) }), 1)
	if accepted != 20 {
		t.Fatalf("20 networks stored %d, want the 20 left of the cap", accepted)
	}
	for range 4 {
		if status, body := d.PostFrom("feedback", "203.0.113.1:1", `{"path": "/a", "helpful": true}`); status != http.StatusTooManyRequests || !strings.Contains(body, "as much feedback as the server keeps in a day") {
			t.Fatalf("past the cap: %d %s", status, body)
		}
	}
	// Searches: one address adds a query, then its new ones fold; two
	// others fill the cap, and a fourth's new query folds.
	for _, q := range []string{"a", "b", "c"} {
		d.PostFrom("searches", "192.0.2.1:1", `{"query": "`+q+`"}`)
	}
	d.PostFrom("searches", "198.51.100.1:1", `{"query": "d"}`)
	d.PostFrom("searches", "198.51.101.1:1", `{"query": "e"}`)
	d.PostFrom("searches", "198.51.102.1:1", `{"query": "f"}`)

	count := map[server.SiteLimitInfo]int{}
	for _, l := range heard {
		count[l]++
	}
	for l, n := range map[server.SiteLimitInfo]int{
		{Kind: server.SiteLimitFeedback, Reason: server.SiteLimitShare}: 15,
		{Kind: server.SiteLimitFeedback, Reason: server.SiteLimitCap}:   4,
		{Kind: server.SiteLimitSearches, Reason: server.SiteLimitShare}: 2,
		{Kind: server.SiteLimitSearches, Reason: server.SiteLimitCap}:   1,
	} {
		if count[l] != n {
			t.Errorf("OnSiteLimit heard %+v %d times, want %d (all: %v)", l, count[l], n, count)
		}
	}
	for msg, n := range map[string]int{
		"a project's day reached its cap of feedback entries":           1,
		"added its share of a project's feedback for the day":           1,
		"a project's day reached its cap of distinct search queries":    1,
		"added its share of a project's new search queries for the day": 1,
		"192.0.2.": 0, // no address is logged
	} {
		if got := strings.Count(logs.String(), msg); got != n {
			t.Errorf("the log says %q %d times, want %d:\n%s", msg, got, n, logs.String())
		}
	}

	doc, _ := b.page("/dashboard/projects/alpha/")
	for id, want := range map[string]string{
		"feedback-cap":   "Feedback: daily cap reached; more is refused until the next UTC day.",
		"feedback-share": "Feedback: 15 refused by the per-address share today.",
		"searches-cap":   "Searches: daily cap reached; new queries count under “(other searches)” until the next UTC day.",
		"searches-share": "Searches: 2 folded into “(other searches)” by the per-address share today.",
	} {
		if got := textOf(t, doc, `<li id="`+id+`">`, "</li>"); got != want {
			t.Errorf("the overview's %s says %q, want %q", id, got, want)
		}
	}
	// Another project, and the next day, have met nothing.
	d.Clock.Advance(24 * time.Hour)
	b = d.browser(t) // the session has expired
	b.signIn("ro")
	if doc, _ := b.page("/dashboard/projects/alpha/"); strings.Contains(doc, `id="site-limits"`) {
		t.Error("the next day's overview still speaks of yesterday's limits")
	}
	// The log says it again on the next day.
	d.PostFrom("feedback", "203.0.113.1:1", `{"path": "/a", "helpful": true}`)
	d.PostFrom("feedback", "203.0.113.1:1", `{"path": "/a", "helpful": true}`)
	d.PostFrom("feedback", "203.0.113.1:1", `{"path": "/a", "helpful": true}`)
	if got := strings.Count(logs.String(), "added its share of a project's feedback for the day"); got != 2 {
		t.Errorf("the share is logged %d times over two days, want 2", got)
	}
}
