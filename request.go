package docsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/internal/backoff"
	"github.com/docsapi/docsapi-go/internal/retry"
)

// Response size bounds. A job or a page of 250 views is a few tens of KiB;
// the bounds only stop a misbehaving server or proxy from exhausting memory.
const (
	maxResponseBytes  = 32 << 20
	maxErrorBodyBytes = 64 << 10
)

// RequestOption changes one call. Every operation accepts them.
type RequestOption func(*callConfig)

type callConfig struct {
	idempotencyKey string
	header         http.Header
	response       *Response
	prefetch       int
	err            error
}

// maxPrefetch bounds WithPrefetch: more pages in flight than this only
// spends a rate budget faster, without shortening an export further.
const maxPrefetch = 32

// Response describes the HTTP exchange of one call; see WithResponse.
type Response struct {
	// StatusCode is the status of the last attempt (0 if none answered).
	StatusCode int
	// Header is the last response's header.
	Header http.Header
	// RequestID is the server's request id, when it sent one.
	RequestID string
	// Attempts is how many times the request was sent.
	Attempts int
}

// WithIdempotencyKey sends key in an Idempotency-Key header on a write
// (Create or SendMessage), and lets the client retry that write after errors
// whose outcome is unknown (5xx, a reset connection), as it does for reads.
//
// Only use it with a server that honours the header, such as the self-hosted
// server: the hosted service does not document it, so there a retry after a
// 5xx could start a second job. Use one key per logical operation, for
// example a UUID stored with the work item, so that a retry of your whole
// program also reuses it.
func WithIdempotencyKey(key string) RequestOption {
	return func(c *callConfig) {
		key = strings.TrimSpace(key)
		if key == "" || len(key) > 255 || strings.ContainsAny(key, "\r\n") {
			c.err = invalid("idempotencyKey", "must be 1 to 255 characters on one line")
			return
		}
		c.idempotencyKey = key
	}
}

// WithHeader adds a header to the call's requests. Authorization and
// Idempotency-Key cannot be set this way: use NewClient's key and
// WithIdempotencyKey.
func WithHeader(name, value string) RequestOption {
	return func(c *callConfig) {
		canonical := http.CanonicalHeaderKey(strings.TrimSpace(name))
		switch {
		case canonical == "":
			c.err = invalid("header", "name is empty")
		case canonical == "Authorization" || canonical == "Idempotency-Key":
			c.err = invalid("header", "%s is set by the client, not by WithHeader", canonical)
		case strings.ContainsAny(canonical+value, "\r\n"):
			c.err = invalid("header", "%s contains a line break", canonical)
		default:
			if c.header == nil {
				c.header = make(http.Header)
			}
			c.header.Add(canonical, value)
		}
	}
}

// WithPrefetch makes an offset iterator (AllViews, AllVisitors) keep up to
// n requests in flight, for pages known to exist: rows still come in order,
// and the iterator stops at the last page or the first error, a break or
// the context's end cancelling the requests still in flight. No request is
// ever made for a page past the last one.
//
// Every request counts against the hosted budget, so only pages known to
// exist are requested. The first page is requested alone. A page that says
// more follow vouches for the next one; and AllViews from offset 0 also
// counts the pages its totals prove exist: rows come sorted by total,
// largest first, so the views not yet received, shared among rows of at
// most the last row's total, need at least so many more rows. That bound is
// exact where the totals level out and about half the rows left where they
// fall steadily, so the last pages of an export come fewer at a time. Where
// nothing can be proven (AllVisitors, whose totals are de-duplicated; an
// export from another offset; rows out of order; pages whose totals differ,
// as for a range still being counted) the pages come one after another.
//
// Each request still waits for the client's rate limiter. n from 1 (no
// prefetching, the default) to 32; other calls ignore it, the cursor
// iterators (AllSearches, AllFeedback, AllAssistantConversations) included:
// each of their cursors comes with the page before it, so there is nothing
// to request ahead.
func WithPrefetch(n int) RequestOption {
	return func(c *callConfig) {
		if n < 1 || n > maxPrefetch {
			c.err = invalid("prefetch", "must be from 1 to %d, got %d", maxPrefetch, n)
			return
		}
		c.prefetch = n
	}
}

