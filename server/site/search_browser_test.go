package site_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// searchPageSize is the page size the search box asks for (docsapi.js).
const searchPageSize = 8

// xssTitle is the title of a page of the index made to run a script if the
// box ever wrote a result's text as markup.
const xssTitle = `Zebra <img src=x onerror="document.title=1"> guide`

// searchAPI is the server as the search box's tests see it: every search
// it was asked, the most asked at once, and the first search held until
// release is closed.
type searchAPI struct {
	handler  http.Handler
	mu       sync.Mutex
	queries  []string
	inFlight atomic.Int64
	most     atomic.Int64
	hold     chan struct{} // nil: hold nothing
	received chan string   // the held search's query
	refused  atomic.Int64  // preflights refused
}

func (a *searchAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions && strings.Contains(r.URL.Path, "/discovery/") {
		rec := httptest.NewRecorder()
		a.handler.ServeHTTP(rec, r)
		if rec.Code == http.StatusForbidden {
			a.refused.Add(1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return
	}
	if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, "/discovery/v1/search/") {
		a.handler.ServeHTTP(w, r)
		return
	}
	n := a.inFlight.Add(1)
	// Answered is no longer in flight: counted out before the answer can
	// reach the browser, which may then ask again at once.
	done := sync.OnceFunc(func() { a.inFlight.Add(-1) })
	defer done()
	w = &answering{ResponseWriter: w, done: done}
	for m := a.most.Load(); n > m && !a.most.CompareAndSwap(m, n); m = a.most.Load() {
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var in struct{ Query string }
	json.Unmarshal(body, &in)
	a.mu.Lock()
	a.queries = append(a.queries, in.Query)
	hold := a.hold
	a.hold = nil
	a.mu.Unlock()
	if hold != nil {
		a.received <- in.Query
		<-hold
	}
	a.handler.ServeHTTP(w, r)
}

// answering calls done before the response's header goes out.
type answering struct {
	http.ResponseWriter
	done func()
}

func (w *answering) WriteHeader(code int) {
	w.done()
	w.ResponseWriter.WriteHeader(code)
}

func (w *answering) Write(b []byte) (int, error) {
	w.done()
	return w.ResponseWriter.Write(b)
}

// asked returns the searches asked so far.
func (a *searchAPI) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.queries)
}

// holdNext makes the next search wait until release is called (at the
// test's end at the latest); received gets its query when it arrives.
func (a *searchAPI) holdNext(t *testing.T) (release func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	hold := make(chan struct{})
	a.hold, a.received = hold, make(chan string, 1)
	release = sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	return release
}

// indexGamma makes project gamma (domain gamma-docs) and indexes package
// docs' test site into it, with one more page whose title is markup.
func indexGamma(t *testing.T, e *env) {
	t.Helper()
	evil, err := docs.Read(fstest.MapFS{"zebra.md": {Data: []byte("---\ntitle: '" + xssTitle + "'\n---\n\nZebra crossings, <b>bold</b> claims.\n")}},
		docs.Options{ProjectID: "gamma"})
	if err != nil {
		t.Fatal(err)
	}
	e.IndexDocs(t, "gamma", "gamma-docs", evil.Pages...)
}

// shownResult is a result as the box shows it.
type shownResult struct {
	Href, Title, Heading, Snippet string
	Marks                         []string
}

// shownResults reads the box's results.
func shownResults(b *servertest.Tab) []shownResult {
	b.T.Helper()
	return servertest.Eval[[]shownResult](b, `Array.from(document.querySelectorAll(".docsapi-results [role=option]")).map(li => ({
		Href: li.querySelector("a").href,
		Title: li.querySelector(".docsapi-result-title").textContent,
		Heading: li.querySelector(".docsapi-result-heading")?.textContent ?? "",
		Snippet: li.querySelector(".docsapi-result-snippet").textContent,
		Marks: Array.from(li.querySelectorAll(".docsapi-result-snippet mark")).map(m => m.textContent),
	}))`)
}

// wantResults is what the box should show for query on a page of origin:
// the store's own hits.
func wantResults(t *testing.T, e *env, origin, query string) []shownResult {
	t.Helper()
	hits, err := e.Store.SearchDocs(t.Context(), store.DocsQuery{ProjectID: "gamma", Query: query, Limit: searchPageSize})
	if err != nil {
		t.Fatal(err)
	}
	out := []shownResult{}
	for _, h := range hits {
		r := shownResult{Href: origin + h.Path, Title: h.Title, Snippet: h.Snippet, Marks: []string{}}
		if h.Anchor != "" {
			r.Href += "#" + h.Anchor
		}
		if h.Heading != h.Title {
			r.Heading = h.Heading
		}
		for _, m := range h.Marks {
			r.Marks = append(r.Marks, h.Snippet[m.Start:m.End])
		}
		out = append(out, r)
	}
	return out
}

