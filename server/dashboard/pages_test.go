package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// The searches and feedback pages, and the jobs list's prompts, at the
// level of HTTP (browser_pages_test.go drives them in Chromium).

// addFeedback stores n entries of alpha, one a minute back from now,
// across three pages and every source, and returns them as the store
// keeps them.
func (d *dashEnv) addFeedback(t *testing.T, n int) []store.Feedback {
	t.Helper()
	sources := []store.FeedbackSource{store.FeedbackSourceContextual, store.FeedbackSourceThumbsOnly, store.FeedbackSourceCodeSnippet, store.FeedbackSourceAgent}
	var out []store.Feedback
	for i := range n {
		f := store.NewFeedback{
			ID: fmt.Sprintf("fb_%02d", i), ProjectID: "alpha", Path: fmt.Sprintf("/guide/page-%d", i%3),
			Source: sources[i%len(sources)], CreatedAt: d.Clock.Now().Add(-time.Duration(i) * time.Minute),
		}
		switch f.Source {
		case store.FeedbackSourceContextual:
			f.Helpful, f.Contact = i%3 == 0, fmt.Sprintf("reader%d@example.com", i)
			comment := fmt.Sprintf("Entry %d: <b>unclear</b> step", i)
			f.Comment = &comment
		case store.FeedbackSourceThumbsOnly:
			f.Helpful = i%3 != 0
		case store.FeedbackSourceCodeSnippet:
			f.Code, f.Filename, f.Lang = "go run ./cmd/docsapi", "main.go", "go"
		}
		stored, err := d.Store.AddFeedback(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, stored)
	}
	return out
}

