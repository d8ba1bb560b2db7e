package site_test

import (
	"bufio"
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

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/agent/llm/llmtest"
	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// askBody is a request to the assistant endpoint as the server gets it.
type askBody struct {
	Fp                string `json:"fp"`
	ThreadID          string `json:"threadId"`
	ThreadKey         string `json:"threadKey"`
	CurrentPath       string `json:"currentPath"`
	RetrievalPageSize int    `json:"retrievalPageSize"`
	Messages          []struct {
		ID    string `json:"id"`
		Role  string `json:"role"`
		Parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"messages"`
}

// question is the text of the body's last message.
func (b askBody) question() string {
	if len(b.Messages) == 0 || len(b.Messages[len(b.Messages)-1].Parts) == 0 {
		return ""
	}
	return b.Messages[len(b.Messages)-1].Parts[0].Text
}

// asked is one request to the assistant endpoint and what the server
// answered.
type asked struct {
	Body                askBody
	Status              int
	ThreadID, ThreadKey string // the answer's headers
	Stream              string // the answer's body, as far as it went
}

// askAPI is the server as the Ask panel's tests see it: every request to
// the assistant endpoint recorded with its answer, and the next answer
// cut (the connection dropped) after its first text delta, when the
// test says.
type askAPI struct {
	handler http.Handler
	mu      sync.Mutex
	asks    []asked
	cut     chan struct{} // closed to cut the next answer; nil: none
}

// cutNext makes the next answer stop after its first text delta, until
// cut is called, which drops the connection.
func (a *askAPI) cutNext(t *testing.T) (cut func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := make(chan struct{})
	a.cut = c
	cut = sync.OnceFunc(func() { close(c) })
	t.Cleanup(cut)
	return cut
}

func (a *askAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, "/discovery/v2/assistant/") {
		a.handler.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := asked{}
	json.Unmarshal(body, &rec.Body)
	a.mu.Lock()
	tw := &teeWriter{ResponseWriter: w, cut: a.cut}
	a.cut = nil
	a.mu.Unlock()
	// Recorded even when the answer is cut, which ends the handler by a
	// panic.
	defer func() {
		rec.Status, rec.Stream = tw.status, tw.buf.String()
		rec.ThreadID, rec.ThreadKey = w.Header().Get("X-Thread-Id"), w.Header().Get("X-Thread-Key")
		a.mu.Lock()
		a.asks = append(a.asks, rec)
		a.mu.Unlock()
	}()
	a.handler.ServeHTTP(tw, r)
}

// requests returns the requests to the assistant endpoint so far.
func (a *askAPI) requests() []asked {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asks)
}

// last returns the last request to the assistant endpoint.
func (a *askAPI) last(t *testing.T) asked {
	t.Helper()
	r := a.requests()
	if len(r) == 0 {
		t.Fatal("the assistant endpoint was asked nothing")
	}
	return r[len(r)-1]
}

// teeWriter keeps what it writes; with cut, once a text delta has gone
// out, it waits for cut to close and drops the connection, as a network
// that fails mid-answer.
type teeWriter struct {
	http.ResponseWriter
	buf    bytes.Buffer
	status int
	cut    chan struct{}
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.buf.Write(b)
	n, err := w.ResponseWriter.Write(b)
	if w.cut != nil && strings.Contains(w.buf.String(), `"type":"text-delta"`) {
		http.NewResponseController(w.ResponseWriter).Flush()
		<-w.cut
		panic(http.ErrAbortHandler) // net/http drops the connection
	}
	return n, err
}

func (w *teeWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// streamEvents parses an SSE stream into its events' data.
func streamEvents(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// source is one source of an answer, as the search tool's output lists it.
type source struct {
	Path     string `json:"path"`
	Metadata struct {
		Title   string `json:"title"`
		Heading string `json:"heading"`
		Href    string `json:"href"`
	} `json:"metadata"`
}

// streamSources returns the sources the stream s lists, from its search
// tool call's output.
func streamSources(t *testing.T, s string) []source {
	t.Helper()
	var out []source
	for _, d := range streamEvents(s) {
		var ev struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal([]byte(d), &ev) == nil && ev.Type == "tool-output-available" {
			if err := json.Unmarshal(ev.Output, &out); err != nil {
				t.Fatalf("the search tool's output %s: %v", ev.Output, err)
			}
		}
	}
	return out
}

// shownSource is a source as the panel shows it: its text and, if a
// link, its href.
type shownSource struct{ Text, Href string }

// shownSources reads the sources of the panel's last answer.
func shownSources(b *servertest.Tab) []shownSource {
	b.T.Helper()
	return servertest.Eval[[]shownSource](b, `Array.from(document.querySelectorAll(".docsapi-ask-exchange:last-child .docsapi-ask-sources li")).map(li => ({
		Text: li.textContent, Href: li.querySelector("a")?.href ?? "" }))`)
}

// wantSources is what the panel should show of sources on a page of
// origin: each section once (two of a page under one heading once), its
// page's title and its heading, linked to its href, or its page's path.
func wantSources(origin string, sources []source) []shownSource {
	out := []shownSource{}
	seen := map[string]bool{}
	for _, s := range sources {
		href := s.Metadata.Href
		if href == "" {
			href = s.Path
		}
		page, _, _ := strings.Cut(href, "#")
		if seen[page+"\n"+s.Metadata.Heading] {
			continue
		}
		seen[page+"\n"+s.Metadata.Heading] = true
		title := s.Metadata.Title
		if title == "" {
			title = s.Path
		}
		if s.Metadata.Heading != "" && s.Metadata.Heading != s.Metadata.Title {
			title += " › " + s.Metadata.Heading
		}
		out = append(out, shownSource{Text: title, Href: origin + href})
	}
	return out
}

// askPage is the host page of the panel's tests: a strict
// Content-Security-Policy (no inline script or style), the panel in
// #docsapi-ask, the feedback widget off.
func askPage(apiURL string, key *string, violations *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		apiOrigin := apiURL[:strings.Index(apiURL, "/api")]
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src "+apiOrigin+"; style-src 'self' "+apiOrigin+
			"; connect-src "+apiOrigin+"; base-uri 'none'; form-action 'none'; report-uri /csp-report")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Docs</title><link rel="stylesheet" href="/host.css"></head>
<body><main data-path="%[1]s"><h1>%[1]s</h1><p>Some documentation.</p><div id="docsapi-ask"></div>
<p id="below">Text under the panel.</p></main>
<script src="%[2]s/v1/site/gamma/docsapi.js" data-search-key="%[3]s" data-domain="gamma-docs" data-ask="on" data-widget="off" defer></script></body></html>`,
			r.URL.Path, apiURL, *key)
	})
}

