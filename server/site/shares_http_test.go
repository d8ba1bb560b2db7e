package site_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// Past its share an address's searches still count: those of queries the
// day holds as themselves, the others under "(other searches)".
func TestSearchesPastTheShareStillCount(t *testing.T) {
	e := newSiteEnv(t, func(c *server.Config) {
		c.Site.MaxQueriesPerDay, c.Site.MaxQueriesPerAddress, c.Site.MaxQueriesPerNetwork = 100, 2, 10
	})
	const a = "192.0.2.1:1"
	for _, q := range []string{"one", "two", "one", "three", "two", "four"} {
		if status, b := e.PostFrom("searches", a, fmt.Sprintf(`{"query": %q}`, q)); status != http.StatusAccepted {
			t.Fatalf("%s: %d %s", q, status, b)
		}
	}
	got := map[string]int64{}
	for _, r := range e.Searches() {
		got[r.Query] = r.Hits
	}
	want := map[string]int64{"one": 2, "two": 2, store.OtherSearchesQuery: 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	if st := e.Server.SiteStats(); st.SearchesShare != 2 || st.FoldedSearches != 2 {
		t.Errorf("SiteStats = %+v, want 2 searches folded by the share", st)
	}
	// Searches that add nothing new take nothing of the share: an
	// address that searched for held queries many times still adds its
	// own.
	for range 5 {
		e.PostFrom("searches", "192.0.2.2:1", `{"query": "one"}`)
	}
	for _, q := range []string{"five", "six"} {
		e.PostFrom("searches", "192.0.2.2:1", fmt.Sprintf(`{"query": %q}`, q))
	}
	got = map[string]int64{}
	for _, r := range e.Searches() {
		got[r.Query] = r.Hits
	}
	if got["five"] != 1 || got["six"] != 1 || got["one"] != 7 {
		t.Errorf("counted %v, want five and six as themselves and one 7 times", got)
	}
}

// Shares are of a UTC day by the configured clock: at the day's change
// every address has its share again.
func TestSiteSharesStartAgainEachDay(t *testing.T) {
	e := newSiteEnv(t, func(c *server.Config) { c.Site.MaxFeedbackPerAddress, c.Site.MaxFeedbackPerNetwork = 1, 1 })
	const a = "192.0.2.1:1"
	if status, _ := e.PostFrom("feedback", a, `{"path": "/a", "helpful": true}`); status != http.StatusAccepted {
		t.Fatal(status)
	}
	resp, body := e.Site(servertest.SiteRequest{Method: "POST", Target: "/v1/site/alpha/feedback?token=" + e.Keys["site"],
		Body: `{"path": "/a", "helpful": true}`, Origin: servertest.SiteOrigin, Addr: a})
	// The test clock stands at 09:00 UTC: 15 hours to the next day.
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "54000" {
		t.Fatalf("past the share: %d Retry-After %q %s, want 429 and 54000", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	e.Clock.Advance(15*time.Hour - time.Second)
	if status, _ := e.PostFrom("feedback", a, `{"path": "/a", "helpful": true}`); status != http.StatusTooManyRequests {
		t.Errorf("a second before midnight: %d, want 429", status)
	}
	e.Clock.Advance(time.Second)
	if status, body := e.PostFrom("feedback", a, `{"path": "/a", "helpful": true}`); status != http.StatusAccepted {
		t.Errorf("at midnight: %d %s, want 202", status, body)
	}
}

// Shares are checked as SiteConfig documents, naming the field.
func TestSiteSharesConfigIsChecked(t *testing.T) {
	for _, tc := range []struct {
		site server.SiteConfig
		want string
	}{
		{server.SiteConfig{MaxFeedbackPerAddress: -1}, "Config.Site.MaxFeedbackPerAddress must not be negative"},
		{server.SiteConfig{MaxQueriesPerAddress: 300}, "Config.Site.MaxQueriesPerAddress (300) must not be more than MaxQueriesPerNetwork (200)"},
		{server.SiteConfig{MaxFeedbackPerDay: 100, MaxFeedbackPerNetwork: 101}, "Config.Site.MaxFeedbackPerNetwork (101) must not be more than MaxFeedbackPerDay (100)"},
	} {
		if _, err := tc.site.WithDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.site, err, tc.want)
		}
	}
	got, err := server.SiteConfig{MaxFeedbackPerDay: 1000, MaxQueriesPerDay: 10}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxFeedbackPerAddress != 2 || got.MaxFeedbackPerNetwork != 20 || got.MaxQueriesPerAddress != 1 || got.MaxQueriesPerNetwork != 1 {
		t.Errorf("default shares %+v, want a 500th and a 50th of each cap, at least 1", got)
	}
}
