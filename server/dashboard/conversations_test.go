package dashboard_test

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/internal/ulid"
	"github.com/docsapi/docsapi-go/server/store"
)

// conversationIDs lists the IDs of the questions a conversations page
// shows, in order.
func conversationIDs(page string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`<li class="conversation" id="conversation-[^"]*" data-id="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// askMany stores n questions of alpha, a minute apart from at on, every
// third unanswered, and returns them.
func (d *dashEnv) askMany(n int, at time.Time) []store.Exchange {
	var out []store.Exchange
	for i := range n {
		out = append(out, d.Ask(servertest.Ask{Question: fmt.Sprintf("question %d", i), Answer: "answer", Unanswered: i%3 == 2,
			At: at.Add(time.Duration(i) * time.Minute)}))
	}
	return out
}

func idsOf(xs []store.Exchange) []string {
	var ids []string
	for _, x := range xs {
		ids = append(ids, x.ID)
	}
	return ids
}

// newestFirst lists the IDs of xs, given in the order asked, newest first.
func newestFirst(xs []store.Exchange) []string {
	ids := idsOf(xs)
	slices.Reverse(ids)
	return ids
}

// The page lists the period's questions newest first, a page at a time
// back to earlier ones by the export's cursor, the unanswered ones alone
// when asked; its counts are the caller statistics of the period and of
// the one before.
func TestDashboardConversationsPage(t *testing.T) {
	d := newDashEnv(t)
	today := d.Clock.Now().UTC().Truncate(24 * time.Hour)
	old := d.Ask(servertest.Ask{Question: "asked 40 days ago", Answer: "a", At: today.AddDate(0, 0, -40), Caller: store.CallerAPI})
	asked := d.askMany(60, today.AddDate(0, 0, -2))
	d.Ask(servertest.Ask{Project: "beta", Question: "beta's", Answer: "a"})
	b := d.browser(t)
	b.signIn("ro")

	page, _ := b.page("/dashboard/projects/alpha/conversations")
	if got, want := conversationIDs(page), newestFirst(asked[10:]); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the first page shows %v, want the last 50 asked, newest first: %v", got, want)
	}
	for id, want := range map[string]string{"total-questions": "60", "change-questions": "+5900% vs previous 30 days", "callers-web": "60", "callers-api": "0"} {
		if got := textOf(t, page, `id="`+id+`">`, "</dd>"); got != want {
			t.Errorf("#%s says %q, want %q", id, got, want)
		}
	}
	if strings.Contains(page, `id="first-page"`) || !strings.Contains(page, ">Earlier questions</a>") {
		t.Error("the first page links to itself, or not to earlier questions")
	}
	next := html.UnescapeString(hrefOf(t, page, "earlier"))
	if !strings.Contains(next, "cursor="+asked[10].ID) {
		t.Fatalf("the earlier questions' link %q does not start before the 50th newest question", next)
	}
	page, _ = b.page(next)
	if got, want := conversationIDs(page), newestFirst(asked[:10]); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the second page shows %v, want the first 10 asked, newest first: %v", got, want)
	}
	if strings.Contains(page, `id="earlier"`) || !strings.Contains(page, `id="first-page"`) {
		t.Error("the last page links to earlier questions, or not back to the newest")
	}

	// Unanswered only: every third, and the filter stays in the links.
	page, _ = b.page("/dashboard/projects/alpha/conversations?period=7d&unanswered=1")
	var unanswered []store.Exchange
	for _, x := range asked {
		if x.Resolution == store.Unanswered {
			unanswered = append(unanswered, x)
		}
	}
	if got := conversationIDs(page); len(unanswered) != 20 || strings.Join(got, ",") != strings.Join(newestFirst(unanswered), ",") {
		t.Errorf("unanswered only shows %v, want %v", got, newestFirst(unanswered))
	}
	if !strings.Contains(page, `id="unanswered" name="unanswered" value="1" checked`) || !strings.Contains(html.UnescapeString(hrefOf(t, page, "period-30d")), "unanswered=1") {
		t.Error("the filter is not kept by the form or the presets")
	}
	// With a cursor: the unanswered ones asked before the 31st question.
	page, _ = b.page("/dashboard/projects/alpha/conversations?period=7d&unanswered=1&cursor=" + asked[30].ID)
	var before []store.Exchange
	for _, x := range unanswered {
		if x.ID < asked[30].ID {
			before = append(before, x)
		}
	}
	if got := conversationIDs(page); len(before) != 10 || strings.Join(got, ",") != strings.Join(newestFirst(before), ",") {
		t.Errorf("unanswered before the 31st shows %v, want %v", got, newestFirst(before))
	}
	if first := html.UnescapeString(hrefOf(t, page, "first-page")); !strings.Contains(first, "unanswered=1") || strings.Contains(first, "cursor=") {
		t.Errorf("the link to the newest unanswered questions is %q", first)
	}
	// A custom range that holds the old question alone.
	page, _ = b.page("/dashboard/projects/alpha/conversations?period=custom&from=" + old.AskedAt.Format(time.DateOnly) + "&to=" + old.AskedAt.Format(time.DateOnly))
	if got := conversationIDs(page); len(got) != 1 || got[0] != old.ID || textOf(t, page, `id="callers-api">`, "</dd>") != "1" {
		t.Errorf("the old question's day shows %v", got)
	}

	// Each row links to its thread at the exchange.
	if !strings.Contains(page, `href="/dashboard/projects/alpha/conversations/`+old.ThreadID+`#x-`+old.ID+`"`) {
		t.Errorf("no link to the thread of %s", old.ID)
	}

	// A malformed cursor is named, and the first page shown.
	resp, page := b.get("/dashboard/projects/alpha/conversations?cursor=nope")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, `id="conversations-problem">cursor must be the ID of a question`) || len(conversationIDs(page)) != 50 {
		t.Errorf("a malformed cursor: %d, %d rows", resp.StatusCode, len(conversationIDs(page)))
	}
	// beta's key cannot read alpha's.
	b.signIn("beta")
	if resp, _ := b.get("/dashboard/projects/alpha/conversations"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("beta's key on alpha's conversations: %d, want 403", resp.StatusCode)
	}
}

// The thread page shows each exchange's question, reply and sources;
// text is escaped, and only http(s) URLs and site paths become links.
func TestDashboardThreadPage(t *testing.T) {
	d := newDashEnv(t)
	first := d.Ask(servertest.Ask{Question: `<script>alert("q")</script> How?`, Answer: "See <b>this</b>.", PageURL: "javascript:alert(1)",
		Sources: []store.Source{
			{Title: "Install", URL: "/guide/install"},
			{Title: "Elsewhere", URL: "https://docs.example.com/x?a=1&b=2"},
			{Title: "Evil", URL: "javascript:alert(document.cookie)"},
			{Title: "Also evil", URL: "JaVaScRiPt:alert(1)"},
			{Title: "Data", URL: "data:text/html,<script>alert(1)</script>"},
			{Title: "Other host", URL: "//evil.example/"},
			{Title: "Mail", URL: "mailto:someone@example.com"},
		}})
	d.Clock.Advance(time.Minute)
	second := d.Ask(servertest.Ask{Thread: first.ThreadID, Question: "And then?", Answer: "Nothing found.", Unanswered: true, PageURL: "/guide"})
	beta := d.Ask(servertest.Ask{Project: "beta", Question: "beta's", Answer: "a"})
	b := d.browser(t)
	b.signIn("ro")

	page, _ := b.page("/dashboard/projects/alpha/conversations/" + first.ThreadID)
	if ids := regexp.MustCompile(`<li class="exchange" id="x-([^"]*)"`).FindAllStringSubmatch(page, -1); len(ids) != 2 || ids[0][1] != first.ID || ids[1][1] != second.ID {
		t.Fatalf("the thread shows the exchanges %v", ids)
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<b>this") || !strings.Contains(page, "&lt;script&gt;alert(&#34;q&#34;)&lt;/script&gt; How?") {
		t.Error("the question or the answer is not escaped")
	}
	var links []string
	for _, m := range regexp.MustCompile(`<a href="([^"]*)"`).FindAllStringSubmatch(between(t, page, `id="exchanges"`, "</ol>"), -1) {
		links = append(links, html.UnescapeString(m[1]))
	}
	if want := []string{"/guide/install", "https://docs.example.com/x?a=1&b=2", "/guide"}; strings.Join(links, " ") != strings.Join(want, " ") {
		t.Errorf("the thread links to %q, want %q", links, want)
	}
	for _, text := range []string{"Evil", "Also evil", "Data", "Other host", "Mail", "javascript:alert(1)"} {
		if !strings.Contains(page, text) {
			t.Errorf("the source or page %q is not shown as text", text)
		}
	}
	if got := textOf(t, page, `id="thread-questions">`, "</dd>"); got != "2" {
		t.Errorf("the thread counts %s questions", got)
	}

	for _, tc := range []struct {
		id     string
		status int
	}{{"nope", http.StatusBadRequest}, {ulid.New(d.Clock.Now()), http.StatusNotFound}, {beta.ThreadID, http.StatusNotFound}} {
		if resp, _ := b.get("/dashboard/projects/alpha/conversations/" + tc.id); resp.StatusCode != tc.status {
			t.Errorf("thread %s: %d, want %d", tc.id, resp.StatusCode, tc.status)
		}
	}
}