// The panel's elements.
const (
	askInput  = `.docsapi-ask input`
	askSend   = `.docsapi-ask .docsapi-ask-send`
	askStop   = `.docsapi-ask .docsapi-ask-stop`
	askLog    = `.docsapi-ask [role="log"]`
	askAnswer = `.docsapi-ask-exchange:last-child .docsapi-ask-answer`
	askError  = `.docsapi-ask-exchange:last-child .docsapi-ask-error`
)

// askQuestion types q into the panel and sends it with Enter.
func askQuestion(b *servertest.Tab, q string) {
	b.T.Helper()
	b.Do("asking "+q, chromedp.Click(chromedp.CSS(askInput)), chromedp.SendKeys(chromedp.CSS(askInput), q), chromedp.KeyEvent(kb.Enter))
}

// waitIdle waits until the panel's answer has ended (its Stop button
// gone, the log no longer busy).
func waitIdle(b *servertest.Tab) {
	b.T.Helper()
	b.Do("waiting for the answer to end", chromedp.Poll[chromedp.Void](
		`document.querySelector("`+askStop+`").hidden && !document.querySelector(`+"`"+askLog+"`"+`).hasAttribute("aria-busy")`))
}

// newAskKey makes an assistant key of gamma for origin.
func newAskKey(t *testing.T, e *servertest.Env, origin string) string {
	t.Helper()
	k, err := e.Server.CreateAssistantKey(t.Context(), server.AssistantKeyParams{Project: "gamma", Name: "site", Origins: []string{origin}})
	if err != nil {
		t.Fatal(err)
	}
	return k.Secret
}

// askSite is a host page of the panel on a server of its own, with an
// assistant key of gamma for its origin, and the API behind api.
func askSite(t *testing.T, e *servertest.Env, api *askAPI) (site *httptest.Server, key string, violations *atomic.Int64) {
	t.Helper()
	apiServer := httptest.NewServer(api)
	t.Cleanup(apiServer.Close)
	var pageKey string
	violations = new(atomic.Int64)
	site = httptest.NewServer(askPage(apiServer.URL+"/api", &pageKey, violations))
	t.Cleanup(site.Close)
	pageKey = newAskKey(t, e, site.URL)
	return site, pageKey, violations
}

