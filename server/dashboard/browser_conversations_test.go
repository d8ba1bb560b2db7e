package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// The conversations page and a thread in a real browser, at a desktop's
// and a phone's width, their rows checked against the store's.
func TestConversationsPagesInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	d := newDashEnv(t)
	ctx := context.Background()
	today := d.Clock.Now().UTC().Truncate(24 * time.Hour)
	first := d.Ask(servertest.Ask{Question: "How do I rotate an admin key without downtime?", At: today.Add(-26 * time.Hour), PageURL: "/reference/keys",
		Answer:  "Create a second key, deploy it everywhere the first one is used, then revoke the first.",
		Sources: []store.Source{{Title: "Keys", URL: "/reference/keys"}, {Title: "Rotating secrets", URL: "https://docs.example.com/guide/rotate"}, {Title: "Bad link", URL: "javascript:alert(1)"}}})
	followUp := d.Ask(servertest.Ask{Thread: first.ThreadID, Question: "And for assistant keys?", At: today.Add(-26*time.Hour + 2*time.Minute),
		Answer: "The docs do not say how assistant keys are rotated.", Unanswered: true})
	d.Ask(servertest.Ask{Question: "Does the server run on a Raspberry Pi? " + strings.Repeat("It has an ARM processor and 2 GB of memory, ", 6), At: today.Add(-5 * time.Hour),
		Answer: "Which model do you have?", Clarifying: true, Unanswered: true, Caller: store.CallerAPI})
	d.Ask(servertest.Ask{Question: "https://averyveryveryveryveryverylongdomainnamewithoutanybreaks.example.com/and/a/path/that/goes/on/and/on", At: today.Add(-2 * time.Hour),
		Answer: "That page does not exist.", Unanswered: true, Caller: store.CallerOther, PageURL: "/a/page/with/a/very/long/path/that/does/not/break/anywhere/at/all/ever"})
	d.Ask(servertest.Ask{Question: "Where is the changelog?", At: today.Add(time.Hour), Answer: "On the releases page.", Sources: []store.Source{{Title: "Releases", URL: "/releases"}}})

	b := servertest.NewTab(t, browser, d.url)
	signIn(b, d.Keys["ro"], "#views-chart")
	b.Do("opening the conversations", chromedp.Click(chromedp.CSS(`nav a[href$="/conversations"]`)), chromedp.WaitVisible(chromedp.ID("conversations")))
	all, err := d.Store.QueryConversations(ctx, store.ConversationsQuery{ProjectID: "alpha", From: today.AddDate(0, 0, -29), To: today.AddDate(0, 0, 1), Limit: 50, Newest: true})
	if err != nil {
		t.Fatal(err)
	}
	shown := func() []string {
		return servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#conversations li[data-id]')).map(li => li.dataset.id + ' ' + li.querySelector('.question').textContent)`)
	}
	var want []string
	for _, x := range all.Exchanges {
		want = append(want, x.ID+" "+x.Question)
	}
	if got := shown(); len(want) != 5 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the page shows\n%s\nthe store has, newest first,\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := shown(); !strings.HasSuffix(got[0], " Where is the changelog?") || !strings.HasSuffix(got[4], " How do I rotate an admin key without downtime?") {
		t.Errorf("the page does not list the newest question first and the oldest last: %q", got)
	}
	if got := b.Text("#total-questions"); got != "5" {
		t.Errorf("total questions %q", got)
	}
	b.ScreenshotBoth("01-conversations")

	// Unanswered only, through the form.
	b.Do("filtering", chromedp.Click(chromedp.ID("unanswered")), chromedp.Click(chromedp.ID("filter")),
		chromedp.WaitVisible(chromedp.CSS(`#conversations[data-filter="unanswered"]`)))
	un, err := d.Store.QueryConversations(ctx, store.ConversationsQuery{ProjectID: "alpha", From: today.AddDate(0, 0, -29), To: today.AddDate(0, 0, 1), Limit: 50, Resolution: store.Unanswered, Newest: true})
	if err != nil {
		t.Fatal(err)
	}
	want = nil
	for _, x := range un.Exchanges {
		want = append(want, x.ID+" "+x.Question)
	}
	if got := shown(); len(want) != 3 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("unanswered, the page shows\n%s\nthe store has\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b.ScreenshotBoth("02-conversations-unanswered")

	// The follow-up's thread (the last row, the oldest unanswered): both
	// exchanges, the sources that may be links as links.
	if got := shown(); !strings.HasPrefix(got[len(got)-1], followUp.ID+" ") {
		t.Errorf("the oldest unanswered question, the last row, is not the follow-up: %q", got)
	}
	b.Do("opening a thread", chromedp.Click(chromedp.CSS(`#conversation-`+followUp.ID+` .thread-link`)), chromedp.WaitVisible(chromedp.ID("exchanges")))
	msgs := servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#exchanges .prompt')).map(p => p.textContent)`)
	if len(msgs) != 4 || msgs[0] != "How do I rotate an admin key without downtime?" || msgs[3] != "The docs do not say how assistant keys are rotated." {
		t.Errorf("the thread shows %q", msgs)
	}
	links := servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#exchanges .sources a')).map(a => a.getAttribute('href'))`)
	if strings.Join(links, " ") != "/reference/keys https://docs.example.com/guide/rotate" {
		t.Errorf("the sources link to %q", links)
	}
	if !strings.Contains(b.Text("#exchanges"), "Bad link") {
		t.Error("the source that may not be a link is not shown as text")
	}
	b.ScreenshotBoth("03-thread")
}