// WithResponse fills dst with the call's HTTP metadata (status, headers,
// request id, attempts) when the call returns, whether it succeeded or not.
func WithResponse(dst *Response) RequestOption {
	return func(c *callConfig) { c.response = dst }
}

// applyOptions collects a call's options; an invalid one leaves its error
// in err.
func applyOptions(opts []RequestOption) callConfig {
	if len(opts) == 0 {
		// Options are closures, so the config they fill escapes to the
		// heap; most calls have none and need not pay for it.
		return callConfig{}
	}
	call := new(callConfig)
	for _, opt := range opts {
		if opt != nil {
			opt(call)
		}
	}
	return *call
}

// apiRequest is one operation, before the pipeline turns it into attempts.
type apiRequest struct {
	method string
	path   string // escaped, starting with "/"
	query  string // encoded, without "?"
	body   any    // marshalled to JSON when non-nil
	// key is the kind of key the operation needs (the zero value: an
	// admin key); do refuses a client whose key is of another kind.
	key keyKind
	// readOnly marks a POST that only reads (the Assistant API's search
	// and page): a retry cannot do anything twice, so it is retried as a
	// GET is.
	readOnly bool
	// stream, for a call whose answer is a stream (Ask), receives the open
	// 2xx response instead of do reading and decoding its body. Until then
	// the call is like any other: limiter, key check, headers, retries and
	// error decoding. Once a 2xx arrived, nothing is sent again.
	stream streamTaker
	// scrub is a secret of the request's body besides the API key (a
	// thread key), to be removed from error bodies a server echoes it in.
	scrub string
}

// streamTaker takes over the open 2xx response of a streamed call. release
// ends the request's own context; the stream calls it once closed.
type streamTaker interface {
	takeStream(resp *http.Response, release context.CancelFunc)
}

// do runs r: it marshals the body once, then sends attempts until one
// succeeds, an error cannot heal, or retries run out. out receives the
// decoded 2xx body.
func (c *Client) do(ctx context.Context, r apiRequest, opts []RequestOption, out bodyDecoder) error {
	if ctx == nil {
		return invalid("ctx", "is nil")
	}
	if has := kindOf(c.cfg.key.value); has != r.key {
		return wrongKey(r.key, has)
	}
	call := applyOptions(opts)
	if call.err != nil {
		return call.err
	}
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return fmt.Errorf("docsapi: encoding request body: %w", err)
		}
	}
	safety := retry.Replayable
	if r.method != http.MethodGet && r.method != http.MethodHead && !r.readOnly && call.idempotencyKey == "" {
		safety = retry.OnceOnly
	}
	var target string // one concatenation, one string
	if r.query == "" {
		target = c.cfg.baseURL + r.path
	} else {
		target = c.cfg.baseURL + r.path + "?" + r.query
	}

	var lastErr error
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			// Transports differ in whether they notice a dead context before
			// sending; deciding here means none sends on one.
			return stopped(ctx, err, lastErr)
		}
		if lim := c.cfg.limiter; lim != nil {
			if err := lim.Wait(ctx); err != nil {
				if ctx.Err() == nil {
					// The limiter refuses at once when the next token comes
					// after the deadline; say so in the usual way.
					err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
				}
				return stopped(ctx, err, lastErr)
			}
		}
		res := c.send(ctx, r, target, body, &call, attempt)
		if call.response != nil {
			*call.response = res.meta(attempt)
		}
		if res.err == nil && res.apiErr == nil {
			if r.stream != nil {
				r.stream.takeStream(res.resp, res.release)
				return nil
			}
			return c.decode(r, res, out)
		}
		lastErr = res.failure()
		if ctx.Err() != nil {
			return stopped(ctx, ctx.Err(), lastErr)
		}
		if res.final || attempt > c.cfg.maxRetries || !retry.Decide(safety, res.status(), res.err) {
			return withAttempts(lastErr, attempt)
		}
		delay := backoff.Exponential(attempt, c.cfg.minRetryDelay, c.cfg.maxRetryDelay, c.cfg.jitter())
		if res.apiErr != nil && res.hasRetryAfter {
			if res.apiErr.RetryAfter > c.cfg.maxRetryAfter {
				// Sleeping longer than the cap would look like a hang; hand
				// the decision to the caller, who can read RetryAfter.
				return withAttempts(lastErr, attempt)
			}
			if deadline, ok := ctx.Deadline(); ok && res.apiErr.RetryAfter >= time.Until(deadline) {
				// The server refuses until the context has ended, so
				// sleeping could only end in a context error that hides the
				// answer: return the answer now, with its RetryAfter.
				return withAttempts(lastErr, attempt)
			}
			delay = max(delay, res.apiErr.RetryAfter)
		}
		c.cfg.logger.LogAttrs(ctx, slog.LevelInfo, "docsapi: retrying request",
			slog.String("method", r.method), slog.String("path", r.path),
			slog.Int("attempt", attempt), slog.Int("status", res.status()),
			slog.Duration("delay", delay), slog.String("error", res.logError()))
		if err := sleep(ctx, delay); err != nil {
			return stopped(ctx, err, lastErr)
		}
	}
}