// The widget's search box in a real browser, on a host page whose
// Content-Security-Policy forbids inline styles and scripts: a reader
// types, the box asks the /discovery search endpoint with the site's
// assistant key (one request at a time, a stale answer dropped, never an
// empty query) and shows the store's results with their section and
// snippet, the matches marked; arrows move through them as a combobox's
// options, Enter follows one to its section on the site, Escape clears; a
// title that is markup shows as text; a page of an origin the key does not
// allow gets a refusal the box states; each search counts in the searches
// export.
func TestSearchBoxInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	e := newEnv(t)
	indexGamma(t, e)
	api := &searchAPI{handler: http.StripPrefix("/api", e.Handler)}
	apiServer := httptest.NewServer(api)
	t.Cleanup(apiServer.Close)
	apiURL := apiServer.URL + "/api"

	var key string
	var violations atomic.Int64
	host := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/csp-report":
			violations.Add(1)
			w.WriteHeader(http.StatusNoContent)
			return
		case "/host.css":
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, hostCSS)
			return
		case "/favicon.ico":
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src "+apiServer.URL+"; style-src 'self' "+apiServer.URL+
			"; connect-src "+apiServer.URL+"; base-uri 'none'; form-action 'none'; report-uri /csp-report")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Docs</title><link rel="stylesheet" href="/host.css"></head>
