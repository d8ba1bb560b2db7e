package assistantauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/assistantauth"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/sqlitetest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// env is a Gate on a real SQLite file holding two projects with domains
// (alpha: "alpha-docs", beta: "beta-docs") and one without, keys made by
// a Server on the same store, and a mux with a test endpoint behind the
// Gate that answers the admitted project's ID.
type env struct {
	t     *testing.T
	st    store.Store
	srv   *server.Server
	gate  *assistantauth.Gate
	clock *clock
	mux   *http.ServeMux
	keys  map[string]server.NewAssistantKey
}

const docsOrigin = "https://docs.example.com"

func newEnv(t *testing.T, mutate ...func(*assistantauth.Config)) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlitetest.FreshFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{now: time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)}
	srv, err := server.New(server.Config{Store: st, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, srv: srv, clock: c, mux: http.NewServeMux(), keys: map[string]server.NewAssistantKey{}}
	for _, p := range []store.Project{{ID: "alpha", Domain: "alpha-docs"}, {ID: "beta", Domain: "beta-docs"}, {ID: "nodomain"}} {
		if _, err := srv.CreateProject(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	e.key("alpha", "alpha", docsOrigin, "http://localhost:3000")
	e.key("alpha-server", "alpha")
	e.key("beta", "beta", "https://beta.example.com")
	cfg := assistantauth.Config{Store: st, Now: c.Now, CacheTTL: time.Second, MaxAddresses: 100}
	for _, m := range mutate {
		m(&cfg)
	}
	e.gate = assistantauth.New(cfg)
	e.mux.Handle("POST /discovery/test/{domain}", e.gate.Guard(func(w http.ResponseWriter, _ *http.Request, a assistantauth.Admission) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"project": a.Project.ID, "key": a.Key.ID, "origin": a.Origin})
	}))
	e.mux.Handle("OPTIONS /discovery/test/{domain}", e.gate.Preflight(nil))
	return e
}

// key makes an assistant key of project through the Server, named name.
func (e *env) key(name, project string, origins ...string) server.NewAssistantKey {
	e.t.Helper()
	k, err := e.srv.CreateAssistantKey(e.t.Context(), server.AssistantKeyParams{Project: project, Name: name, Origins: origins})
	if err != nil {
		e.t.Fatal(err)
	}
	e.keys[name] = k
	return k
}

// req is a request to the test endpoint.
type req struct {
	method, domain, auth, origin, addr string
	header                             map[string]string
}

