package pages

import (
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func feedbackPage(canWrite bool) FeedbackPage {
	evil := `<img src=x onerror=alert(1)>`
	at := time.Date(2026, 8, 13, 9, 0, 0, 0, time.UTC)
	return FeedbackPage{
		Frame:    signedIn(),
		Statuses: []store.FeedbackStatus{store.FeedbackStatusPending, store.FeedbackStatusResolved},
		Sources:  []store.FeedbackSource{store.FeedbackSourceContextual},
		Entries: []store.Feedback{
			{ID: "fb_1", Path: "/" + evil, Source: store.FeedbackSourceContextual, Status: store.FeedbackStatusPending, Helpful: true, Comment: &evil, Contact: evil, CreatedAt: at},
			{ID: "fb_2", Path: "/x", Source: store.FeedbackSourceCodeSnippet, Status: store.FeedbackStatusResolved, Code: evil, Filename: evil, CreatedAt: at},
		},
		Thumbs:   []store.PageFeedback{{Path: "/" + evil, ThumbsUp: 1, Total: 1}},
		CanWrite: canWrite,
		Return:   "path=%2Fx",
	}
}

func TestFeedbackAndSearchesPagesRender(t *testing.T) {
	evil := `<img src=x onerror=alert(1)>`
	row := store.SearchRow{Query: evil, Hits: 3, Clicks: 1, TopClickedPage: "/" + evil}
	for _, p := range []Page{
		feedbackPage(true),
		SearchesPage{Frame: signedIn(), Period: Period{From: "2026-08-01", To: "2026-08-14", Compare: Span{Label: "previous 14 days"}}, Total: 3, Top: []store.SearchRow{row}, Gaps: []store.SearchRow{row}},
	} {
		html := render(t, p)
		if strings.Contains(html, "<img") || strings.Contains(html, "<script") || strings.Contains(html, " style=") {
			t.Errorf("%T: a client's text came out as markup, or the page has a script or an inline style:\n%s", p, html)
		}
	}
}

// The status forms are the only forms of the page that post, besides the
// sign-out, and only a key that may write gets them, each offering the
// statuses the entry is not in.
func TestFeedbackStatusFormsAreForWriters(t *testing.T) {
	read := render(t, feedbackPage(false))
	if n := strings.Count(read, `method="post"`); n != 1 {
		t.Errorf("a read key's page has %d forms that post, want the sign-out alone", n)
	}
	write := render(t, feedbackPage(true))
	if n := strings.Count(write, `method="post"`); n != 3 {
		t.Errorf("a write key's page has %d forms that post, want 3", n)
	}
	form := write[strings.Index(write, `action="/dashboard/projects/alpha/feedback/fb_1/status"`):]
	form = form[:strings.Index(form, "</form>")]
	for _, want := range []string{`name="csrf" value="tok"`, `name="return" value="path=%2Fx"`, `<option value="resolved">`} {
		if !strings.Contains(form, want) {
			t.Errorf("the status form lacks %q:\n%s", want, form)
		}
	}
	if strings.Contains(form, `<option value="pending">`) {
		t.Errorf("the status form offers the status the entry has:\n%s", form)
	}
}

func TestVote(t *testing.T) {
	for _, tc := range []struct {
		f    store.Feedback
		want string
	}{
		{store.Feedback{Source: store.FeedbackSourceContextual, Helpful: true}, "yes"},
		{store.Feedback{Source: store.FeedbackSourceThumbsOnly}, "no"},
		{store.Feedback{Source: store.FeedbackSourceCodeSnippet}, ""},
		{store.Feedback{Source: store.FeedbackSourceAgent}, ""},
	} {
		if got := Vote(tc.f); got != tc.want {
			t.Errorf("Vote(%s, %v) = %q, want %q", tc.f.Source, tc.f.Helpful, got, tc.want)
		}
	}
}