// held scripts a reply of the fake model that waits after its first delta
// until release is called (at the test's end at the latest).
func held(t *testing.T, deltas ...string) (llmtest.Reply, func()) {
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	return llmtest.Reply{Deltas: deltas, Hold: hold}, release
}

// The widget's "Ask" panel in a real browser, against the server's
// assistant endpoint and a fake model, on a host page whose
// Content-Security-Policy forbids inline styles and scripts: a reader
// asks, the panel posts the question with the site's assistant key and
// renders the answer as it streams (the first delta shown while the model
// holds back the rest), with the search's sources as links to this site;
// a follow-up continues the thread with its ID and key; markup in an
// answer is text; a model's stream that is cut, a connection dropped
// mid-answer and an answer stopped by the reader end with a line saying
// so; "New conversation" forgets the thread.
func TestAskPanelInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	evil, err := docs.Read(fstest.MapFS{"zebra.md": {Data: []byte("---\ntitle: '" + xssTitle + "'\n---\n\nZebra crossings, <b>bold</b> claims.\n")}},
		docs.Options{ProjectID: servertest.AssistantProject})
	if err != nil {
		t.Fatal(err)
	}
	e := servertest.NewAssistant(t, llm.OpenAI, evil.Pages)
	api := &askAPI{handler: http.StripPrefix("/api", e.Handler)}
	site, _, violations := askSite(t, e.Env, api)

	b := servertest.NewTab(t, browser, site.URL)
	b.Do("a light theme", colorScheme("light"))
	b.Open("/guide", askInput)

	// The panel's landmark, label, live region and buttons.
	if got := servertest.Eval[string](b, `(() => { const i = document.querySelector("`+askInput+`"), log = document.querySelector(`+"`"+askLog+"`"+`);
		const p = i.closest("section");
		return [p.getAttribute("aria-labelledby") === document.querySelector(".docsapi-ask h2").id, i.labels.length === 1 && i.labels[0].textContent,
			log.getAttribute("aria-live"), document.querySelector("`+askSend+`").textContent,
			document.querySelector("`+askStop+`").hidden].join(" ") })()`); got != "true Your question polite Ask true" {
		t.Errorf("the panel's roles and labels: %s", got)
	}

	// A question: the first delta shows while the model holds back the
	// rest.
	reply, release := held(t, "To install it, run ", "`npm install docsapi`", " and read the quickstart.\n\nThen configure it.")
	e.Model.Script(reply)
	askQuestion(b, "How do I install it?")
	b.WaitText(askAnswer, "To install it, run ")
	if got := servertest.Eval[string](b, `[document.querySelector("`+askStop+`").hidden, document.querySelector(`+"`"+askLog+"`"+`).getAttribute("aria-busy"),
		document.querySelector("`+askSend+`").disabled].join(" ")`); got != "false true true" {
		t.Errorf("while the answer streams, Stop hidden, log busy, Ask disabled: %s, want false true true", got)
	}
	release()
	waitIdle(b)
	first := api.last(t)
	if got := b.Text(askAnswer); got != "To install it, run npm install docsapi and read the quickstart.Then configure it." {
		t.Errorf("the answer says %q", got)
	}
	if got := servertest.Eval[string](b, `Array.from(document.querySelector("`+askAnswer+`").children).map(c => c.tagName + ":" + c.textContent).join("|") + " " +
		Array.from(document.querySelectorAll("`+askAnswer+` code")).map(c => c.textContent).join("|")`); got != "P:To install it, run npm install docsapi and read the quickstart.|P:Then configure it. npm install docsapi" {
		t.Errorf("the answer's paragraphs and code: %s", got)
	}
	if first.Status != http.StatusOK || first.Body.Fp != "anonymous" || first.Body.ThreadID != "" || first.Body.ThreadKey != "" ||
		first.Body.CurrentPath != "/guide" || first.Body.RetrievalPageSize != 5 || len(first.Body.Messages) != 1 ||
		first.Body.Messages[0].Role != "user" || first.Body.question() != "How do I install it?" || first.ThreadID == "" || first.ThreadKey == "" {
		t.Errorf("the first request and its answer: %+v", first)
	}
	if q := e.Model.Requests(); len(q) != 1 || !strings.Contains(q[0].Messages()[len(q[0].Messages())-1].Content, "How do I install it?") {
		t.Errorf("the model was asked %+v, want the question once", q)
	}
	want := wantSources(site.URL, streamSources(t, first.Stream))
	if len(want) == 0 {
		t.Fatal("the answer lists no sources: the test's index or question is wrong")
	}
	if got := shownSources(b); !equalJSON(got, want) {
		t.Errorf("sources shown:\n%+v\nwant the stream's\n%+v", got, want)
	}
	b.ScreenshotBoth("01-answer")

	// A follow-up continues the thread: its ID and key go with it, and
	// the server answers in that thread.
	e.Model.Script(llmtest.Reply{Deltas: []string{"Yes, ", "with npm too."}})
	askQuestion(b, "And with npm?")
	waitIdle(b)
	follow := api.last(t)
	if follow.Status != http.StatusOK || follow.Body.ThreadID != first.ThreadID || follow.Body.ThreadKey != first.ThreadKey ||
		follow.Body.question() != "And with npm?" || follow.ThreadID != "" {
		t.Errorf("the follow-up: status %d, thread %q key %q question %q, new thread %q; want the thread %q and key %q", follow.Status,
			follow.Body.ThreadID, follow.Body.ThreadKey, follow.Body.question(), follow.ThreadID, first.ThreadID, first.ThreadKey)
	}
	if got := b.Text(askAnswer); got != "Yes, with npm too." {
		t.Errorf("the follow-up's answer says %q", got)
	}
	if n := servertest.Eval[int](b, `document.querySelectorAll(".docsapi-ask-exchange").length`); n != 2 {
		t.Errorf("%d exchanges shown, want 2", n)
	}
	if th, err := e.Store.Thread(t.Context(), servertest.AssistantProject, first.ThreadID); err != nil || th.Exchanges != 2 {
		t.Errorf("the thread stored: %+v, %v; want its 2 exchanges", th, err)
	}

	// An answer that is markup is text, and makes no element; so is a
	// source's title.
	hostile := `Try <img src=x onerror="document.title='owned'"> and <script>document.title='owned'</script>.`
	e.Model.Script(llmtest.Reply{Deltas: []string{hostile[:20], hostile[20:]}})
	askQuestion(b, "zebra crossings")
	waitIdle(b)
	if got := b.Text(askAnswer); got != hostile {
		t.Errorf("the hostile answer shows as %q, want its text", got)
	}
	if n := servertest.Eval[int](b, `document.querySelectorAll(".docsapi-ask img, .docsapi-ask script, .docsapi-ask b").length`); n != 0 || b.Text("title") != "Docs" {
		t.Errorf("the answer made %d elements, title %q", n, b.Text("title"))
	}
	if got := shownSources(b); !slices.ContainsFunc(got, func(s shownSource) bool { return s.Text == xssTitle }) {
		t.Errorf("sources %+v, want the page titled %q among them, as text", got, xssTitle)
	}

	// The model's stream is cut: the partial answer stays, and the
	// server's error event shows.
	e.Model.Script(llmtest.Reply{Deltas: []string{"Partly "}, Cut: true})
	askQuestion(b, "install with yarn")
	waitIdle(b)
	if got := b.Text(askAnswer) + "|" + b.Text(askError); !strings.HasPrefix(got, "Partly|") || len(got) <= len("Partly|") ||
		!strings.Contains(api.last(t).Stream, `"type":"error"`) {
		t.Errorf("a cut model stream shows %q, want the partial answer and the server's error", got)
	}

	// The connection drops mid-answer.
	cut := api.cutNext(t)
	e.Model.Script(llmtest.Reply{Deltas: []string{"Cut ", "short."}})
	askQuestion(b, "npm install")
	b.WaitText(askAnswer, "Cut ")
	cut()
	waitIdle(b)
	if got := b.Text(askAnswer) + "|" + b.Text(askError); got != "Cut|The answer was cut off. Try asking again." {
		t.Errorf("a dropped connection shows %q", got)
	}

	// The reader stops an answer from the keyboard: Tab from the input
	// reaches Stop (Ask is disabled), Enter presses it; the focus goes
	// back to the input.
	reply, release = held(t, "Stopping ", "here.")
	e.Model.Script(reply)
	askQuestion(b, "quickstart install")
	b.WaitText(askAnswer, "Stopping ")
	b.Do("Tab to Stop", chromedp.KeyEvent(kb.Tab))
	if got := servertest.Eval[string](b, `document.activeElement.className`); got != "docsapi-ask-stop" {
		t.Fatalf("Tab from the input reached %q, want the Stop button", got)
	}
	b.Do("pressing Stop", chromedp.KeyEvent(kb.Enter))
	waitIdle(b)
	release()
	if got := b.Text(askAnswer) + "|" + b.Text(askError) + "|" + servertest.Eval[string](b, `document.activeElement.matches("`+askInput+`") + ""`); got != "Stopping|Stopped.|true" {
		t.Errorf("a stopped answer shows %q, want its text, Stopped. and the focus in the input", got)
	}
	b.Do("a dark theme", colorScheme("dark"))
	b.ScreenshotBoth("02-conversation-dark")
	b.Do("back to the light theme", colorScheme("light"))

	// "New conversation" forgets the thread: the next question starts one.
	e.Model.Script(llmtest.Reply{Deltas: []string{"A new thread."}})
	b.Do("starting a new conversation", chromedp.Click(chromedp.CSS(`.docsapi-ask-new`)))
	if n := servertest.Eval[int](b, `document.querySelectorAll(".docsapi-ask-exchange").length`); n != 0 {
		t.Errorf("%d exchanges shown after New conversation, want none", n)
	}
	askQuestion(b, "install")
	waitIdle(b)
	if fresh := api.last(t); fresh.Body.ThreadID != "" || fresh.Body.ThreadKey != "" || len(fresh.Body.Messages) != 1 || fresh.ThreadID == "" || fresh.ThreadID == first.ThreadID {
		t.Errorf("after New conversation the request sent thread %q key %q, %d messages, and got thread %q; want a new thread",
			fresh.Body.ThreadID, fresh.Body.ThreadKey, len(fresh.Body.Messages), fresh.ThreadID)
	}
	if got := b.Text(askAnswer); got != "A new thread." {
		t.Errorf("the new thread's answer says %q", got)
	}

	if n := violations.Load(); n != 0 {
		t.Errorf("the host page's Content-Security-Policy reported %d violations", n)
	}
}