// attemptResult is what one attempt produced: a transport error, an API
// error, or a 2xx body.
type attemptResult struct {
	resp          *http.Response
	body          []byte // a 2xx body
	err           error  // transport or body-read error
	apiErr        *APIError
	hasRetryAfter bool
	final         bool // no retry can help, e.g. a body over the size bound
	// release ends the context of a streamed call's request, whose 2xx
	// body resp still holds open; nil otherwise.
	release context.CancelFunc
}

func (a *attemptResult) status() int {
	if a.resp == nil {
		return 0
	}
	return a.resp.StatusCode
}

func (a *attemptResult) failure() error {
	if a.apiErr != nil {
		return a.apiErr
	}
	return a.err
}

func (a *attemptResult) meta(attempt int) Response {
	m := Response{Attempts: attempt}
	if a.resp != nil {
		m.StatusCode = a.resp.StatusCode
		m.Header = a.resp.Header
		m.RequestID = requestID(a.resp.Header)
	}
	return m
}

// logError describes a failure for a log line. A url.Error's own text holds
// the full URL, query included; logs carry the path alone.
func (a *attemptResult) logError() string {
	if a.apiErr != nil {
		return a.apiErr.Message
	}
	var urlErr *url.Error
	if errors.As(a.err, &urlErr) {
		return urlErr.Err.Error()
	}
	if a.err != nil {
		return a.err.Error()
	}
	return ""
}