func (e *env) do(r req) *httptest.ResponseRecorder {
	e.t.Helper()
	hr := httptest.NewRequest(cmpOr(r.method, http.MethodPost), "/discovery/test/"+cmpOr(r.domain, "alpha-docs"), strings.NewReader(`{}`))
	hr.RemoteAddr = cmpOr(r.addr, "192.0.2.1") + ":4000"
	if r.auth != "" {
		hr.Header.Set("Authorization", r.auth)
	}
	if r.origin != "" {
		hr.Header.Set("Origin", r.origin)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	e.mux.ServeHTTP(w, hr)
	return w
}

func (e *env) bearer(name string) string { return "Bearer " + e.keys[name].Secret }

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// message returns the body's message, checking that it is the hosted
// error shape: one field, "message".
func message(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	msg, ok := body["message"].(string)
	if !ok || len(body) != 1 {
		t.Fatalf("body %s, want {\"message\": string} alone", w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return msg
}

func admittedAs(t *testing.T, w *httptest.ResponseRecorder) map[string]string {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
	}
	var got map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestKeysLookLikeTheHostedOnes(t *testing.T) {
	e := newEnv(t)
	k := e.keys["alpha"]
	if !strings.HasPrefix(k.Secret, "mint_dsc_") || len(k.Secret) != len("mint_dsc_")+assistantauth.SecretLength {
		t.Errorf("secret %q: want mint_dsc_ and %d characters", k.Secret, assistantauth.SecretLength)
	}
	h := assistantauth.Hash(k.Secret)
	if string(k.Key.Hash) != string(h[:]) || strings.Contains(k.Key.Hint, k.Secret[len("mint_dsc_")+4:]) {
		t.Errorf("stored %+v: want the secret's hash and a hint of its start alone", k.Key)
	}
	if e.keys["alpha"].Secret == e.keys["beta"].Secret {
		t.Error("two keys share a secret")
	}
}

func TestAdmitsTheKeysOriginsAndServers(t *testing.T) {
	e := newEnv(t)
	for name, tc := range map[string]struct {
		r          req
		wantOrigin string
	}{
		"from an allowed origin":            {req{auth: e.bearer("alpha"), origin: docsOrigin}, docsOrigin},
		"from an origin written otherwise":  {req{auth: e.bearer("alpha"), origin: "HTTPS://Docs.Example.com:443"}, docsOrigin},
		"from a server, without Origin":     {req{auth: e.bearer("alpha")}, ""},
		"a server-only key from a server":   {req{auth: e.bearer("alpha-server")}, ""},
		"the domain in upper case":          {req{auth: e.bearer("alpha"), domain: "ALPHA-DOCS"}, ""},
		"the scheme in lower case":          {req{auth: "bearer " + e.keys["alpha"].Secret}, ""},
		"another project's key, its domain": {req{auth: e.bearer("beta"), domain: "beta-docs", origin: "https://beta.example.com"}, "https://beta.example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			w := e.do(tc.r)
			got := admittedAs(t, w)
			wantProject := "alpha"
			if tc.r.domain == "beta-docs" {
				wantProject = "beta"
			}
			if got["project"] != wantProject || got["origin"] != tc.wantOrigin {
				t.Errorf("admitted as %v, want project %s, origin %q", got, wantProject, tc.wantOrigin)
			}
			if acao := w.Header().Get("Access-Control-Allow-Origin"); acao != tc.wantOrigin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", acao, tc.wantOrigin)
			}
			if !strings.Contains(strings.Join(w.Header().Values("Vary"), ","), "Origin") {
				t.Error("no Vary: Origin")
			}
		})
	}
}

func TestRefusesWithTheHostedErrorShape(t *testing.T) {
	e := newEnv(t)
	admin, err := e.srv.CreateKey(t.Context(), server.KeyParams{Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead, store.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	site, err := e.srv.CreateSiteToken(t.Context(), server.SiteTokenParams{Project: "alpha", Origins: []string{docsOrigin}})
	if err != nil {
		t.Fatal(err)
	}
	unknown := "mint_dsc_" + strings.Repeat("x", assistantauth.SecretLength)
	for name, tc := range map[string]struct {
		r      req
		status int
		msg    string
	}{
		"no Authorization":            {req{origin: docsOrigin}, 401, "missing assistant key"},
		"another scheme":              {req{auth: "Basic " + e.keys["alpha"].Secret}, 401, "must be: Bearer"},
		"the bare key":                {req{auth: e.keys["alpha"].Secret}, 401, "must be: Bearer"},
		"an admin key":                {req{auth: "Bearer " + admin.Secret}, 401, "not an admin API key"},
		"a site token":                {req{auth: "Bearer " + site.Token}, 401, "takes an assistant key"},
		"an unknown assistant key":    {req{auth: "Bearer " + unknown}, 401, "invalid assistant key"},
		"a key with a byte more":      {req{auth: e.bearer("alpha") + "x"}, 401, "invalid assistant key"},
		"another project's domain":    {req{auth: e.bearer("beta")}, 403, `not allowed to use domain "alpha-docs"`},
		"an unknown domain":           {req{auth: e.bearer("alpha"), domain: "nope"}, 403, `not allowed to use domain "nope"`},
		"a domain's prefix":           {req{auth: e.bearer("alpha"), domain: "alpha"}, 403, "not allowed to use domain"},
		"an origin not listed":        {req{auth: e.bearer("alpha"), origin: "https://evil.example"}, 403, `origin "https://evil.example" is not allowed`},
		"a listed origin over http":   {req{auth: e.bearer("alpha"), origin: "http://docs.example.com"}, 403, "is not allowed to use this assistant key"},
		"origin null":                 {req{auth: e.bearer("alpha"), origin: "null"}, 403, `origin "null" is not allowed`},
		"a server-only key, browsers": {req{auth: e.bearer("alpha-server"), origin: docsOrigin}, 403, "is not allowed to use this assistant key"},
	} {
		t.Run(name, func(t *testing.T) {
			w := e.do(tc.r)
			if w.Code != tc.status {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tc.status)
			}
			if msg := message(t, w); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q, want it to say %q", msg, tc.msg)
			}
			if acao := w.Header().Get("Access-Control-Allow-Origin"); acao != "" {
				t.Errorf("a refusal before the origin was allowed carries Access-Control-Allow-Origin %q", acao)
			}
			if strings.Contains(w.Body.String(), e.keys["alpha"].Secret) {
				t.Error("the answer repeats the key")
			}
		})
	}
}

// A key's project without a domain is refused everywhere, and a key cannot
// be made for it.
func TestProjectWithoutDomain(t *testing.T) {
	e := newEnv(t)
	if _, err := e.srv.CreateAssistantKey(t.Context(), server.AssistantKeyParams{Project: "nodomain"}); err == nil || !strings.Contains(err.Error(), "no domain identifier") {
		t.Errorf("CreateAssistantKey for a project without a domain: %v", err)
	}
	// A key made while the project had a domain, which it lost since.
	p, err := e.st.Project(t.Context(), "beta")
	if err != nil {
		t.Fatal(err)
	}
	p.Domain = ""
	if err := e.st.UpdateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if w := e.do(req{auth: e.bearer("beta"), domain: "beta-docs"}); w.Code != http.StatusForbidden {
		t.Errorf("the domain the project lost: status %d (%s), want 403", w.Code, w.Body)
	}
}

// A key revoked by another process stops working within the cache's TTL;
// one revoked through this process's Gate (Forget), at once. A domain
// changed elsewhere moves within the TTL too.
func TestRevocationAndDomainChangesWithinTheTTL(t *testing.T) {
	e := newEnv(t)
	r := req{auth: e.bearer("alpha"), origin: docsOrigin}
	admittedAs(t, e.do(r))
	if err := e.st.RevokeAssistantKey(t.Context(), e.keys["alpha"].Key.ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	w := e.do(r)
	if w.Code != http.StatusUnauthorized || message(t, w) != "this assistant key was revoked" {
		t.Errorf("a key revoked a TTL ago: %d %s", w.Code, w.Body)
	}

	r = req{auth: e.bearer("beta"), domain: "beta-docs"}
	admittedAs(t, e.do(r))
	if err := e.st.RevokeAssistantKey(t.Context(), e.keys["beta"].Key.ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.gate.Forget()
	if w := e.do(r); w.Code != http.StatusUnauthorized {
		t.Errorf("a key revoked, then forgotten: %d %s, want 401 at once", w.Code, w.Body)
	}

	e.key("alpha2", "alpha")
	r = req{auth: e.bearer("alpha2")}
	admittedAs(t, e.do(r))
	p, err := e.st.Project(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	p.Domain = "renamed"
	if err := e.st.UpdateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	if w := e.do(r); w.Code != http.StatusForbidden {
		t.Errorf("the project's old domain a TTL after the change: %d %s, want 403", w.Code, w.Body)
	}
	r.domain = "renamed"
	admittedAs(t, e.do(r))
}

// Each address has its budget, checked before the key: a flood of made-up
// keys from one address stops at it.
func TestPerAddressBudget(t *testing.T) {
	e := newEnv(t, func(c *assistantauth.Config) { c.PerAddress = ratelimit.Limit{Requests: 2, Per: time.Minute} })
	for range 2 {
		admittedAs(t, e.do(req{auth: e.bearer("alpha")}))
	}
	for _, r := range []req{{auth: e.bearer("alpha")}, {auth: "Bearer mint_dsc_unknown"}, {method: http.MethodOptions, origin: docsOrigin, header: map[string]string{"Access-Control-Request-Method": "POST"}}} {
		w := e.do(r)
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("past the budget: %d %s, want 429", w.Code, w.Body)
		}
		if ra := w.Header().Get("Retry-After"); ra != "30" {
			t.Errorf("Retry-After %q, want 30 (a token every 30 seconds)", ra)
		}
		message(t, w)
	}
	admittedAs(t, e.do(req{auth: e.bearer("alpha"), addr: "192.0.2.2"}))
	e.clock.Advance(30 * time.Second)
	admittedAs(t, e.do(req{auth: e.bearer("alpha")}))
}

// A project's keys share its budget, whatever their addresses; a refusal
// from an allowed origin carries the CORS header, so the page reads it.
func TestPerProjectBudget(t *testing.T) {
	e := newEnv(t, func(c *assistantauth.Config) { c.PerProject = ratelimit.Limit{Requests: 2, Per: time.Hour} })
	e.key("alpha2", "alpha", docsOrigin)
	admittedAs(t, e.do(req{auth: e.bearer("alpha"), addr: "192.0.2.1"}))
	admittedAs(t, e.do(req{auth: e.bearer("alpha2"), addr: "198.51.100.1"}))
	w := e.do(req{auth: e.bearer("alpha"), addr: "203.0.113.1", origin: docsOrigin})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("past the project's budget: %d %s (Retry-After %q), want 429 with Retry-After", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	message(t, w)
	if acao := w.Header().Get("Access-Control-Allow-Origin"); acao != docsOrigin {
		t.Errorf("Access-Control-Allow-Origin %q on a 429 from an allowed origin", acao)
	}
	// Another project's budget is its own.
	admittedAs(t, e.do(req{auth: e.bearer("beta"), domain: "beta-docs"}))
}

func TestPreflight(t *testing.T) {
	e := newEnv(t)
	pre := func(domain, origin, method, headers string) *httptest.ResponseRecorder {
		h := map[string]string{}
		if method != "" {
			h["Access-Control-Request-Method"] = method
		}
		if headers != "" {
			h["Access-Control-Request-Headers"] = headers
		}
		return e.do(req{method: http.MethodOptions, domain: domain, origin: origin, header: h})
	}
	w := pre("alpha-docs", "HTTP://LOCALHOST:3000", "POST", "authorization, content-type")
	if w.Code != http.StatusNoContent {
		t.Fatalf("preflight of an allowed origin: %d %s", w.Code, w.Body)
	}
	for h, want := range map[string]string{
		"Access-Control-Allow-Origin":  "http://localhost:3000",
		"Access-Control-Allow-Methods": "POST",
		"Access-Control-Allow-Headers": "Authorization, Content-Type",
		"Access-Control-Max-Age":       "600",
	} {
		if got := w.Header().Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	for name, tc := range map[string]struct {
		domain, origin, method, headers, msg string
	}{
		"an origin no key lists":      {"alpha-docs", "https://evil.example", "POST", "authorization", "is not allowed"},
		"another project's origin":    {"alpha-docs", "https://beta.example.com", "POST", "", "is not allowed"},
		"an unknown domain":           {"nope", docsOrigin, "POST", "", "is not allowed"},
		"another method":              {"alpha-docs", docsOrigin, "DELETE", "", `method "DELETE" is not allowed`},
		"another header":              {"alpha-docs", docsOrigin, "POST", "authorization, x-secret", `header "x-secret" is not allowed`},
		"origin null":                 {"alpha-docs", "null", "POST", "", "is not allowed"},
		"the origin of a revoked key": {"beta-docs", "https://beta.example.com", "POST", "", "is not allowed"},
	} {
		if name == "the origin of a revoked key" {
			if err := e.st.RevokeAssistantKey(t.Context(), e.keys["beta"].Key.ID, e.clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(name, func(t *testing.T) {
			w := pre(tc.domain, tc.origin, tc.method, tc.headers)
			if w.Code != http.StatusForbidden {
				t.Fatalf("%d %s, want 403", w.Code, w.Body)
			}
			if msg := message(t, w); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q, want %q", msg, tc.msg)
			}
			if acao := w.Header().Get("Access-Control-Allow-Origin"); acao != "" {
				t.Errorf("Access-Control-Allow-Origin %q on a refused preflight", acao)
			}
		})
	}
	// An OPTIONS that is no preflight is told what the resource takes.
	w = pre("alpha-docs", "", "", "")
	if w.Code != http.StatusNoContent || w.Header().Get("Allow") != "OPTIONS, POST" {
		t.Errorf("plain OPTIONS: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

// The store failing answers 500 in the hosted shape, naming the request's
// id and nothing of the error.
func TestStoreErrorsAnswer500(t *testing.T) {
	e := newEnv(t)
	secret := e.bearer("alpha")
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
	w := e.do(req{auth: secret})
	if w.Code != http.StatusInternalServerError || !strings.HasPrefix(message(t, w), "internal error") {
		t.Errorf("%d %s, want 500 internal error", w.Code, w.Body)
	}
}
