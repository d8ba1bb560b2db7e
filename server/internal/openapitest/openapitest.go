// Package openapitest checks HTTP responses against the API's OpenAPI
// document (package api), so that the server's tests prove that every answer
// they see is one the contract describes: a documented path, method and
// status, the documented content type, and a body that matches its schema.
//
// The validator is stricter than the document read alone, in the ways the
// self-hosted server promises: properties listed in a schema's
// x-self-hosted-required extension are required, and headers marked
// x-self-hosted-required: true must be present. Authentication is not
// checked: the server's own tests assert 401 and 403 where they matter, and a
// validator that demanded a key would reject exactly those tests' requests.
// Requests are not validated either, since tests send invalid ones on
// purpose to see the 400.
//
// Typical use, in a test that drives the server end to end:
//
//	v := openapitest.New(t)
//	ts := httptest.NewServer(v.Handler(t, srv))
//	defer ts.Close()
//	// ... every response the server sends is now checked
package openapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/docsapi/docsapi-go/server/api"
)

// extRequired is the extension with which the document states what the
// self-hosted server always sends; see the document's description.
const extRequired = "x-self-hosted-required"

// Validator checks responses against the OpenAPI document. It is safe for
// concurrent use (a server under test answers from many goroutines) and
// never changes after New.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	prefix string
	opts   *openapi3filter.Options
}

// Option configures a Validator.
type Option func(*Validator)

// WithPrefix says that the server under test is mounted under prefix (for
// example "/api"), so request paths start with it. The prefix is removed
// before the path is looked up in the document, whose paths have none; a
// request outside the prefix fails the check.
func WithPrefix(prefix string) Option {
	return func(v *Validator) { v.prefix = strings.TrimRight(prefix, "/") }
}

// New loads the embedded OpenAPI document, validates it, and returns a
// Validator for it. A document that does not load or validate fails the test
// at once, since every later check would be meaningless.
func New(t testing.TB, opts ...Option) *Validator {
	t.Helper()
	v, err := newValidator(opts...)
	if err != nil {
		t.Fatalf("openapitest: %v", err)
	}
	return v
}

// Document returns the OpenAPI document as a Validator checks against it:
// loaded, validated, and with the self-hosted guarantees applied, so that a
// schema's Required lists what the server always sends. Each call returns
// a copy of its own, for a test to read.
func Document(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := load()
	if err == nil {
		err = applySelfHostedGuarantees(doc)
	}
	if err != nil {
		t.Fatalf("openapitest: %v", err)
	}
	return doc
}

func newValidator(opts ...Option) (*Validator, error) {
	v := &Validator{}
	for _, o := range opts {
		o(v)
	}
	if v.prefix != "" && !strings.HasPrefix(v.prefix, "/") {
		return nil, fmt.Errorf("prefix %q must start with a slash", v.prefix)
	}
	c, err := checks()
	if err != nil {
		return nil, err
	}
	v.doc, v.router, v.opts = c.doc, c.router, c.opts
	return v, nil
}

// checked is what every Validator checks with, whatever its prefix.
type checked struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options
}

// checks loads the document and builds its router once for every
// Validator of the process: that takes a while (tests make a Validator
// each), and nothing changes them after.
var checks = sync.OnceValues(func() (checked, error) {
	doc, err := load()
	if err != nil {
		return checked{}, err
	}
	if err := applySelfHostedGuarantees(doc); err != nil {
		return checked{}, err
	}
	// The document names the hosted service as its server; a server under
	// test listens elsewhere. Without servers the router matches the path
	// alone, whatever the scheme and host.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return checked{}, fmt.Errorf("building the router: %w", err)
	}
	// "uri" is not checked by kin-openapi unless a validator is defined;
	// defining it on this document, not globally, keeps other users of the
	// library unaffected.
	doc.SetStringFormatValidator("uri", openapi3.NewCallbackValidator(validateURI))
	return checked{doc: doc, router: router, opts: &openapi3filter.Options{
		// An undocumented status is a failure, not a pass.
		IncludeResponseStatus: true,
		// Report every problem of a body at once, not the first.
		MultiError: true,
		// Authentication is the server tests' business (see the package
		// comment); accept every request as authenticated.
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		// Without details a failure is one line per problem, not a dump of
		// the whole schema; Check prints the body beside it.
		SchemaValidationOptions: append(doc.GetSchemaValidationOptions(), openapi3.DisableSchemaErrorDetails()),
	}}, nil
})

