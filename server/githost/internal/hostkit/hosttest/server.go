package hosttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// API describes one host's fake API to NewServer: what is particular to the
// host, around the HTTP front that every fake shares.
type API struct {
	// Handler answers the requests that reach the host's API: with the
	// token, and not answered by a test's interception or a fault.
	Handler http.Handler
	// Token is the one token the fake accepts.
	Token string
	// Header carries the token, after Prefix: requests without
	// Prefix+Token in it are refused with 401, as the host refuses them.
	Header, Prefix string
	// Collection ends the path of the pull-request collection, as
	// "/pulls"; Fail and HideFromList concern requests to it.
	Collection string
	// WriteJSON sends a JSON answer with the host's headers.
	WriteJSON func(w http.ResponseWriter, status int, v any)
	// ErrorBody is the host's usual body for an error status.
	ErrorBody func(status int) any
}

// Server is the HTTP front of a host's fake: it logs every request, lets a
// test answer requests itself or fail them (Intercept, Fail, HideFromList),
// refuses requests without the token, and counts creates, before the host's
// Handler sees a request. It gives a fake the parts of Fake that do not
// depend on the host. Its methods are safe to call while a host talks to it.
type Server struct {
	*httptest.Server
	api API

	mu           sync.Mutex
	requests     []Request
	creates      int
	intercept    func(w http.ResponseWriter, r *http.Request) bool
	beforeCreate func()
	hidden       bool
	fail         map[Op]Answer
}

// Request is a request a Server received.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	// Body is the JSON body, nil when the request had none.
	Body map[string]any
}

// NewServer starts the fake's front for api; the test's end shuts it.
func NewServer(t *testing.T, api API) *Server {
	t.Helper()
	s := &Server{api: api}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Errorf("%s %s: the body is not JSON: %v", r.Method, r.URL.Path, err)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		intercept := s.intercept
		s.mu.Unlock()
		if intercept != nil && intercept(w, r) || strings.HasSuffix(r.URL.Path, api.Collection) && s.override(w, r) {
			return
		}
		if r.Header.Get(api.Header) != api.Prefix+api.Token {
			api.WriteJSON(w, http.StatusUnauthorized, api.ErrorBody(http.StatusUnauthorized))
			return
		}
		api.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Token is the one token the fake accepts.
func (s *Server) Token() string { return s.api.Token }

// Log is every request received so far, in order.
func (s *Server) Log() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Requests counts the requests received so far.
func (s *Server) Requests() int { return len(s.Log()) }

// Creates counts the creates the Handler began (see Creating).
func (s *Server) Creates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creates
}

// Intercept lets fn answer any later request before the fake does: it
// reports whether it answered.
func (s *Server) Intercept(fn func(w http.ResponseWriter, r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = fn
}

// BeforeCreate makes Creating call fn, so that a test can act inside a
// create, as another run would.
func (s *Server) BeforeCreate(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeCreate = fn
}

// Creating counts a create and runs BeforeCreate's fn. The Handler calls it
// before it checks whether the pull request already exists, holding none of
// its locks, since fn may add a pull request to the fake.
func (s *Server) Creating() {
	s.mu.Lock()
	s.creates++
	fn := s.beforeCreate
	s.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// Fail makes every later request of a.Op answer as a says.
func (s *Server) Fail(a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail == nil {
		s.fail = map[Op]Answer{}
	}
	s.fail[a.Op] = a
}

// HideFromList makes every later list answer empty.
func (s *Server) HideFromList() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hidden = true
}

// override answers a request to the collection when a test asked for it,
// as given to Fail or with an empty list after HideFromList, and reports
// whether it answered.
func (s *Server) override(w http.ResponseWriter, r *http.Request) bool {
	op := List
	if r.Method == http.MethodPost {
		op = Create
	}
	s.mu.Lock()
	a, failing := s.fail[op]
	hidden := s.hidden
	s.mu.Unlock()
	switch {
	case failing:
		for k, v := range a.Header {
			w.Header()[k] = v
		}
		body := a.Body
		if body == nil {
			body = s.api.ErrorBody(a.Status)
		}
		s.api.WriteJSON(w, a.Status, body)
	case hidden && op == List:
		s.api.WriteJSON(w, http.StatusOK, []any{})
	default:
		return false
	}
	return true
}