<body><header><div id="docsapi-search"></div></header><main data-path="%[1]s"><h1 id="page">%[1]s</h1><p>Some documentation.</p>
<p id="below">Text under the search box.</p></main>
<script src="%[2]s/v1/site/gamma/docsapi.js" data-search-key="%[3]s" data-domain="gamma-docs" data-widget="off" defer></script></body></html>`,
			r.URL.Path, apiURL, key)
	})
	site := httptest.NewServer(host)
	t.Cleanup(site.Close)
	k, err := e.Server.CreateAssistantKey(t.Context(), server.AssistantKeyParams{Project: "gamma", Name: "site", Origins: []string{site.URL}})
	if err != nil {
		t.Fatal(err)
	}
	key = k.Secret

	b := servertest.NewTab(t, browser, site.URL)
	const input = `.docsapi-search input[role="combobox"]`
	const status = `.docsapi-search [role="status"]`
	b.Do("a light theme", colorScheme("light"))
	b.Open("/", input)

	// The box's landmark and labels.
	if got := servertest.Eval[string](b, `(() => { const i = document.querySelector(`+"`"+input+"`"+`);
		return [i.closest("[role=search]") !== null, i.labels.length === 1 && i.labels[0].textContent,
			i.getAttribute("aria-controls") === document.querySelector("[role=listbox]").id,
			i.getAttribute("aria-expanded"), document.querySelector(`+"`"+status+"`"+`).getAttribute("aria-live")].join(" ") })()`); got != "true Search the documentation true false polite" {
		t.Errorf("the box's roles and labels: %s", got)
	}

	// Every change of the status line, from now on.
	servertest.Eval[any](b, `window.said = []; new MutationObserver(() => said.push(document.querySelector(`+"`"+status+"`"+`).textContent)).
		observe(document.querySelector(`+"`"+status+"`"+`), {childList: true, characterData: true, subtree: true}); null`)

	// The page's pending timers, so that the test knows when the box's
	// pause after typing has run out.
	servertest.Eval[any](b, `window.pending = new Set(); const set = setTimeout, clear = clearTimeout;
		window.setTimeout = (f, ms) => { const id = set(() => { pending.delete(id); f(); }, ms); pending.add(id); return id; };
		window.clearTimeout = id => { pending.delete(id); clear(id); }; null`)

	// The first search is held while the reader types on: the box asks
	// nothing more until it is answered, drops its answer, and asks what
	// the input now says.
	release := api.holdNext(t)
	b.Do("typing ins", chromedp.SendKeys(chromedp.CSS(input), "ins"))
	select {
	case <-api.received:
	case <-time.After(time.Minute):
		t.Fatal("the box asked nothing in a minute")
	}
	b.Do("typing tall", chromedp.SendKeys(chromedp.CSS(input), "tall"))
	// The box's pause after typing runs out while the first search is
	// held: the page's timers, watched, have all fired or been cleared.
	// (Polled from here: a poll in the page would set timers of its own.)
	for deadline := time.Now().Add(time.Minute); !servertest.Eval[bool](b, `pending.size === 0`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page's timers still pending after a minute")
		}
	}
	release()
	want := wantResults(t, e, site.URL, "install")
	if len(want) < 2 {
		t.Fatalf("the store finds %d sections for install: the keyboard checks need two", len(want))
	}
	b.WaitText(status, resultsSaid(len(want)))
	if got := shownResults(b); !equalJSON(got, want) {
		t.Errorf("shown for install:\n%+v\nwant the store's\n%+v", got, want)
	}
	if !slices.ContainsFunc(shownResults(b), func(r shownResult) bool { return len(r.Marks) > 0 }) {
		t.Error("no match marked in any snippet")
	}
	if said := servertest.Eval[[]string](b, `said`); !slices.Equal(said, []string{resultsSaid(len(want))}) {
		t.Errorf("the status said %q: a stale answer was shown", said)
	}
	if q := api.asked(); q[len(q)-1] != "install" || slices.Contains(q[:len(q)-1], "install") {
		t.Errorf("asked %q, want install last and once", q)
	}
	if m := api.most.Load(); m != 1 {
		t.Errorf("%d searches were asked at once, want 1", m)
	}
	b.ScreenshotBoth("01-results-light")

	// The keyboard: down and up move through the options (wrapping), the
	// input keeping the focus and naming the option.
	activeIs := func(i int) {
		t.Helper()
		got := servertest.Eval[string](b, `(() => { const i = document.activeElement, id = i.getAttribute("aria-activedescendant");
			const opts = Array.from(document.querySelectorAll("[role=option]"));
			return (i.matches(`+"`"+input+"`"+`) ? "" : "focus lost ") + opts.findIndex(o => o.id === id) + " " +
				opts.filter(o => o.getAttribute("aria-selected") === "true").map(o => opts.indexOf(o)).join(",") })()`)
		if want := fmt.Sprintf("%d %d", i, i); got != want {
			t.Errorf("active option and selected options: %q, want %q", got, want)
		}
	}
	press := func(what, key string) { t.Helper(); b.Do(what, chromedp.KeyEvent(key)) }
	press("down", kb.ArrowDown)
	activeIs(0)
	press("down", kb.ArrowDown)
	activeIs(1)
	press("up", kb.ArrowUp)
	activeIs(0)
	press("up", kb.ArrowUp)
	activeIs(len(want) - 1)
	press("down", kb.ArrowDown)
	activeIs(0)
	press("down", kb.ArrowDown)

	// The light and dark themes: the results readable on their surface.
	for _, theme := range []string{"light", "dark"} {
		b.Do(theme, colorScheme(theme))
		surface := computed(b, ".docsapi-results", "background-color")
		for _, sel := range []string{".docsapi-result-title", ".docsapi-result-snippet"} {
			if r := contrast(computed(b, sel, "color"), surface); r < 4.5 {
				t.Errorf("%s: %s on the results' %s has a contrast of %.1f, want 4.5 at least", theme, sel, surface, r)
			}
		}
	}
	b.ScreenshotBoth("02-results-dark")
	b.Do("back to the light theme", colorScheme("light"))

	// Escape clears; a blank query asks nothing.
	asked := len(api.asked())
	press("escape", kb.Escape)
	if got := servertest.Eval[string](b, `[document.querySelector(`+"`"+input+"`"+`).value, document.querySelectorAll("[role=option]").length,
		document.querySelector("[role=listbox]").hidden, document.querySelector(`+"`"+input+"`"+`).getAttribute("aria-expanded"),
		document.querySelector(`+"`"+input+"`"+`).hasAttribute("aria-activedescendant"), document.querySelector(`+"`"+status+"`"+`).textContent].join("|")`); got != "|0|true|false|false|" {
		t.Errorf("after Escape: %q, want an empty input, no options, the list hidden and collapsed, nothing said", got)
	}
	b.Do("typing blanks", chromedp.SendKeys(chromedp.CSS(input), "   "))
	b.Do("typing a query", chromedp.SendKeys(chromedp.CSS(input), "yarn"))
	want = wantResults(t, e, site.URL, "yarn")
	if len(want) == 0 {
		t.Fatal("the store finds nothing for yarn: the test's index is wrong")
	}
	b.WaitText(status, resultsSaid(len(want)))
	for _, q := range api.asked()[asked:] {
		if strings.TrimSpace(q) == "" {
			t.Errorf("the box asked a blank query: %q", api.asked())
		}
	}
	if got := shownResults(b); !equalJSON(got, want) {
		t.Errorf("shown for yarn:\n%+v\nwant the store's\n%+v", got, want)
	}

	// Enter follows the active result to its section, on this site.
	press("down", kb.ArrowDown)
	press("enter", kb.Enter)
	path := strings.TrimPrefix(strings.SplitN(want[0].Href, "#", 2)[0], site.URL)
	b.Do("waiting for the result's page", chromedp.WaitVisible(chromedp.CSS(`main[data-path="`+path+`"]`)))
	if got := servertest.Eval[string](b, `location.href`); got != want[0].Href {
		t.Errorf("Enter opened %s, want %s", got, want[0].Href)
	}

	// The opening counts as the search's click, in the export.
	e.AddKey("gamma", server.KeyParams{Projects: []string{"gamma"}, Scopes: []store.Scope{store.ScopeRead}})
	c, err := docsapi.NewClient(e.Keys["gamma"], docsapi.WithBaseURL(apiURL))
	if err != nil {
		t.Fatal(err)
	}
	exported := func() map[string]docsapi.Search {
		t.Helper()
		page, err := c.Analytics.Searches(t.Context(), "gamma", docsapi.SearchesParams{})
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]docsapi.Search{}
		for _, s := range page.Searches {
			rows[s.Query] = s
		}
		return rows
	}
	// The click is sent as the page is left: waited for, a minute at most.
	for deadline := time.Now().Add(time.Minute); exported()["yarn"].CTR == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	if r := exported()["yarn"]; r.Hits != 1 || r.CTR != 1 || r.TopClickedPage != path {
		t.Errorf("after opening a result of yarn, the export says %+v, want 1 hit, clicked, top page %s", r, path)
	}

	// A title that is markup is text, and makes no element.
	b.Open("/", input)
	b.Do("typing zebra", chromedp.SendKeys(chromedp.CSS(input), "zebra"))
	b.WaitText(status, resultsSaid(1))
	if got := shownResults(b); len(got) != 1 || got[0].Title != xssTitle {
		t.Errorf("the markup title shows as %+v, want its text %q", got, xssTitle)
	}
	if n := servertest.Eval[int](b, `document.querySelectorAll(".docsapi-search img, .docsapi-search b, .docsapi-search script").length`); n != 0 || b.Text("title") != "Docs" {
		t.Errorf("a result's text made %d elements, title %q", n, b.Text("title"))
	}

	// A result followed with the mouse: its link, and the click counted.
	b.Do("clicking the result", chromedp.Click(chromedp.CSS(`.docsapi-results [role=option] a`)),
		chromedp.WaitVisible(chromedp.CSS(`main[data-path="/zebra"]`)))
	for deadline := time.Now().Add(time.Minute); exported()["zebra"].CTR == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	if r := exported()["zebra"]; r.CTR != 1 || r.TopClickedPage != "/zebra" {
		t.Errorf("after clicking the result of zebra, the export says %+v, want it clicked, top page /zebra", r)
	}

	// The searches count in the export.
	rows := exported()
	for _, q := range []string{"install", "yarn", "zebra"} {
		if rows[q].Hits != 1 {
			t.Errorf("the searches export counts %q %d times, want 1 (export: %v)", q, rows[q].Hits, rows)
		}
	}

	// A page of an origin the key does not allow: the browser's preflight
	// is refused, the box says search is not available, the page is whole.
	other := httptest.NewServer(host)
	t.Cleanup(other.Close)
	b.Base = other.URL
	b.Open("/elsewhere", input)
	servertest.Eval[any](b, `window.errors = []; addEventListener("error", e => errors.push(String(e.message)));
		addEventListener("unhandledrejection", e => errors.push(String(e.reason))); null`)
	asked = len(api.asked())
	b.Do("typing on another origin", chromedp.SendKeys(chromedp.CSS(input), "install"))
	b.WaitText(status, "Search is not available on this page.")
	if api.refused.Load() == 0 || len(api.asked()) != asked {
		t.Errorf("%d preflights refused and %d searches reached the server, want the preflight refused and none", api.refused.Load(), len(api.asked())-asked)
	}
	if errs := servertest.Eval[[]string](b, `errors`); len(errs) != 0 || b.Text("#below") != "Text under the search box." || b.Present("[role=option]") {
		t.Errorf("the refused page: errors %q, or its text or options wrong", errs)
	}

	if n := violations.Load(); n != 0 {
		t.Errorf("the host page's Content-Security-Policy reported %d violations", n)
	}
}

// equalJSON compares two values by their JSON.
func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// resultsSaid is what the box's status says of n results.
func resultsSaid(n int) string {
	if n == 1 {
		return "1 result."
	}
	return fmt.Sprintf("%d results.", n)
}