// storeFeedback is the store's answer to the feedback export's query.
func (d *dashEnv) storeFeedback(t *testing.T, q store.FeedbackQuery) store.FeedbackPage {
	t.Helper()
	q.ProjectID = "alpha"
	page, err := d.Store.QueryFeedback(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

var entryID = regexp.MustCompile(`data-id="([^"]+)"`)

// entryIDs lists the IDs of the feedback entries a page shows, in order.
func entryIDs(page string) []string {
	var out []string
	for _, m := range entryID.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

func feedbackIDs(entries []store.Feedback) []string {
	var out []string
	for _, f := range entries {
		out = append(out, f.ID)
	}
	return out
}

var nextLink = regexp.MustCompile(`<a href="([^"]+)" rel="next"`)

func TestDashboardFeedbackPageShowsTheStoresEntriesAndThumbs(t *testing.T) {
	d := newDashEnv(t)
	d.addFeedback(t, 30)
	b := d.browser(t)
	b.signIn("rw")

	first, _ := b.page("/dashboard/projects/alpha/feedback")
	want := d.storeFeedback(t, store.FeedbackQuery{Limit: 25})
	if got := entryIDs(first); strings.Join(got, ",") != strings.Join(feedbackIDs(want.Entries), ",") || !want.HasMore {
		t.Fatalf("the first page shows %v, the store's first page is %v", got, feedbackIDs(want.Entries))
	}
	if !strings.Contains(first, html.EscapeString("Entry 0: <b>unclear</b> step")) || strings.Contains(first, "<b>unclear</b>") {
		t.Error("a reader's comment is not shown as text")
	}
	for _, want := range []string{"reader0@example.com", "main.go · go", "go run ./cmd/docsapi", "Helpful: yes", "Helpful: no", `aria-current="page">Feedback`} {
		if !strings.Contains(first, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	// The older entries, through the page's cursor.
	m := nextLink.FindStringSubmatch(first)
	if m == nil {
		t.Fatal("the first page links to no older entries")
	}
	second, _ := b.page(html.UnescapeString(m[1]))
	last := want.Entries[len(want.Entries)-1].Key()
	rest := d.storeFeedback(t, store.FeedbackQuery{Limit: 25, After: &last})
	if got := entryIDs(second); strings.Join(got, ",") != strings.Join(feedbackIDs(rest.Entries), ",") || len(got) != 5 {
		t.Errorf("the second page shows %v, the store's is %v", got, feedbackIDs(rest.Entries))
	}
	if nextLink.MatchString(second) || !strings.Contains(second, `id="newest"`) {
		t.Error("the last page links to older entries, or not back to the newest")
	}

	// The thumbs are the by-page counts.
	counts, err := d.Store.FeedbackByPage(context.Background(), store.FeedbackByPageQuery{FeedbackFilter: store.FeedbackFilter{ProjectID: "alpha"}, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(t, first, `id="thumbs"`)
	if len(rows) != len(counts.Rows) {
		t.Fatalf("the thumbs list %d pages, the store counts %d", len(rows), len(counts.Rows))
	}
	for i, p := range counts.Rows {
		share := "–"
		if votes := p.ThumbsUp + p.ThumbsDown; votes > 0 {
			share = fmt.Sprintf("%.1f %%", float64(p.ThumbsUp)*100/float64(votes))
		}
		if want := []string{p.Path, count(p.ThumbsUp), count(p.ThumbsDown), share, count(p.Code), count(p.Total)}; strings.Join(rows[i], "|") != strings.Join(want, "|") {
			t.Errorf("thumbs row %d is %q, the store says %q", i, rows[i], want)
		}
	}

	// Filters: the store's answer to the same filter, and the thumbs
	// under it.
	filtered, _ := b.page("/dashboard/projects/alpha/feedback?status=pending&source=contextual&path=" + url.QueryEscape("/guide/page-0"))
	sel := d.storeFeedback(t, store.FeedbackQuery{Limit: 25, FeedbackFilter: store.FeedbackFilter{
		Statuses: []store.FeedbackStatus{store.FeedbackStatusPending}, Source: store.FeedbackSourceContextual, Path: "/guide/page-0"}})
	if got := entryIDs(filtered); len(got) == 0 || strings.Join(got, ",") != strings.Join(feedbackIDs(sel.Entries), ",") {
		t.Errorf("filtered, the page shows %v, the store selects %v", got, feedbackIDs(sel.Entries))
	}
	if rows := tableRows(t, filtered, `id="thumbs"`); len(rows) != 1 || rows[0][0] != "/guide/page-0" {
		t.Errorf("filtered thumbs: %q", rows)
	}
	for _, want := range []string{`<option value="pending" selected>`, `<option value="contextual" selected>`, `value="/guide/page-0"`, `id="clear-filters"`} {
		if !strings.Contains(filtered, want) {
			t.Errorf("the filtered page lacks %q", want)
		}
	}
	// The form sends "any" as empty values: the whole list.
	if all, _ := b.page("/dashboard/projects/alpha/feedback?status=&source=&path="); len(entryIDs(all)) != 25 {
		t.Errorf("empty filters show %d entries", len(entryIDs(all)))
	}
}

func TestDashboardFeedbackFiltersAreChecked(t *testing.T) {
	d := newDashEnv(t)
	d.addFeedback(t, 3)
	b := d.browser(t)
	b.signIn("ro")
	for query, want := range map[string]string{
		"?status=lost":     "status must be",
		"?source=email":    "source must be",
		"?cursor=not-ours": "cursor",
	} {
		resp, page := b.get("/dashboard/projects/alpha/feedback" + query)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(textOf(t, page, `id="feedback-problem"`, "</p>"), want) {
			t.Errorf("feedback%s: %d, want 400 saying %q", query, resp.StatusCode, want)
		}
		if len(entryIDs(page)) != 0 {
			t.Errorf("feedback%s shows entries with its problem", query)
		}
	}
}

func TestDashboardFeedbackStatusChange(t *testing.T) {
	d := newDashEnv(t)
	entries := d.addFeedback(t, 3)
	id := entries[1].ID
	b := d.browser(t)
	b.signIn("rw")
	page, token := b.page("/dashboard/projects/alpha/feedback?path=" + url.QueryEscape(entries[1].Path))
	if !strings.Contains(page, `action="/dashboard/projects/alpha/feedback/`+id+`/status"`) {
		t.Fatalf("the write key's page has no status form for %s", id)
	}
	stored := func() store.FeedbackStatus {
		t.Helper()
		for _, f := range d.storeFeedback(t, store.FeedbackQuery{Limit: 10}).Entries {
			if f.ID == id {
				return f.Status
			}
		}
		t.Fatalf("no entry %s", id)
		return ""
	}

	// Back to the page the form was on, whatever else the form says.
	resp, body := b.post("/dashboard/projects/alpha/feedback/"+id+"/status", token, "status", "resolved", "return", "path=%2Fguide%2Fpage-1&status=pending&next=https%3A%2F%2Fevil.example")
	wantRedirect(t, resp, "/dashboard/projects/alpha/feedback?path=%2Fguide%2Fpage-1&status=pending#entry-"+id)
	if got := stored(); got != store.FeedbackStatusResolved {
		t.Fatalf("after the form, the entry is %s\n%s", got, body)
	}
	resp, _ = b.post("/dashboard/projects/alpha/feedback/"+id+"/status", token, "status", "in_progress", "return", "//evil.example/")
	wantRedirect(t, resp, "/dashboard/projects/alpha/feedback#entry-"+id)
	if got := stored(); got != store.FeedbackStatusInProgress {
		t.Errorf("after the second change, the entry is %s", got)
	}
	// The form offers every status but the entry's.
	page, _ = b.page("/dashboard/projects/alpha/feedback")
	form := between(t, page, `id="entry-`+id+`"`, "</form>")
	if strings.Contains(form, `value="in_progress"`) || !strings.Contains(form, `value="pending"`) || !strings.Contains(form, `value="dismissed"`) {
		t.Errorf("the form of an entry in progress offers:\n%s", form)
	}

	for _, tc := range []struct {
		name, id, token, status string
		code                    int
	}{
		{"an unknown status", id, token, "closed", http.StatusBadRequest},
		{"no status", id, token, "", http.StatusBadRequest},
		{"an unknown entry", "fb_nope", token, "resolved", http.StatusNotFound},
		{"no CSRF token", id, "", "resolved", http.StatusForbidden},
	} {
		resp, _ := b.post("/dashboard/projects/alpha/feedback/"+tc.id+"/status", tc.token, "status", tc.status)
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.code)
		}
	}
	if got := stored(); got != store.FeedbackStatusInProgress {
		t.Errorf("refused changes moved the entry to %s", got)
	}
}

// A read key sees the entries but no form that posts, but signing out,
// and a status change it forges is refused as the API refuses it.
func TestDashboardFeedbackIsReadOnlyForReadKeys(t *testing.T) {
	d := newDashEnv(t)
	entries := d.addFeedback(t, 3)
	b := d.browser(t)
	b.signIn("ro")
	for _, path := range []string{"/dashboard/projects/alpha/feedback", "/dashboard/projects/alpha/searches", "/dashboard/projects/alpha/jobs"} {
		page, _ := b.page(path)
		if n := strings.Count(page, `method="post"`); n != 1 || !strings.Contains(page, `action="/dashboard/logout"`) {
			t.Errorf("%s: a read key sees %d forms that post, want the sign-out alone", path, n)
		}
		if path == "/dashboard/projects/alpha/feedback" && len(entryIDs(page)) != 3 {
			t.Errorf("a read key sees %d entries", len(entryIDs(page)))
		}
	}
	_, token := b.page("/dashboard/projects/alpha/feedback")
	resp, doc := b.post("/dashboard/projects/alpha/feedback/"+entries[0].ID+"/status", token, "status", "dismissed")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a read key's status change: %d, want 403\n%s", resp.StatusCode, doc)
	}
	if got := d.storeFeedback(t, store.FeedbackQuery{Limit: 1}).Entries[0].Status; got != store.FeedbackStatusPending {
		t.Errorf("a read key moved an entry to %s", got)
	}
}

// addSearches stores alpha's searches: each query searched hits times on
// day, the first clicks of them opening page.
func (d *dashEnv) addSearches(t *testing.T, day time.Time, query string, hits, clicks int, page string) {
	t.Helper()
	var batch []store.Search
	for i := range hits {
		s := store.Search{ProjectID: "alpha", Query: query, At: day.Add(time.Duration(i) * time.Minute)}
		if i < clicks {
			s.ClickedPath = page
		}
		batch = append(batch, s)
	}
	if _, err := d.Store.AddSearches(context.Background(), store.SearchBatch{Searches: batch, DailyQueryCap: store.DefaultDailyQueryCap}); err != nil {
		t.Fatal(err)
	}
}

func TestDashboardSearchesPageShowsTopQueriesAndGaps(t *testing.T) {
	d := newDashEnv(t)
	today := d.Clock.Now().UTC().Truncate(24 * time.Hour)
	d.addSearches(t, today, "install", 9, 6, "/guide/install")
	d.addSearches(t, today.AddDate(0, 0, -3), "install", 3, 0, "")
	d.addSearches(t, today.AddDate(0, 0, -1), "rate limits", 7, 0, "")
	d.addSearches(t, today.AddDate(0, 0, -2), "webhooks", 4, 1, "/reference/webhooks")
	d.addSearches(t, today.AddDate(0, 0, -2), "sso", 2, 0, "")
	d.addSearches(t, today.AddDate(0, 0, -40), "old query", 50, 0, "") // before the default range
	b := d.browser(t)
	b.signIn("ro")

	check := func(page string, from, to time.Time) {
		t.Helper()
		ctx := context.Background()
		q := store.SearchesQuery{ProjectID: "alpha", From: from, To: to, Limit: 25}
		top, err := d.Store.QuerySearches(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		q.Unclicked = true
		gaps, err := d.Store.QuerySearches(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, page, `id="total-searches">`, "</dd>"); got != count(top.Total) {
			t.Errorf("total searches %s, the store says %d", got, top.Total)
		}
		rows := tableRows(t, page, `id="top-searches"`)
		if len(rows) != len(top.Rows) {
			t.Fatalf("%d top queries, the store has %d: %q", len(rows), len(top.Rows), rows)
		}
		for i, r := range top.Rows {
			ctr := fmt.Sprintf("%.1f %%", float64(r.Clicks)*100/float64(r.Hits))
			opened := r.TopClickedPage
			if opened == "" {
				opened = "–"
			}
			if want := []string{r.Query, count(r.Hits), count(r.Clicks), ctr, opened, r.LastSearchedAt.UTC().Format("2006-01-02 15:04 UTC")}; strings.Join(rows[i], "|") != strings.Join(want, "|") {
				t.Errorf("top row %d is %q, the store says %q", i, rows[i], want)
			}
		}
		rows = tableRows(t, page, `id="content-gaps"`)
		if len(rows) != len(gaps.Rows) {
			t.Fatalf("%d gaps, the store has %d: %q", len(rows), len(gaps.Rows), rows)
		}
		for i, r := range gaps.Rows {
			if want := []string{r.Query, count(r.Hits), r.LastSearchedAt.UTC().Format("2006-01-02 15:04 UTC")}; strings.Join(rows[i], "|") != strings.Join(want, "|") {
				t.Errorf("gap row %d is %q, the store says %q", i, rows[i], want)
			}
		}
	}

	page, _ := b.page("/dashboard/projects/alpha/searches")
	check(page, today.AddDate(0, 0, -29), today.AddDate(0, 0, 1))
	if gaps := tableRows(t, page, `id="content-gaps"`); len(gaps) != 2 || gaps[0][0] != "rate limits" || gaps[1][0] != "sso" {
		t.Errorf("the gaps of the last 30 days: %q", gaps)
	}
	if !strings.Contains(page, `aria-current="page">Searches`) {
		t.Error("the navigation does not mark Searches")
	}

	// Three days back alone: install found nothing then.
	day := today.AddDate(0, 0, -3).Format(time.DateOnly)
	page, _ = b.page("/dashboard/projects/alpha/searches?from=" + day + "&to=" + day)
	check(page, today.AddDate(0, 0, -3), today.AddDate(0, 0, -2))
	if gaps := tableRows(t, page, `id="content-gaps"`); len(gaps) != 1 || gaps[0][0] != "install" {
		t.Errorf("the gaps of %s: %q", day, gaps)
	}

	resp, page := b.get("/dashboard/projects/alpha/searches?from=yesterday")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(textOf(t, page, `id="range-problem"`, "</p>"), "from must be a day") {
		t.Errorf("a malformed day: %d, want 400 saying so", resp.StatusCode)
	}
}

func TestDashboardJobsListShowsThePromptsFirstLine(t *testing.T) {
	d := newDashEnv(t)
	long := strings.Repeat("word ", 40)
	d.createJob(t, "\nDocument the --verbose flag\nand its short form -v.")
	d.Clock.Advance(time.Minute)
	d.createJob(t, long)
	b := d.browser(t)
	b.signIn("ro")
	page, _ := b.page("/dashboard/projects/alpha/jobs")
	rows := tableRows(t, page, `id="jobs"`)
	if len(rows) != 2 {
		t.Fatalf("the jobs list: %q", rows)
	}
	if got, want := rows[1][5], "Document the --verbose flag"; got != want {
		t.Errorf("the first job's prompt shows %q, want %q", got, want)
	}
	if got := rows[0][5]; got != store.PromptSummary(long) || !strings.HasSuffix(got, "…") || len([]rune(got)) != store.MaxSummaryLength {
		t.Errorf("a long prompt shows %q", got)
	}
	// The API's job list keeps its fields: no summary in its JSON.
	resp, body := d.Do("ro", http.MethodGet, "/v2/agent/alpha/jobs", "")
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "Summary") || strings.Contains(string(body), "summary") {
		t.Errorf("the API's job list: %d %s", resp.StatusCode, body)
	}
}