// load parses the embedded document and validates it with kin-openapi,
// examples included. It returns the document as published, without the
// validator's stricter self-hosted rules.
func load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI())
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	return doc, nil
}

// applySelfHostedGuarantees turns the document's x-self-hosted-required
// extensions into real constraints: required properties on schemas, and
// required response headers. A malformed extension, or one that names a
// property the schema does not have, is an error in the document.
func applySelfHostedGuarantees(doc *openapi3.T) error {
	for name, ref := range doc.Components.Schemas {
		s := ref.Value
		raw, ok := s.Extensions[extRequired]
		if !ok {
			continue
		}
		names, err := stringList(raw)
		if err != nil {
			return fmt.Errorf("schema %s: %s: %w", name, extRequired, err)
		}
		for _, p := range names {
			if _, ok := s.Properties[p]; !ok {
				return fmt.Errorf("schema %s: %s names %q, which is not a property", name, extRequired, p)
			}
			if !slices.Contains(s.Required, p) {
				s.Required = append(s.Required, p)
			}
		}
	}
	for name, ref := range doc.Components.Headers {
		raw, ok := ref.Value.Extensions[extRequired]
		if !ok {
			continue
		}
		required, ok := raw.(bool)
		if !ok {
			return fmt.Errorf("header %s: %s must be a boolean, got %T", name, extRequired, raw)
		}
		ref.Value.Required = required
	}
	return nil
}

func stringList(raw any) ([]string, error) {
	switch list := raw.(type) {
	case []string:
		return list, nil
	case []any:
		out := make([]string, len(list))
		for i, item := range list {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("entry %d is a %T, not a string", i, item)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be a list of property names, got %T", raw)
}

// validateURI accepts absolute http and https URLs with a host: what a
// pull-request link must be for a client to open it.
func validateURI(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	return nil
}

// Validate reports whether the response (status, header, body) to req is
// described by the document, and if not, why. It is Check without a test,
// for callers that want the error itself.
func (v *Validator) Validate(req *http.Request, status int, header http.Header, body []byte) error {
	if req == nil || req.URL == nil {
		return errors.New("no request: the route cannot be found without one")
	}
	routed, err := v.routable(req)
	if err != nil {
		return err
	}
	route, params, err := v.router.FindRoute(routed)
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		return fmt.Errorf("%s %s: the path is not in the document", req.Method, req.URL.Path)
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return fmt.Errorf("%s %s: the method is not documented for this path", req.Method, req.URL.Path)
	case err != nil:
		return fmt.Errorf("%s %s: finding the route: %w", req.Method, req.URL.Path, err)
	}
	opts := *v.opts
	// A HEAD response has the GET's status and headers but no body.
	opts.ExcludeResponseBody = req.Method == http.MethodHead
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    routed,
			PathParams: params,
			Route:      route,
			Options:    &opts,
		},
		Status:  status,
		Header:  header,
		Options: &opts,
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(routed.Context(), input); err != nil {
		return fmt.Errorf("%s %s: status %d: %w", req.Method, req.URL.Path, status, err)
	}
	return nil
}