func (c *Client) send(ctx context.Context, r apiRequest, target string, body []byte, call *callConfig, attempt int) attemptResult {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	hc := c.cfg.httpClient
	reqCtx := ctx
	release := context.CancelFunc(func() {})
	headersIn := func() bool { return true }
	if r.stream != nil {
		hc, reqCtx, headersIn, release = c.streamClient(ctx)
	}
	req, err := http.NewRequestWithContext(reqCtx, r.method, target, reader)
	if err != nil {
		release()
		return attemptResult{err: fmt.Errorf("docsapi: %s %s: %w", r.method, r.path, err)}
	}
	for name, values := range call.header {
		req.Header[name] = values
	}
	// The values are built once per client and shared by every request
	// (see sharedHeaders), rather than a new slice per header and request.
	h := &c.cfg.headers
	req.Header["Authorization"] = c.cfg.key.headerValues()
	req.Header["User-Agent"] = h.userAgent
	req.Header["Accept"] = h.accept
	if r.stream != nil {
		req.Header["Accept"] = []string{"text/event-stream"}
	}
	if body != nil {
		req.Header["Content-Type"] = h.contentType
	}
	if call.idempotencyKey != "" && r.method != http.MethodGet {
		req.Header.Set("Idempotency-Key", call.idempotencyKey)
	}

	start := c.cfg.now()
	resp, err := hc.Do(req)
	if !headersIn() {
		if err == nil {
			resp.Body.Close()
		}
		err = &headerTimeoutError{timeout: c.cfg.httpClient.Timeout}
	}
	var res attemptResult
	switch {
	case err != nil:
		res.err = fmt.Errorf("docsapi: %s %s: %w", r.method, r.path, err)
	case r.stream != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299:
		res.resp, res.release = resp, release // the body stays open for the stream
	default:
		res.resp = resp
		var respBody []byte
		respBody, err = readBody(resp)
		switch {
		case err != nil:
			res.err = fmt.Errorf("docsapi: %s %s: reading %d response: %w", r.method, r.path, resp.StatusCode, err)
			res.final = errors.Is(err, errBodyTooLarge)
		case resp.StatusCode < 200 || resp.StatusCode > 299:
			respBody = c.cfg.key.scrub(respBody)
			if r.scrub != "" {
				respBody = bytes.ReplaceAll(respBody, []byte(r.scrub), []byte("[REDACTED]"))
			}
			res.apiErr, res.hasRetryAfter = newAPIError(r.method, r.path, resp, respBody, c.cfg.now())
		default:
			res.body = respBody
		}
	}
	if res.release == nil {
		release()
	}
	// Checking Enabled first keeps the default, silent client from building
	// attributes on every request.
	if c.cfg.logger.Enabled(ctx, slog.LevelDebug) {
		attrs := make([]slog.Attr, 0, 7)
		attrs = append(attrs,
			slog.String("method", r.method), slog.String("path", r.path),
			slog.Int("status", res.status()), slog.Int("attempt", attempt),
			slog.Duration("duration", c.cfg.now().Sub(start)))
		// An empty request_id would read as "the server sent an empty
		// one"; the hosted service documents none, so leave it out.
		if id := res.meta(attempt).RequestID; id != "" {
			attrs = append(attrs, slog.String("request_id", id))
		}
		attrs = append(attrs, slog.String("error", res.logError()))
		c.cfg.logger.LogAttrs(ctx, slog.LevelDebug, "docsapi: request", attrs...)
	}
	return res
}

// streamClient returns what a streamed call's attempt is sent with. The
// client's Timeout (DefaultTimeout unless WithHTTPClient set another) bounds
// a whole exchange, body included, and would cut a long answer in the
// middle; so the stream is sent with a copy of the client without it, and
// the Timeout bounds the wait for the response's headers alone, through a
// context of the request's own. headersIn, called once Do returned, stops
// that bound and reports whether the headers came within it; release ends
// the request's context once its body is closed. After the headers, the
// caller's context alone governs the stream.
func (c *Client) streamClient(ctx context.Context) (hc *http.Client, reqCtx context.Context, headersIn func() bool, release context.CancelFunc) {
	copied := *c.cfg.httpClient
	timeout := copied.Timeout
	copied.Timeout = 0
	reqCtx, release = context.WithCancel(ctx)
	if timeout <= 0 {
		return &copied, reqCtx, func() bool { return true }, release
	}
	timer := time.AfterFunc(timeout, release)
	return &copied, reqCtx, timer.Stop, release
}

// headerTimeoutError is a streamed call whose response headers did not come
// within the client's Timeout. Like http.Client's own timeout, it matches
// context.DeadlineExceeded while the caller's context is still alive.
type headerTimeoutError struct {
	timeout time.Duration
}

