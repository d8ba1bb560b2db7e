package site_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// The feedback widget in a real browser: a documentation site on one
// origin loads docsapi.js from the server on another, with a site token
// for the site's origin; a reader votes with a comment on one page and
// without one on another, and the exports give both back. The script runs
// as a reader's browser runs it: CORS, the text/plain body, the honeypot
// left empty.
func TestFeedbackWidgetInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	e := newEnv(t)
	api := e.Serve()
	var token string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>%[1]s</title></head>
<body><main><h1>%[1]s</h1><p>Some documentation.</p></main>
<script src="%[2]s/v1/site/alpha/docsapi.js" data-token="%[3]s" defer></script></body></html>`, r.URL.Path, api, token)
	}))
	t.Cleanup(site.Close)
	tok, err := e.Server.CreateSiteToken(context.Background(), server.SiteTokenParams{Project: "alpha", Name: "docs", Origins: []string{site.URL}})
	if err != nil {
		t.Fatal(err)
	}
	token = tok.Token

	b := servertest.NewTab(t, browser, site.URL)
	const thanks = `Thank you for your feedback.`
	b.Open("/quickstart", `#docsapi-feedback button[data-helpful="true"]`)
	b.Screenshot("01-widget")
	b.Do("voting yes with a comment",
		chromedp.Click(chromedp.CSS(`#docsapi-feedback button[data-helpful="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#docsapi-feedback textarea[name="comment"]`)),
		chromedp.SendKeys(chromedp.CSS(`#docsapi-feedback textarea[name="comment"]`), "Step 2 worked."),
		chromedp.Click(chromedp.CSS(`#docsapi-feedback button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#docsapi-feedback [role="status"]`)))
	b.WaitText(`#docsapi-feedback [role="status"]`, thanks)
	b.Screenshot("02-sent")
	e.Clock.Advance(time.Minute)
	b.Open("/api/auth", `#docsapi-feedback button[data-helpful="false"]`)
	b.Do("voting no, without a comment",
		chromedp.Click(chromedp.CSS(`#docsapi-feedback button[data-helpful="false"]`)),
		chromedp.Click(chromedp.CSS(`#docsapi-feedback form > div > button[type="button"]`)))
	b.WaitText(`#docsapi-feedback [role="status"]`, thanks)

	entries, err := docsapi.Collect(e.client("rw").Analytics.AllFeedback(context.Background(), "", docsapi.FeedbackParams{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d feedback entries stored, want 2: %+v", len(entries), entries)
	}
	var got []string
	for _, f := range entries {
		comment := ""
		if f.Comment != nil {
			comment = *f.Comment
		}
		got = append(got, fmt.Sprintf("%s %s %v %q", f.Path, f.Source, f.Helpful, comment))
	}
	// Newest first; a vote alone is thumbs-only, and keeps its direction.
	want := []string{`/api/auth thumbs_only no ""`, `/quickstart contextual yes "Step 2 worked."`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %q, want %q", got, want)
	}
}
