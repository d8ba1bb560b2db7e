package site_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/internal/thorough"
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

// atScales runs test at each attack scale: a daily cap of 1,000 always, and
// the default cap in the thorough tier (package thorough). The default
// shares are the same fractions of any cap, so the small one crosses the
// same bounds with a tenth of the requests.
func atScales(t *testing.T, test func(t *testing.T, dailyCap int)) {
	t.Run("a cap of 1,000", func(t *testing.T) { test(t, 1000) })
	t.Run("the default cap", func(t *testing.T) {
		thorough.Require(t, "floods the default daily cap over HTTP")
		test(t, store.DefaultDailyFeedbackCap)
	})
}

// feedbackCap is a server config with dailyCap as the day's feedback cap,
// its shares the defaults, and no per-address request budget.
func feedbackCap(dailyCap int) func(*server.Config) {
	return func(c *server.Config) {
		servertest.NoSiteBudget(c)
		c.Site.MaxFeedbackPerDay = dailyCap
	}
}

// The finding: 180 addresses filled the day's feedback cap in seconds,
// and every reader got 429 for the rest of the UTC day. With the default
// shares of the cap, 180 addresses store a part of the cap however they
// are spread, each refused with a message naming its share, and a new
// reader is still heard.
func TestFeedbackCapCannotBeFilledByManyAddresses(t *testing.T) {
	atScales(t, func(t *testing.T, dailyCap int) {
		perAddress, perNetwork := server.SiteShareDefaults(dailyCap)
		for _, tc := range []struct {
			name     string
			attack   []string
			reader   string
			maxStore int    // what the shares let the attack store
			share    string // the share the last refusal names
		}{
			{"one address in each of 180 networks",
				servertest.Addrs(180, func(i int) string { return fmt.Sprintf("198.%d.%d.7:4000", 18+i/250, i%250) }),
				"203.0.113.50:1", 180 * perAddress, fmt.Sprintf("one address may send %d ", perAddress)},
			{"180 addresses of one /24, as on loopback",
				servertest.Addrs(180, func(i int) string { return fmt.Sprintf("127.0.0.%d:4000", i+1) }),
				"127.0.1.1:1", perNetwork, fmt.Sprintf("one network may send %d ", perNetwork)},
			{"180 IPv6 /64s of one /48",
				servertest.Addrs(180, func(i int) string { return fmt.Sprintf("[2001:db8:7:%x::1]:443", i) }),
				"[2001:db8:8::1]:443", perNetwork, fmt.Sprintf("one network may send %d ", perNetwork)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newSiteEnv(t, feedbackCap(dailyCap))
				accepted, refusal := e.FloodFeedback(tc.attack, dailyCap)
				if accepted > tc.maxStore || accepted >= dailyCap {
					t.Fatalf("the attack stored %d entries; the shares allow %d, the cap is %d", accepted, tc.maxStore, dailyCap)
				}
				if !strings.Contains(refusal, tc.share) {
					t.Errorf("the refusal %s does not name the share (%q)", refusal, tc.share)
				}
				if strings.Contains(refusal, fmt.Sprint(dailyCap)) || strings.Contains(refusal, "as much feedback as the server keeps") {
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
	})
}

// An attacker with more addresses than the server keeps count of in a day
// gains nothing from the addresses it cannot count: they share one
// address's allowance per network, and one network's allowance for
// networks beyond the table, rather than getting a fresh share each; and
// flooding the table does not make it forget the attacker's own counts.
// A reader of a network the flood did not come from is still heard.
func TestFeedbackSharesHoldPastTheTable(t *testing.T) {
	const table = 50
	atScales(t, func(t *testing.T, dailyCap int) {
		perAddress, perNetwork := server.SiteShareDefaults(dailyCap)
		config := func(c *server.Config) {
			feedbackCap(dailyCap)(c)
			c.Site.MaxAddresses = table
		}

		t.Run("more addresses than the table, in a few networks", func(t *testing.T) {
			e := newSiteEnv(t, config)
			first := "192.0.2.1:1"
			accepted, _ := e.FloodFeedback([]string{first}, 100)
			if accepted != perAddress {
				t.Fatalf("the first address stored %d, want its share, %d", accepted, perAddress)
			}
			// 600 addresses in 6 networks: the table fills with the first 50.
			flood := servertest.Addrs(600, func(i int) string { return fmt.Sprintf("10.0.%d.%d:1", i/100, i%100+1) })
			more, _ := e.FloodFeedback(flood, 100)
			if more > 6*perNetwork {
				t.Errorf("600 addresses of 6 networks stored %d; 6 networks' shares allow %d", more, 6*perNetwork)
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
			// One address in each of as many networks as would fill the
			// cap with a share each (four times as many at the default
			// cap): past the table's 50, the rest share one network's
			// allowance.
			networks := server.SiteAddressesToFillACap
			if dailyCap == store.DefaultDailyFeedbackCap {
				networks *= 4
			}
			flood := servertest.Addrs(networks, func(i int) string { return fmt.Sprintf("10.%d.%d.1:1", i/250, i%250) })
			accepted, _ := e.FloodFeedback(flood, 100)
			if bound := table*perAddress + perNetwork; accepted > bound {
				t.Errorf("%d networks stored %d; the table's %d addresses and the one shared allowance allow %d", networks, accepted, table, bound)
			}
			if accepted >= dailyCap {
				t.Errorf("the flood filled the cap (%d entries)", accepted)
			}
		})
	})
}

// The finding for searches: junk queries from many addresses filled the
// day's distinct queries, and every reader's new query was counted under
// "(other searches)" for the rest of the day. With the shares, a reader's
// new query, and the result it opens, are still counted as themselves,
// and every search is counted: the rows add up to the searches sent.
func TestSearchesCapCannotBeFilledByManyAddresses(t *testing.T) {
	// Caps small enough to keep the test short; the default shares are
	// the same fractions of them.
	t.Run("1,080 searches, a cap of 500", func(t *testing.T) { testSearchesFlood(t, 500, 6) })
	t.Run("3,600 searches, a cap of 1,000", func(t *testing.T) {
		thorough.Require(t, "sends 3,600 searches over HTTP")
		testSearchesFlood(t, 1000, 20)
	})
}

// testSearchesFlood is TestSearchesCapCannotBeFilledByManyAddresses at a
// daily cap of dailyCap: 180 addresses in 18 networks send perAddress
// searches each, half of them junk queries and half junk results of a
// query the day holds, enough of each to fill the cap without the shares.
func testSearchesFlood(t *testing.T, dailyCap, perAddress int) {
	if junk := 180 * perAddress / 2; junk < dailyCap {
		t.Fatalf("%d junk queries would not fill a cap of %d", junk, dailyCap)
	}
	e := newSiteEnv(t, servertest.NoSiteBudget, func(c *server.Config) { c.Site.MaxQueriesPerDay = dailyCap })
	e.MustPost("searches", `{"query": "install", "clickedPath": "/install"}`)
	sent := 1
	for i, a := range servertest.Addrs(180, func(i int) string { return fmt.Sprintf("198.51.%d.%d:1", i/10, i%10+1) }) {
		for j := range perAddress {
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