func (e *headerTimeoutError) Error() string {
	return "no response headers within the client's timeout of " + e.timeout.String()
}

func (e *headerTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// errBodyTooLarge is final: downloading the same oversized body again on a
// retry would only repeat the waste.
var errBodyTooLarge = fmt.Errorf("body larger than %d bytes", maxResponseBytes)

// readBody reads a body of at most maxResponseBytes and closes it, so that
// the connection can be reused. One byte past the bound is enough to tell
// an oversized body, without downloading the rest.
func readBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	switch {
	case err != nil:
		return nil, err
	case len(b) > maxResponseBytes:
		return nil, errBodyTooLarge
	}
	return b, nil
}

// bodyDecoder is implemented by every result: it decodes a 2xx body into
// the result through the result's wire types, and is what its UnmarshalJSON
// calls. The pipeline calls it directly: json.Unmarshal into a type with an
// UnmarshalJSON method would first validate the whole body and scan it
// again for the value's end, before the method's own pass.
type bodyDecoder interface {
	decodeBody(data []byte) error
}

func (c *Client) decode(r apiRequest, res attemptResult, out bodyDecoder) error {
	if err := out.decodeBody(res.body); err != nil {
		return fmt.Errorf("docsapi: %s %s: decoding %d response (Content-Type %q): %w",
			r.method, r.path, res.resp.StatusCode, res.resp.Header.Get("Content-Type"), err)
	}
	return nil
}

// stopped reports that ctx ended the call. It wraps both the context error
// and the last attempt's error, so errors.Is(err, context.Canceled) and
// errors.As(err, &apiErr) both work.
func stopped(ctx context.Context, err, lastErr error) error {
	if cause := context.Cause(ctx); cause != nil {
		err = cause
	}
	if lastErr == nil {
		return fmt.Errorf("docsapi: %w", err)
	}
	return fmt.Errorf("docsapi: %w; last attempt: %w", err, lastErr)
}

func withAttempts(err error, attempts int) error {
	if attempts <= 1 {
		return err
	}
	return &attemptsError{attempts: attempts, err: err}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func requestID(h http.Header) string {
	if id := h.Get("X-Request-Id"); id != "" {
		return id
	}
	return h.Get("Request-Id")
}

// checkID rejects path parameters that cannot name a resource. "." and ".."
// are refused because servers clean paths, so they would address a
// different endpoint; everything else is escaped.
func checkID(param, id string) error {
	switch {
	case id == "":
		return invalid(param, "is empty")
	case id == "." || id == "..":
		return invalid(param, "must not be %q", id)
	case strings.TrimSpace(id) != id:
		return invalid(param, "has leading or trailing white space: %q", id)
	}
	return nil
}

// project resolves the projectID argument of an operation.
func (c *Client) project(projectID string) (string, error) {
	if projectID == "" {
		if c.cfg.defaultProject == "" {
			return "", invalid("projectID", "is empty and the client has no default project (see WithProjectID)")
		}
		return c.cfg.defaultProject, nil
	}
	return projectID, checkID("projectID", projectID)
}

// queryParams are the parameters of a GET of one page: checked before
// anything is sent, then encoded as its query.
type queryParams interface {
	validate() error
	query() string
}

// getOne is every one-page GET (an export's page, the job list, the
// series): the project and the parameters checked, then the answer at
// path(project) decoded into a new T.
func getOne[T any, PT interface {
	*T
	bodyDecoder
}](ctx context.Context, c *Client, projectID string, params queryParams, path func(project string) string, opts []RequestOption) (*T, error) {
	project, err := c.project(projectID)
	if err == nil {
		err = params.validate()
	}
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := c.do(ctx, apiRequest{method: http.MethodGet, path: path(project), query: params.query()}, opts, PT(out)); err != nil {
		return nil, err
	}
	return out, nil
}
