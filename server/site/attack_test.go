package site_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// The attacks on the daily caps: many addresses each send as much as they
// can (servertest.NoSiteBudget lifts the per-address request budget, which
// slows an attacker down but does not stop one who waits).

// storedCount returns the number of alpha's feedback entries.
func (e *env) storedCount() int {
	e.T.Helper()
	q := store.FeedbackQuery{FeedbackFilter: store.FeedbackFilter{ProjectID: "alpha"}, Limit: 1000}
	n := 0
	for {
		page, err := e.Store.QueryFeedback(e.T.Context(), q)
		if err != nil {
			e.T.Fatalf("QueryFeedback: %v", err)
		}
		n += len(page.Entries)
		if !page.HasMore {
			return n
		}
		last := page.Entries[len(page.Entries)-1].Key()
		q.After = &last
	}
}

// The finding: 180 addresses filled the day's feedback cap in seconds,
// and every reader got 429 for the rest of the UTC day. With the default
// cap and shares, 180 addresses store a part of the cap however they are
// spread, each refused with a message naming its share, and a new reader
// is still heard.
func TestFeedbackCapCannotBeFilledByManyAddresses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attack   []string
		reader   string
		maxStore int // what the shares let the attack store
	}{
		{"one address in each of 180 networks",
			servertest.Addrs(180, func(i int) string { return fmt.Sprintf("198.%d.%d.7:4000", 18+i/250, i%250) }),
			"203.0.113.50:1", 180 * 20},
		{"180 addresses of one /24, as on loopback",
			servertest.Addrs(180, func(i int) string { return fmt.Sprintf("127.0.0.%d:4000", i+1) }),
			"127.0.1.1:1", 200},
		{"180 IPv6 /64s of one /48",
			servertest.Addrs(180, func(i int) string { return fmt.Sprintf("[2001:db8:7:%x::1]:443", i) }),
			"[2001:db8:8::1]:443", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSiteEnv(t, servertest.NoSiteBudget)
			accepted, refusal := e.FloodFeedback(tc.attack, store.DefaultDailyFeedbackCap)
			if accepted > tc.maxStore || accepted >= store.DefaultDailyFeedbackCap {
				t.Fatalf("the attack stored %d entries; the shares allow %d, the cap is %d", accepted, tc.maxStore, store.DefaultDailyFeedbackCap)
			}
			if !strings.Contains(refusal, "may send 20") && !strings.Contains(refusal, "may send 200") {
				t.Errorf("the refusal %s does not name the share", refusal)
			}
			if strings.Contains(refusal, "10000") || strings.Contains(refusal, "as much feedback as the server keeps") {
				t.Errorf("the refusal %s speaks of the cap, which the site did not reach", refusal)
			}
			if status, body := e.PostFrom("feedback", tc.reader, `{"path": "/guide", "helpful": true, "comment": "Clear, thanks"}`); status != http.StatusAccepted {
				t.Fatalf("a new reader after the attack: %d %s, want 202", status, body)
			}
			if got := e.storedCount(); got != accepted+1 {
				t.Errorf("%d entries stored, want the attack's %d and the reader's", got, accepted)
			}
		})
	}
}

