package site_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// The host page's own stylesheet: a light and a dark theme, and its own
// form controls, which the widget's stylesheet must leave alone.
const hostCSS = `:root { color-scheme: light dark; }
body { font-family: Georgia, serif; margin: 2rem; background: #ffffff; color: #202124; }
@media (prefers-color-scheme: dark) { body { background: #15171c; color: #e8eaed; } }
`

// A site's restyling: an accent of its own, set where the widget's header
// says, and square corners by a bare element rule, which must win over
// the widget's rules whatever their order.
const overrideCSS = `.docsapi-feedback { --docsapi-accent: rgb(180, 0, 60); border-radius: 0; }
button { border-radius: 0; }
`

// The host page's elements outside the widget, whose every computed
// property must be the same with the widget's stylesheet as without.
var hostElements = []string{"#host-p", "#host-button", "#host-textarea", "#host-input", "#host-label", "#host-form"}

// The feedback widget's default style in a real browser, on a host page
// whose Content-Security-Policy forbids inline styles and scripts: the
// stylesheet the script adds applies to the widget alone (every host
// element keeps every computed property), lays out the fields after a vote
// each on its line, is readable in the light and the dark theme, and gives
// way to the site's own rules.
func TestFeedbackWidgetStyle(t *testing.T) {
	browser := servertest.FindBrowser(t)
	e := newSiteEnv(t)
	api := e.Serve()
	var token string
	var violations atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/csp-report":
			violations.Add(1)
			w.WriteHeader(http.StatusNoContent)
			return
		case "/host.css", "/override.css":
			css := hostCSS
			if r.URL.Path == "/override.css" {
				css = overrideCSS
			}
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, css)
			return
		}
		apiOrigin := api[:strings.Index(api, "/api")]
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src "+apiOrigin+"; style-src 'self' "+apiOrigin+
			"; connect-src "+apiOrigin+"; base-uri 'none'; form-action 'none'; report-uri /csp-report")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		links, script := `<link rel="stylesheet" href="/host.css">`, fmt.Sprintf(`<script src="%s/v1/site/alpha/docsapi.js" data-token="%s" defer></script>`, api, token)
		switch r.URL.Path {
		case "/plain":
			script = ""
		case "/override":
			links += `<link rel="stylesheet" href="/override.css">`
		case "/unstyled":
			script = strings.Replace(script, "defer", `data-style="off" defer`, 1)
		}
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Widget</title>%s</head>
<body><main><h1>Install</h1><p id="host-p">Some documentation, and the site's own form:</p>
<form id="host-form"><label id="host-label">Search <input id="host-input" name="q"></label>
<textarea id="host-textarea"></textarea><button id="host-button" type="button">Go</button></form></main>%s</body></html>`, links, script)
	}))
	t.Cleanup(site.Close)
	tok, err := e.Server.CreateSiteToken(context.Background(), server.SiteTokenParams{Project: "alpha", Name: "docs", Origins: []string{site.URL}})
	if err != nil {
		t.Fatal(err)
	}
	token = tok.Token

	b := servertest.NewTab(t, browser, site.URL)
	// openWidget opens path and waits for the widget and its stylesheet.
	openWidget := func(path string) {
		t.Helper()
		b.Open(path, `.docsapi-feedback .docsapi-vote`)
		b.Do("waiting for the widget's style", chromedp.Poll[chromedp.Void](
			`getComputedStyle(document.querySelector(".docsapi-feedback")).display === "flex"`))
	}
	vote := func() {
		t.Helper()
		b.Do("voting yes", chromedp.Click(chromedp.CSS(`.docsapi-feedback .docsapi-vote[data-helpful="true"]`)),
			chromedp.WaitVisible(chromedp.CSS(`.docsapi-feedback textarea`)))
	}

	b.Do("a light theme", colorScheme("light"))
	b.Open("/plain", "#host-button")
	plain := hostStyles(b)

	openWidget("/docs")
	if got := hostStyles(b); got != plain {
		t.Errorf("the widget's stylesheet changed the host page's elements:\n%s", diffStyles(plain, got))
	}
	if n := servertest.Eval[int](b, `document.querySelectorAll('head > link[href$="/docsapi.css"]').length`); n != 1 {
		t.Errorf("%d links to docsapi.css in the head, want 1", n)
	}
	checkTheme(t, b, "light")
	b.ScreenshotBoth("01-light")
	vote()
	checkLayout(t, b)
	checkTheme(t, b, "light")
	checkHoneypot(t, b)
	b.ScreenshotBoth("02-light-voted")
	b.Do("sending", chromedp.Click(chromedp.CSS(`.docsapi-feedback .docsapi-send`)))
	b.WaitText(`.docsapi-feedback .docsapi-status`, "Thank you for your feedback.")
	if gap := servertest.Eval[float64](b, `document.querySelector(".docsapi-status").getBoundingClientRect().top -
		document.querySelector(".docsapi-vote").getBoundingClientRect().bottom`); gap <= 0 {
		t.Errorf("the thanks runs into the buttons (%vpx below them)", gap)
	}
	b.ScreenshotBoth("03-light-sent")

	b.Do("a dark theme", colorScheme("dark"))
	b.Open("/plain", "#host-button")
	plainDark := hostStyles(b)
	openWidget("/docs")
	if got := hostStyles(b); got != plainDark {
		t.Errorf("in the dark theme, the widget's stylesheet changed the host page's elements:\n%s", diffStyles(plainDark, got))
	}
	checkTheme(t, b, "dark")
	vote()
	checkLayout(t, b)
	checkTheme(t, b, "dark")
	b.ScreenshotBoth("04-dark-voted")

	b.Do("back to the light theme", colorScheme("light"))
	openWidget("/override")
	vote()
	for what, got := range map[string]string{
		"the chosen vote's background": computed(b, `.docsapi-vote[aria-pressed="true"]`, "background-color"),
		"the widget's corners":         computed(b, `.docsapi-feedback`, "border-top-left-radius"),
		"the buttons' corners":         computed(b, `.docsapi-send`, "border-top-left-radius"),
	} {
		want := map[string]string{"the chosen vote's background": "rgb(180, 0, 60)"}[what]
		if want == "" {
			want = "0px"
		}
		if got != want {
			t.Errorf("with the site's rules, %s is %s, want %s", what, got, want)
		}
	}
	b.ScreenshotBoth("05-override")

	// data-style="off": the widget without the stylesheet.
	b.Open("/unstyled", `.docsapi-feedback .docsapi-vote`)
	if servertest.Eval[bool](b, `document.querySelector('link[href$="/docsapi.css"]') !== null`) {
		t.Error(`data-style="off" still added the stylesheet`)
	}
	if d := computed(b, ".docsapi-feedback", "display"); d != "block" {
		t.Errorf(`with data-style="off", the widget's form is displayed %s, want the browser's block`, d)
	}
	// The script alone hides the honeypot, under a policy that forbids
	// style attributes.
	vote()
	checkHoneypot(t, b)

	if n := violations.Load(); n != 0 {
		t.Errorf("the host page's Content-Security-Policy reported %d violations", n)
	}
}

// checkHoneypot checks that the honeypot field, shown with the fields
// after a vote, is off screen.
func checkHoneypot(t *testing.T, b *servertest.Tab) {
	t.Helper()
	r := servertest.Eval[map[string]float64](b, `(r => ({right: r.right, width: r.width}))(document.querySelector(".docsapi-hp").getBoundingClientRect())`)
	if r["width"] == 0 || r["right"] > 0 {
		t.Errorf("the honeypot field is not laid out off screen: %v", r)
	}
}

// colorScheme makes the page's prefers-color-scheme value.
func colorScheme(value string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}},
		})
		return err
	})
}

// hostStyles returns every computed property of the host page's elements
// outside the widget, one per line.
func hostStyles(b *servertest.Tab) string {
	b.T.Helper()
	list := `["` + strings.Join(hostElements, `", "`) + `"]`
	return servertest.Eval[string](b, list+`.map(sel => { const cs = getComputedStyle(document.querySelector(sel));
		return Array.from(cs).map(p => sel + " " + p + ": " + cs.getPropertyValue(p)).join("\n"); }).join("\n")`)
}

// diffStyles lists the lines of got that are not in want.
func diffStyles(want, got string) string {
	have := map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		have[l] = true
	}
	var out []string
	for _, l := range strings.Split(got, "\n") {
		if !have[l] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// computed returns the computed value of property of the element sel.
func computed(b *servertest.Tab, sel, property string) string {
	b.T.Helper()
	return servertest.Eval[string](b, `getComputedStyle(document.querySelector(`+"`"+sel+"`"+`)).getPropertyValue("`+property+`")`)
}

// checkTheme checks that the widget is readable in the theme: its text
// takes the page's colour, its controls no background of their own, and a
// chosen vote the accent of the theme with a text that contrasts with it.
func checkTheme(t *testing.T, b *servertest.Tab, theme string) {
	t.Helper()
	page, text := computed(b, "body", "background-color"), computed(b, "body", "color")
	if got := computed(b, ".docsapi-feedback", "color"); got != text {
		t.Errorf("%s: the widget's text is %s, want the page's %s", theme, got, text)
	}
	unpressed := `.docsapi-vote:not([aria-pressed="true"])`
	if got := computed(b, unpressed, "color"); got != text {
		t.Errorf("%s: a vote button's text is %s, want the page's %s", theme, got, text)
	}
	if r := contrast(computed(b, ".docsapi-question", "color"), page); r < 4.5 {
		t.Errorf("%s: the question's contrast with the page is %.1f, want 4.5 at least", theme, r)
	}
	for _, sel := range []string{unpressed, ".docsapi-feedback textarea"} {
		if bg := computed(b, sel, "background-color"); bg != "rgba(0, 0, 0, 0)" {
			t.Errorf("%s: %s has a background of its own (%s): it would not follow the page's theme", theme, sel, bg)
		}
	}
	if !servertest.Eval[bool](b, `document.querySelector('.docsapi-vote[aria-pressed="true"]') !== null`) {
		return
	}
	accent := map[string]string{"light": "rgb(29, 78, 216)", "dark": "rgb(147, 197, 253)"}[theme]
	pressed := `.docsapi-vote[aria-pressed="true"]`
	bg, fg := computed(b, pressed, "background-color"), computed(b, pressed, "color")
	if bg != accent {
		t.Errorf("%s: the chosen vote's background is %s, want the theme's accent %s", theme, bg, accent)
	}
	if r := contrast(fg, bg); r < 4.5 {
		t.Errorf("%s: the chosen vote's text %s on %s has a contrast of %.1f, want 4.5 at least", theme, fg, bg, r)
	}
	if r := contrast(bg, page); r < 3 {
		t.Errorf("%s: the chosen vote %s on the page's %s has a contrast of %.1f, want 3 at least", theme, bg, page, r)
	}
}

// checkLayout checks that, after a vote, the form does not run together:
// the question and votes on a line, then each field on its own line as
// wide as the form's inside, then the form's buttons below them.
func checkLayout(t *testing.T, b *servertest.Tab) {
	t.Helper()
	type box struct{ Top, Bottom, Left, Right, Width float64 }
	rect := func(sel string) box {
		t.Helper()
		return servertest.Eval[box](b, `(r => ({Top: r.top, Bottom: r.bottom, Left: r.left, Right: r.right, Width: r.width}))(document.querySelector(`+"`"+sel+"`"+`).getBoundingClientRect())`)
	}
	question, yes, more := rect(".docsapi-question"), rect(".docsapi-vote"), rect(".docsapi-more")
	comment, commentField, contact := rect(".docsapi-feedback textarea"), rect(".docsapi-field"), rect(`.docsapi-feedback input[name="contact"]`)
	send := rect(".docsapi-send")
	switch {
	case more.Top < math.Max(question.Bottom, yes.Bottom):
		t.Errorf("the fields start at %v, above the question's line (ending at %v)", more.Top, math.Max(question.Bottom, yes.Bottom))
	case comment.Top < commentField.Top+1:
		t.Errorf("the comment box starts at %v, beside its label, not under it (label at %v)", comment.Top, commentField.Top)
	case contact.Top < comment.Bottom:
		t.Errorf("the contact field starts at %v, beside the comment box (ending at %v)", contact.Top, comment.Bottom)
	case send.Top < contact.Bottom:
		t.Errorf("the Send button starts at %v, beside the contact field (ending at %v)", send.Top, contact.Bottom)
	case math.Abs(commentField.Width-more.Width) > 1 || math.Abs(comment.Width-commentField.Width) > 1:
		t.Errorf("a field is %v wide and its box %v, want the form's inside, %v", commentField.Width, comment.Width, more.Width)
	}
}

// contrast is the WCAG contrast ratio of two opaque colours as computed
// styles give them (rgb(r, g, b)), 0 for any other form, which fails every
// check of it.
func contrast(a, b string) float64 {
	l1, ok1 := luminance(a)
	l2, ok2 := luminance(b)
	if !ok1 || !ok2 {
		return 0
	}
	if l1 < l2 {
		l1, l2 = l2, l1
	}
	return (l1 + 0.05) / (l2 + 0.05)
}

func luminance(rgb string) (float64, bool) {
	var r, g, b float64
	if n, err := fmt.Sscanf(rgb, "rgb(%f, %f, %f)", &r, &g, &b); err != nil || n != 3 {
		return 0, false
	}
	channel := func(c float64) float64 {
		c /= 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*channel(r) + 0.7152*channel(g) + 0.0722*channel(b), true
}

// The stylesheet is served to any page as CSS, and every rule of it is
// scoped to the widget and has no specificity, so it restyles nothing of
// the host page and any rule of the site wins over it.
func TestWidgetStylesheetIsServedAndScoped(t *testing.T) {
	e := newSiteEnv(t)
	resp, body := e.Site(servertest.SiteRequest{Method: "GET", Target: "/v1/site/alpha/docsapi.css"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/css; charset=utf-8" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cross-Origin-Resource-Policy") != "cross-origin" {
		t.Fatalf("GET docsapi.css: %d %v", resp.StatusCode, resp.Header)
	}
	css := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(string(body), "")
	rules := 0
	for _, m := range regexp.MustCompile(`([^{}]+)\{`).FindAllStringSubmatch(css, -1) {
		sel := strings.TrimSpace(m[1])
		if strings.HasPrefix(sel, "@media") {
			continue
		}
		rules++
		// Every selector of a rule's list, not only its first, starts
		// with one of the widget's roots.
		for _, one := range whereList(sel) {
			if !strings.HasPrefix(one, ".docsapi-feedback") && !strings.HasPrefix(one, ".docsapi-search") && !strings.HasPrefix(one, ".docsapi-ask") {
				t.Errorf("rule %q: %q is not scoped to the feedback widget, the search box or the Ask panel", sel, one)
			}
		}
		if !withinWhere(sel) {
			t.Errorf("rule %q has a part outside :where(), which gives it specificity", sel)
		}
	}
	if rules < 10 {
		t.Errorf("found %d rules in the stylesheet; the check read it wrong", rules)
	}
	if strings.Contains(css, "!important") {
		t.Error("the stylesheet says !important, which a site's rules could not override")
	}
}

// whereList returns the selectors listed in sel's first :where(...),
// split at its top-level commas; sel itself when it opens with none.
func whereList(sel string) []string {
	if !strings.HasPrefix(sel, ":where(") {
		return []string{sel}
	}
	var out []string
	depth, start := 0, len(":where(")
	for i := start; i < len(sel); i++ {
		switch sel[i] {
		case '(', '[':
			depth++
		case ']':
			depth--
		case ')':
			if depth == 0 {
				return append(out, strings.TrimSpace(sel[start:i]))
			}
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(sel[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(sel[start:]))
}

// withinWhere reports whether sel is one :where(...) from its first
// character to its last, or several separated by spaces: a selector
// without specificity.
func withinWhere(sel string) bool {
	for sel != "" {
		if !strings.HasPrefix(sel, ":where(") {
			return false
		}
		depth, end := 0, -1
		for i, c := range sel {
			if c == '(' {
				depth++
			} else if c == ')' {
				if depth--; depth == 0 {
					end = i
					break
				}
			}
		}
		if end < 0 {
			return false
		}
		sel = strings.TrimLeft(sel[end+1:], " ")
	}
	return true
}