// The panel against streams the server never sends, from a recorded
// stream (a test fixture; see recordedAssistant): sources whose links
// are not a site path or an http(s) URL show as text, and a stream that
// ends cleanly without its finish event is an answer cut short.
func TestAskPanelHostileStreamInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	e := newEnv(t)
	indexGamma(t, e)
	model := &recordedAssistant{t: t, e: e}
	api := &askAPI{handler: http.StripPrefix("/api", fixtureRoutes(model, e.Handler))}
	site, key, violations := askSite(t, e.Env, api)
	model.allow(key, site.URL)

	b := servertest.NewTab(t, browser, site.URL)
	b.Open("/guide", askInput)

	model.answerSources([]map[string]any{
		{"path": "/quickstart", "content": "", "metadata": map[string]any{"title": "Quickstart", "href": "/quickstart#install"}},
		{"path": "/x", "content": "", "metadata": map[string]any{"title": "Script link", "href": "javascript:document.title='owned'"}},
		{"path": "/y", "content": "", "metadata": map[string]any{"title": "Data link", "href": "data:text/html,<b>x</b>"}},
		{"path": "relative/page", "content": "", "metadata": map[string]any{"title": "Relative"}},
		{"path": "/z", "content": "", "metadata": map[string]any{"title": "Elsewhere", "href": "https://example.com/page"}},
		{"path": "/quickstart", "content": "", "metadata": map[string]any{"title": "Quickstart", "href": "/quickstart#install-1"}},
	}, "See the sources.")
	askQuestion(b, "Where is it written?")
	waitIdle(b)
	wantShown := []shownSource{{"Quickstart", site.URL + "/quickstart#install"}, {"Script link", ""}, {"Data link", ""}, {"Relative", ""}, {"Elsewhere", "https://example.com/page"}}
	if got := shownSources(b); !equalJSON(got, wantShown) {
		t.Errorf("hostile sources shown as\n%+v\nwant\n%+v", got, wantShown)
	}
	if got := b.Text(askAnswer) + "|" + servertest.Eval[string](b, `document.querySelector("`+askError+`").hidden + ""`); got != "See the sources.|true" {
		t.Errorf("the answer with hostile sources: %q, want its text and no error", got)
	}

	model.answerUnfinished("Unfinished ", "answer")
	askQuestion(b, "What if it just stops?")
	waitIdle(b)
	if got := b.Text(askAnswer) + "|" + b.Text(askError); got != "Unfinished answer|The answer was cut off. Try asking again." {
		t.Errorf("an unfinished stream shows %q", got)
	}

	if n := violations.Load(); n != 0 {
		t.Errorf("the host page's Content-Security-Policy reported %d violations", n)
	}
}
