package docsapi

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
	"golang.org/x/time/rate"
)

// Identifiers in the redaction tests start with "rd".

// keySecret is the part of testKey that identifies it; "mint_" alone is the
// public key-type prefix the redacted form keeps on purpose.
var keySecret = strings.TrimPrefix(testKey, "mint_")

// leakedPart reports the first form of the key found in s: the secret part or
// any 8-byte window of it, raw or hex-encoded (as %x would print it).
func leakedPart(s string) (string, bool) {
	if strings.Contains(s, testKey) {
		return testKey, true
	}
	for i := 0; i+8 <= len(keySecret); i++ {
		w := keySecret[i : i+8]
		for _, form := range []string{w, hex.EncodeToString([]byte(w)), strings.ToUpper(hex.EncodeToString([]byte(w)))} {
			if strings.Contains(s, form) {
				return form, true
			}
		}
	}
	return "", false
}

func checkNoLeak(t *testing.T, where, s string) {
	t.Helper()
	if form, ok := leakedPart(s); ok {
		t.Errorf("%s contains the key (%q)", where, form)
	}
}

// syncBuffer is a goroutine-safe log destination.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// teeHandler sends every record to several handlers.
type teeHandler []slog.Handler

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range t {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			errs = append(errs, h.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}

// printingLogger logs everything, at Debug and up, as JSON and as text into one
// buffer.
func printingLogger() (*slog.Logger, *syncBuffer) {
	buf := new(syncBuffer)
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	return slog.New(teeHandler{slog.NewJSONHandler(buf, opts), slog.NewTextHandler(buf, opts)}), buf
}

var printVerbs = []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"}

// checkPrintedNoLeak prints v with each verb, and through both slog handlers.
func checkPrintedNoLeak(t *testing.T, name string, v any, verbs ...string) {
	t.Helper()
	for _, verb := range verbs {
		checkNoLeak(t, fmt.Sprintf("%s printed with %s", name, verb), fmt.Sprintf(verb, v))
	}
	logger, buf := printingLogger()
	logger.Info("value", slog.Any("v", v))
	checkNoLeak(t, name+" logged with slog.Any", buf.String())
}

func TestRedactedFormOfTheKey(t *testing.T) {
	tests := []struct {
		key, want string
	}{
		{testKey, "mint_[REDACTED]"},
		{"mint_dsc_abcdef", "mint_[REDACTED]"},
		{"12345678_abcdef", "12345678_[REDACTED]"},
		{"123456789_abcdef", "[REDACTED]"},
		{"_abcdef", "[REDACTED]"},
		{"abcdef", "[REDACTED]"},
		{"", "[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.want+" for "+tt.key, func(t *testing.T) {
			s := secret{value: tt.key}
			for _, verb := range []string{"%v", "%+v", "%s", "%q", "%x", "%X", "%d", "%10s"} {
				if got := fmt.Sprintf(verb, s); got != tt.want {
					t.Errorf("Sprintf(%q) = %q, want %q", verb, got, tt.want)
				}
			}
			if got, want := fmt.Sprintf("%#v", s), `"`+tt.want+`"`; got != want {
				t.Errorf("Sprintf(%%#v) = %q, want %q", got, want)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			b, err := json.Marshal(s)
			if err != nil || string(b) != `"`+tt.want+`"` {
				t.Errorf("json.Marshal = %s, %v; want %q", b, err, tt.want)
			}
			if got := s.LogValue().String(); got != tt.want {
				t.Errorf("LogValue() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactionPrintedClient(t *testing.T) {
	c, _ := newTestClient(t)
	if got, want := fmt.Sprint(c), "docsapi.Client{baseURL: https://api.example.test, key: mint_[REDACTED]}"; got != want {
		t.Errorf("fmt.Sprint(c) = %q, want %q", got, want)
	}
	values := map[string]any{
		"*Client":            c,
		"*AgentJobsService":  c.AgentJobs,
		"AgentJobsService":   *c.AgentJobs,
		"*AnalyticsService":  c.Analytics,
		"AnalyticsService":   *c.Analytics,
		"the key's holder":   c.cfg.key,
		"a slice of clients": []*Client{c},
	}
	for name, v := range values {
		checkPrintedNoLeak(t, name, v, printVerbs...)
	}
	// %s and %q of a Client value are covered by the skipped test below.
	checkPrintedNoLeak(t, "Client", *c, "%v", "%+v", "%#v", "%x", "%X", "%d")
	logger, buf := printingLogger()
	logger.Debug("client", slog.Any("client", c), slog.Any("value", *c), slog.Any("key", c.cfg.key))
	out := buf.String()
	checkNoLeak(t, "slog.Any(client)", out)
	if !strings.Contains(out, `"key":"mint_[REDACTED]"`) || !strings.Contains(out, "key=mint_[REDACTED]") {
		t.Errorf("the key's holder was not logged in its redacted form by both handlers:\n%s", out)
	}
}

// fmt answers a verb that does not fit a pointer (%s, %q, %t, ...) by
// printing the pointer's target with %v at depth 0, where it walks into
// unexported fields without calling any method. Client.cfg is such a
// pointer, and config holds the key's holder by value.
func TestRedactionClientValueWithAnyVerb(t *testing.T) {
	c, _ := newTestClient(t)
	type app struct {
		Name string
		API  Client
	}
	values := map[string]any{
		"Client":                  *c,
		"a map of Client values":  map[string]Client{"c": *c},
		"a struct holding Client": app{Name: "a", API: *c},
	}
	for name, v := range values {
		checkPrintedNoLeak(t, name, v, printVerbs...)
		checkPrintedNoLeak(t, name, v, "%t", "%e", "%10s")
	}
}

// runLeakScenario drives every operation through successes, retries, each class
// of API error, transport errors, validation errors, waits and the rate
// limiter, and returns the errors it saw.
func runLeakScenario(t *testing.T, c *Client, mt *httpmock.MockTransport) []error {
	t.Helper()
	jobURL := func(id string) string { return jobsURL + "/" + id }
	job := func(id, status string) string {
		return strings.NewReplacer(`"j1"`, `"`+id+`"`, `"active"`, `"`+status+`"`).Replace(jobJSONJ1)
	}
	mt.RegisterResponder(http.MethodGet, jobURL("j1"), inTurn(
		replyJSON(503, maintenanceJSON).HeaderSet(http.Header{"X-Request-Id": {"rq-1"}}),
		httpmock.NewErrorResponder(errConnReset),
		replyJSON(200, jobJSONJ1),
	))
	mt.RegisterResponder(http.MethodGet, jobURL("j400"), replyJSON(400, string(fixture(t, "error_details.json"))))
	mt.RegisterResponder(http.MethodGet, jobURL("j401"), replyJSON(401, `{"error":"Invalid or expired API key"}`))
	mt.RegisterResponder(http.MethodGet, jobURL("j403"), replyJSON(403, `{"error":"Missing scope read"}`))
	mt.RegisterResponder(http.MethodGet, jobURL("j404"), replyJSON(404, `{"error":"Job not found"}`).HeaderSet(http.Header{"Request-Id": {"rq-404"}}))
	mt.RegisterResponder(http.MethodGet, jobURL("j409"), replyJSON(409, `{"error":"conflict"}`))
	mt.RegisterResponder(http.MethodGet, jobURL("j429"), replyJSON(429, `{"error":"rate limit exceeded"}`).HeaderSet(http.Header{"Retry-After": {"3600"}}))
	mt.RegisterResponder(http.MethodGet, jobURL("j502"), httpmock.NewStringResponder(502, string(fixture(t, "error_proxy.html"))).
		HeaderSet(http.Header{"Content-Type": {"text/html"}}))
	mt.RegisterResponder(http.MethodGet, jobURL("jtext"), httpmock.NewStringResponder(200, "<html>login</html>"))
	mt.RegisterResponder(http.MethodGet, jobURL("jactive"), replyJSON(200, job("jactive", "active")))
	mt.RegisterResponder(http.MethodGet, jobURL("jdown"), replyJSON(503, maintenanceJSON))
	mt.RegisterResponder(http.MethodGet, jobURL("jfailed"), replyJSON(200, job("jfailed", "failed")))
	mt.RegisterResponder(http.MethodPost, jobsURL, inTurn(
		replyJSON(500, maintenanceJSON),
		replyJSON(429, `{"error":"rate limit exceeded"}`),
		replyJSON(201, job("jfailed", "active")),
	))
	mt.RegisterResponder(http.MethodPost, messageURLJ1, inTurn(httpmock.NewErrorResponder(io.ErrUnexpectedEOF), replyJSON(200, jobJSONJ1)))
	mt.RegisterResponder(http.MethodGet, viewsURL, inTurn(
		replyJSON(400, string(fixture(t, "error_details.json"))),
		replyJSON(200, strings.Replace(viewsJSON, `"hasMore":false`, `"hasMore":true`, 1)),
		replyJSON(200, viewsJSON),
	))

	ctx := context.Background()
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	get := func(id string, opts ...RequestOption) {
		_, err := c.AgentJobs.Get(ctx, "", id, opts...)
		keep(err)
	}
	var resp Response
	get("j1", WithResponse(&resp), WithHeader("X-Trace", "t1"))
	for _, id := range []string{"j400", "j401", "j403", "j404", "j409", "j429", "j502", "jtext", "jdown", "missing"} {
		get(id)
	}
	// Invalid arguments, some of which carry the key as a value.
	get("")
	get("j1", WithHeader("Authorization", "Bearer "+testKey))
	get("j1", WithHeader("X-Key", testKey+"\r\nX-Evil: 1"))
	get("j1", WithIdempotencyKey(testKey+"\n"))
	_, err := c.AgentJobs.Create(ctx, "", CreateJobParams{Prompt: ""})
	keep(err)
	_, err = c.Analytics.Views(ctx, "", ViewsParams{Limit: 999})
	keep(err)
	_, err = c.AgentJobs.Wait(ctx, "", "j1", WaitParams{MinInterval: -1})
	keep(err)

	_, err = c.AgentJobs.Create(ctx, "", CreateJobParams{Prompt: promptV2}) // 500, not retried
	keep(err)
	_, err = c.AgentJobs.CreateAndWait(ctx, "", CreateJobParams{Prompt: promptV2}, WaitParams{MinInterval: time.Second},
		WithIdempotencyKey("idem-1")) // 429, then created; the job then fails
	keep(err)
	_, err = c.AgentJobs.SendMessage(ctx, "", "j1", SendMessageParams{Prompt: promptV2}, WithIdempotencyKey("idem-2"))
	keep(err)
	_, err = c.Analytics.Views(ctx, "", ViewsParams{DateFrom: Day(2026, time.January, 1), Limit: 1})
	keep(err)
	_, err = Collect(c.Analytics.AllViews(ctx, "", ViewsParams{Limit: 1}))
	keep(err)
	_, err = c.AgentJobs.Wait(ctx, "", "jactive", WaitParams{MinInterval: time.Second, MaxInterval: 2 * time.Second, Timeout: 5 * time.Second})
	keep(err)
	_, err = c.AgentJobs.Wait(ctx, "", "jdown", WaitParams{MinInterval: time.Second, Timeout: 10 * time.Second})
	keep(err)
	_, err = c.AgentJobs.Wait(ctx, "", "jfailed", WaitParams{})
	keep(err)
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(5*time.Millisecond, cancel)
	_, err = c.AgentJobs.Get(cctx, "", "jdown")
	keep(err)
	cancel()
	return errs
}

func TestRedactionKeyNeverLeaks(t *testing.T) {
	logger, buf := printingLogger()
	var errs []error
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(rate.Every(100*time.Millisecond), 2)
		c, mt := newTestClient(t, WithLogger(logger), WithRateLimiter(lim), WithRetryDelays(10*time.Millisecond, 100*time.Millisecond))
		errs = append(errs, runLeakScenario(t, c, mt)...)
	})

	// Real sockets, outside the bubble: a refused connection, and a
	// redirect to another host that reports every header it received.
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		r.Header.Write(&b)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, b.String())
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	for _, base := range []string{closedURL, api.URL} {
		c, err := NewClient(testKey, WithBaseURL(base), WithProjectID("proj"), WithLogger(logger),
			WithMaxRetries(1), WithRetryDelays(time.Nanosecond, time.Nanosecond))
		if err != nil {
			t.Fatal(err)
		}
		c.cfg.jitter = func() float64 { return 0 }
		_, err = c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2})
		errs = append(errs, err)
		_, err = c.AgentJobs.Get(context.Background(), "", "j1")
		errs = append(errs, err)
	}
	// Failures of NewClient itself.
	for _, opts := range [][]Option{
		{WithBaseURL("https://user:" + testKey + "@api.example.test")},
		{WithBaseURL("ftp://api.example.test")},
		{WithProjectID("..")},
	} {
		_, err := NewClient(testKey, opts...)
		errs = append(errs, err)
	}
	_, err := NewClient(testKey + " trailing")
	errs = append(errs, err)

	// Guard against a vacuous pass: the scenario must have produced each
	// kind of output the checks below read.
	out := buf.String()
	for _, want := range []string{"docsapi: request", "docsapi: retrying request", "docsapi: job poll failed; polling on", `"level":"DEBUG"`, "level=INFO"} {
		if !strings.Contains(out, want) {
			t.Errorf("log output lacks %q", want)
		}
	}
	kinds := map[string]bool{}
	for i, err := range errs {
		if err == nil {
			t.Errorf("scenario error %d is nil", i)
			continue
		}
		var apiErr *APIError
		var verr *ValidationError
		var wte *WaitTimeoutError
		var jfe *JobFailedError
		if errors.As(err, &wte) {
			kinds["wait timeout"] = true
		}
		if errors.As(err, &jfe) {
			kinds["job failed"] = true
		}
		if errors.As(err, &verr) {
			kinds["validation"] = true
		}
		if errors.Is(err, context.Canceled) {
			kinds["canceled"] = true
		}
		if errors.As(err, &apiErr) {
			kinds[fmt.Sprintf("%dxx", apiErr.StatusCode/100)] = true
			checkPrintedNoLeak(t, fmt.Sprintf("APIError %d", apiErr.StatusCode), apiErr, printVerbs...)
			checkPrintedNoLeak(t, fmt.Sprintf("APIError %d (value)", apiErr.StatusCode), *apiErr, printVerbs...)
		}
		if wte == nil && jfe == nil && verr == nil && apiErr == nil {
			kinds["other"] = true // transport, decoding
		}
		checkPrintedNoLeak(t, fmt.Sprintf("error %d (%T)", i, err), err, printVerbs...)
	}
	var gotKinds []string
	for k := range kinds {
		gotKinds = append(gotKinds, k)
	}
	sort.Strings(gotKinds)
	if want := "4xx 5xx canceled job failed other validation wait timeout"; strings.Join(gotKinds, " ") != want {
		t.Errorf("error kinds covered = %q, want %q", strings.Join(gotKinds, " "), want)
	}
	checkNoLeak(t, "log output", out)
}

// Proxies and some servers answer a bad key by quoting it ("invalid API key
// mint_..."). The client knows its key and can take it out of what it hands
// on, so even then no error string or log line carries it.
func TestRedactionKeyEchoedByTheServerIsScrubbed(t *testing.T) {
	logger, buf := printingLogger()
	c, mt := newTestClient(t, WithLogger(logger))
	mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(401, `{"error":"Invalid API key `+testKey+`"}`))
	_, err := c.AgentJobs.Get(context.Background(), "", "j1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Fatalf("err = %v, want a 401 *APIError", err)
	}
	checkPrintedNoLeak(t, "the 401 error", err, printVerbs...)
	checkNoLeak(t, "APIError.Body", apiErr.Body)
	checkNoLeak(t, "log output", buf.String())
}

// A base URL can carry a token in its query string by mistake; the options
// that refuse such a URL should not repeat it in their error.
func TestRedactionBaseURLErrorsDoNotRepeatTheKey(t *testing.T) {
	for _, base := range []string{
		"https://api.example.test/?key=" + testKey,
		"https://api.example.test/#" + testKey,
		"https://api.example.test/%zz?key=" + testKey,
	} {
		_, err := NewClient(testKey, WithBaseURL(base))
		if err == nil {
			t.Fatalf("WithBaseURL(%q) accepted", base)
		}
		checkNoLeak(t, "WithBaseURL error", err.Error())
	}
}