// routable returns the request as the router must see it: without the
// prefix, and with HEAD looked up as GET, the way net/http serves it.
func (v *Validator) routable(req *http.Request) (*http.Request, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if method == http.MethodHead {
		method = http.MethodGet
	}
	u := *req.URL
	if v.prefix != "" {
		path, ok := cutPrefix(u.Path, v.prefix)
		if !ok {
			return nil, fmt.Errorf("%s %s: the path is outside the prefix %q", req.Method, req.URL.Path, v.prefix)
		}
		u.Path = path
		if u.RawPath != "" {
			if raw, ok := cutPrefix(u.RawPath, v.prefix); ok {
				u.RawPath = raw
			} else {
				u.RawPath = ""
			}
		}
	}
	if u.Path == "" {
		u.Path = "/"
	}
	// WithContext copies the request shallowly; the copy's URL and method
	// are replaced, never the caller's.
	routed := req.WithContext(req.Context())
	routed.URL, routed.Method = &u, method
	return routed, nil
}

// cutPrefix removes prefix from path when it is a whole number of segments:
// "/api" is a prefix of "/api/v1" and "/api", not of "/apiary".
func cutPrefix(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return "", false
	}
	return rest, true
}

// Check fails the test (with t.Errorf, so it may be called from any
// goroutine) if the response (status, header, body) to req is not described
// by the document.
func (v *Validator) Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if err := v.Validate(req, status, header, body); err != nil {
		t.Errorf("openapitest: response not described by the OpenAPI document: %v\nbody: %s", err, excerpt(body))
	}
}

// CheckResponse checks a response a client received (resp.Request must be
// set, as http.Client sets it). It reads the body and puts an unread copy
// back, so the caller can still decode it.
func (v *Validator) CheckResponse(t testing.TB, resp *http.Response) {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		t.Errorf("openapitest: reading the response body: %v", err)
		return
	}
	v.Check(t, resp.Request, resp.StatusCode, resp.Header, body)
}

// CheckRecorder checks the response that a handler wrote into rec while
// serving req.
func (v *Validator) CheckRecorder(t testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	res := rec.Result()
	v.Check(t, req, res.StatusCode, res.Header, rec.Body.Bytes())
}

// Handler returns h wrapped so that every response it writes is checked
// after h returns. The response still reaches the client unchanged. Requests
// for paths or methods that the document does not describe fail the test
// too; a test that probes those on purpose should use h itself. Close the
// httptest.Server before the test returns (Close waits for handlers), since
// a check that runs after the test has ended cannot report to it.
func (v *Validator) Handler(t testing.TB, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The handler may change r's URL (http.StripPrefix makes a copy,
		// but others need not); keep what the client asked for.
		orig := r.Clone(r.Context())
		rec := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		v.Check(t, orig, rec.status(), rec.sentHeader(), rec.body.Bytes())
	})
}

// Transport returns an http.RoundTripper that sends each request with base
// (http.DefaultTransport if nil) and checks every response it receives,
// handing the caller an unread body. Use it as the SDK's transport in
// end-to-end tests against a server the test does not wrap itself.
func (v *Validator) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		if resp.Request == nil {
			resp.Request = req
		}
		v.CheckResponse(t, resp)
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// teeWriter passes a response through while keeping its status, the
// headers as they were when the status was written (later changes are not
// sent, so they must not be checked), and the body.
type teeWriter struct {
	http.ResponseWriter
	code   int
	header http.Header
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 { // 1xx answers are informational, not the status
		w.code, w.header = code, w.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code, w.header = http.StatusOK, w.Header().Clone()
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) sentHeader() http.Header {
	if w.header == nil { // nothing written: net/http sends the headers as they are now
		return w.Header()
	}
	return w.header
}

func (w *teeWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// Flush passes flushes on, so streaming handlers behave as without the tee.
func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// excerpt returns the start of a body for a failure message: enough to see
// what was sent without flooding the log.
func excerpt(body []byte) string {
	const limit = 512
	if len(body) <= limit {
		return string(body)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return string(body[:cut]) + fmt.Sprintf("... (%d bytes in all)", len(body))
}