// An attacker with more addresses than the server keeps count of in a day
// gains nothing from the addresses it cannot count: they share one
// address's allowance per network, and one network's allowance for
// networks beyond the table, rather than getting a fresh share each; and
// flooding the table does not make it forget the attacker's own counts.
// A reader of a network the flood did not come from is still heard.
func TestFeedbackSharesHoldPastTheTable(t *testing.T) {
	const table = 50
	config := func(c *server.Config) {
		servertest.NoSiteBudget(c)
		c.Site.MaxAddresses = table
	}

	t.Run("more addresses than the table, in a few networks", func(t *testing.T) {
		e := newSiteEnv(t, config)
		first := "192.0.2.1:1"
		accepted, _ := e.FloodFeedback([]string{first}, 100)
		if accepted != 20 {
			t.Fatalf("the first address stored %d, want its share, 20", accepted)
		}
		// 600 addresses in 6 networks: the table fills with the first 50.
		flood := servertest.Addrs(600, func(i int) string { return fmt.Sprintf("10.0.%d.%d:1", i/100, i%100+1) })
		more, _ := e.FloodFeedback(flood, 100)
		if more > 6*200 {
			t.Errorf("600 addresses of 6 networks stored %d; 6 networks' shares allow %d", more, 6*200)
		}
		if status, body := e.PostFrom("feedback", first, `{"path": "/a", "helpful": true}`); status != http.StatusTooManyRequests {
			t.Errorf("the first address after the flood: %d %s, want 429: its count is kept", status, body)
		}
		if status, body := e.PostFrom("feedback", "203.0.113.9:1", `{"path": "/guide", "helpful": true}`); status != http.StatusAccepted {
			t.Errorf("a reader of another network: %d %s, want 202", status, body)
		}
	})

	t.Run("more networks than the table", func(t *testing.T) {
		e := newSiteEnv(t, config)
		// 2,000 networks, one address each: past the table's 50, the
		// rest share one network's allowance.
		flood := servertest.Addrs(2000, func(i int) string { return fmt.Sprintf("10.%d.%d.1:1", i/250, i%250) })
		accepted, _ := e.FloodFeedback(flood, 100)
		if bound := table*20 + 200; accepted > bound {
			t.Errorf("2,000 networks stored %d; the table's 50 addresses and the one shared allowance allow %d", accepted, bound)
		}
		if accepted >= store.DefaultDailyFeedbackCap {
			t.Errorf("the flood filled the cap (%d entries)", accepted)
		}
	})
}

// The finding for searches: junk queries from many addresses filled the
// day's distinct queries, and every reader's new query was counted under
// "(other searches)" for the rest of the day. With the shares, a reader's
// new query, and the result it opens, are still counted as themselves,
// and every search is counted: the rows add up to the searches sent.
func TestSearchesCapCannotBeFilledByManyAddresses(t *testing.T) {
	const dailyCap = 1000 // small, to keep the test short; the default shares are the same fractions of it
	e := newSiteEnv(t, servertest.NoSiteBudget, func(c *server.Config) { c.Site.MaxQueriesPerDay = dailyCap })
	e.MustPost("searches", `{"query": "install", "clickedPath": "/install"}`)
	sent := 1
	// 180 addresses in 18 networks send 20 junk queries each, each
	// opening a junk result: 3,600 searches, 3.6 times the cap.
	for i, a := range servertest.Addrs(180, func(i int) string { return fmt.Sprintf("198.51.%d.%d:1", i/10, i%10+1) }) {
		for j := range 20 {
			body := fmt.Sprintf(`{"query": "junk %d %d", "clickedPath": "/junk/%d/%d"}`, i, j, i, j)
			if j%2 == 1 { // a junk result of a query the day holds
				body = fmt.Sprintf(`{"query": "install", "clickedPath": "/junk/%d/%d"}`, i, j)
			}
			if status, b := e.PostFrom("searches", a, body); status != http.StatusAccepted {
				t.Fatalf("search from %s: %d %s", a, status, b)
			}
			sent++
		}
	}
	// A reader searches for something new, and opens a result.
	if status, b := e.PostFrom("searches", "203.0.113.20:1", `{"query": "Rotate API keys", "clickedPath": "/keys/rotate"}`); status != http.StatusAccepted {
		t.Fatalf("the reader's search: %d %s", status, b)
	}
	sent++
	rows := e.Searches()
	var total int64
	var reader *store.SearchRow
	distinct := 0
	for i, r := range rows {
		total += r.Hits
		if r.Query != store.OtherSearchesQuery {
			distinct++
		}
		if r.Query == "rotate api keys" {
			reader = &rows[i]
		}
	}
	if reader == nil || reader.Hits != 1 || reader.Clicks != 1 || reader.TopClickedPage != "/keys/rotate" {
		t.Fatalf("the reader's new query is counted as %+v, want itself with its result opened (%d distinct queries, cap %d)", reader, distinct, dailyCap)
	}
	if total != int64(sent) {
		t.Errorf("the rows add up to %d searches, want the %d sent", total, sent)
	}
	if distinct >= dailyCap {
		t.Errorf("the day holds %d distinct queries: the attack filled the cap", distinct)
	}
}
