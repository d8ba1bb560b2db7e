package server

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/dashboard"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// The dashboard is the operators' web pages under /dashboard/: a
// project's traffic and its jobs. A browser signs in with an API key,
// which is checked as the API checks it (verifySecret) and exchanged for
// a session cookie (dashboard_session.go); every page is then admitted
// as an API request of the same kind would be (admit: the key's projects,
// its scope, the project, the key's rate budget), and reads the store
// through the API's own queries, so the dashboard shows what the API
// answers and allows what it allows.

// Defaults of DashboardConfig.
const (
	DefaultDashboardMaxAge      = 12 * time.Hour
	DefaultDashboardIdleTimeout = time.Hour
)

// DefaultDashboardLoginPerAddress returns the budget of sign-in attempts
// of one client address: plenty for people typing keys, and nothing like
// what guessing would need (keys carry about 256 bits).
func DefaultDashboardLoginPerAddress() Limit { return Limit{Requests: 10, Per: time.Minute} }

// DashboardConfig configures the dashboard.
type DashboardConfig struct {
	// Enabled serves the dashboard under /dashboard/ of the Server's
	// paths. Off by default, so that a host application embedding the
	// Server decides whether it serves pages; docsapi serve turns it on.
	Enabled bool
	// MaxAge bounds a session from its sign-in, however much it is used.
	// DefaultDashboardMaxAge by default.
	MaxAge time.Duration
	// IdleTimeout ends a session unused for this long.
	// DefaultDashboardIdleTimeout by default.
	IdleTimeout time.Duration
	// LoginPerAddress is the budget of sign-in attempts of one client
	// address (an IPv6 client's /64), kept for up to
	// Config.Site.MaxAddresses addresses; past it, 429.
	// DefaultDashboardLoginPerAddress() by default.
	LoginPerAddress Limit
}

// WithDefaults checks c and returns it with its zero fields set to their
// defaults.
func (c DashboardConfig) WithDefaults() (DashboardConfig, error) {
	if c.LoginPerAddress == (Limit{}) {
		c.LoginPerAddress = DefaultDashboardLoginPerAddress()
	}
	if c.LoginPerAddress.Requests <= 0 || c.LoginPerAddress.Per <= 0 {
		return c, fmt.Errorf("server: Config.Dashboard.LoginPerAddress needs positive Requests and Per, got %d per %s", c.LoginPerAddress.Requests, c.LoginPerAddress.Per)
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"MaxAge", &c.MaxAge, DefaultDashboardMaxAge},
		{"IdleTimeout", &c.IdleTimeout, DefaultDashboardIdleTimeout},
	} {
		switch {
		case *f.v < 0:
			return c, fmt.Errorf("server: Config.Dashboard.%s must not be negative, got %s", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	return c, nil
}

// dashState is the dashboard's part of a Server.
type dashState struct {
	cfg     DashboardConfig
	logins  *ratelimit.PerAddress
	origins *http.CrossOriginProtection
}

func newDashState(cfg DashboardConfig, maxAddresses int) *dashState {
	return &dashState{
		cfg:     cfg,
		logins:  ratelimit.NewPerAddress(ratelimit.Limit(cfg.LoginPerAddress), maxAddresses),
		origins: http.NewCrossOriginProtection(),
	}
}

func (s *Server) dashboardRoutes(mux *routeMux) {
	mux.HandleFunc("GET /dashboard/{$}", s.dashHome)
	mux.HandleFunc("GET /dashboard/login", s.dashLoginForm)
	mux.HandleFunc("POST /dashboard/login", s.dashLogin)
	mux.HandleFunc("POST /dashboard/logout", s.dashLogout)
	mux.HandleFunc("GET /dashboard/style.css", dashStyle)
	mux.Handle("GET /dashboard/projects/{projectId}/{$}", s.dashPage(keyauth.Analytics, store.ScopeRead, s.dashOverview))
	mux.Handle("GET /dashboard/projects/{projectId}/jobs", s.dashPage(keyauth.Agent, store.ScopeRead, s.dashJobs))
	mux.Handle("GET /dashboard/projects/{projectId}/jobs/{id}", s.dashPage(keyauth.Agent, store.ScopeRead, s.dashJob))
	mux.Handle("POST /dashboard/projects/{projectId}/jobs/{id}/archive", s.dashPage(keyauth.Agent, store.ScopeWrite, s.dashArchive))
	mux.HandleFunc("GET /dashboard/", s.dashNotFound)
}

// dashRequest is a request of a signed-in browser, admitted to its
// project.
type dashRequest struct {
	keyauth.Caller
	frame dashboard.Frame
}

// dashPage wraps a page of a project: the session, then for a POST its
// origin and CSRF token, then admit, as the API endpoint of the same kind
// and scope would be admitted. The session's cookie is sealed again with
// this request as its last use, which moves its idle deadline.
func (s *Server) dashPage(kind keyauth.Kind, scope store.Scope, h func(http.ResponseWriter, *http.Request, *dashRequest)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok := s.dashSession(w, r)
		if !ok {
			return
		}
		frame := s.dashFrame(r, sess)
		if r.Method == http.MethodPost && !s.dashFormOK(w, r, frame, sess.sealer, sessionPurpose, sess.ID) {
			return
		}
		c, no := s.auth.Admit(r, sess.key, r.PathValue("projectId"), kind, scope)
		if no != nil {
			if no.RetryAfter > 0 {
				w.Header().Set("Retry-After", ratelimit.RetryAfter(no.RetryAfter))
			}
			s.dashError(w, r, frame, no.Status, no.Message)
			return
		}
		frame.Project = c.Project.ID
		s.dashKeepSession(w, r, sess)
		h(w, r, &dashRequest{Caller: c, frame: frame})
	})
}

// dashFrame is the frame of the pages of a session.
func (s *Server) dashFrame(r *http.Request, sess *dashSession) dashboard.Frame {
	return dashboard.Frame{
		Base:     dashBase(r),
		Projects: sess.key.Projects,
		KeyName:  cmp.Or(sess.key.Name, sess.key.ID),
		CSRF:     sess.sealer.Token(sessionPurpose, sess.ID),
		Now:      s.cfg.Now(),
	}
}

// dashFormOK checks a form posted to the dashboard: it must come from a
// page of the dashboard's own origin (Sec-Fetch-Site, else Origin against
// Host) and carry the CSRF token of id for purpose. It answers 403 and
// reports false otherwise. The body is bounded: every form is a few
// fields.
func (s *Server) dashFormOK(w http.ResponseWriter, r *http.Request, frame dashboard.Frame, sealer *dashboard.Sealer, purpose string, id [32]byte) bool {
	if err := s.dash.origins.Check(r); err != nil {
		s.dashError(w, r, frame, http.StatusForbidden, "this form was sent from another site")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxDashFormBytes)
	if err := r.ParseForm(); err != nil {
		s.dashError(w, r, frame, http.StatusBadRequest, "this form could not be read")
		return false
	}
	if !sealer.CheckToken(purpose, id, r.PostForm.Get("csrf")) {
		s.dashError(w, r, frame, http.StatusForbidden, "this form has expired or did not come from the dashboard: load the page again")
		return false
	}
	return true
}

// maxDashFormBytes bounds a form's body: a key and a token.
const maxDashFormBytes = 8 << 10

// dashHome sends a signed-in browser to a project's overview: the one
// the picker asked for, else the key's first.
func (s *Server) dashHome(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.dashSession(w, r)
	if !ok {
		return
	}
	project := cmp.Or(r.URL.Query().Get("project"), sess.key.Projects[0])
	http.Redirect(w, r, dashBase(r)+"/projects/"+url.PathEscape(project)+"/", http.StatusSeeOther)
}

// dashNotFound answers a path under /dashboard/ that no page has.
func (s *Server) dashNotFound(w http.ResponseWriter, r *http.Request) {
	s.dashError(w, r, dashboard.Frame{Base: dashBase(r)}, http.StatusNotFound, "there is no page "+respond.Quote(r.URL.Path))
}

// dashStyle serves the stylesheet: cached for long under the URL of its
// version, which the pages name, so that a new version is fetched anew.
func dashStyle(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == dashboard.StyleVersion {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	w.Write(dashboard.Style())
}

// dashHeaders are the headers of every page: no script at all, nothing
// from elsewhere, no framing (clickjacking), no referrer (a page's URL
// names projects and jobs), and no copy kept by the browser or a proxy,
// since pages hold data.
func dashHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// dashRender answers p with status.
func (s *Server) dashRender(w http.ResponseWriter, r *http.Request, status int, p dashboard.Page) {
	var buf bytes.Buffer
	if err := dashboard.Render(&buf, p); err != nil {
		msg := respond.LogInternal(r, s.cfg.Logger, "rendering a dashboard page", err)
		dashHeaders(w.Header())
		http.Error(w, msg, http.StatusInternalServerError)
		return
	}
	dashHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	buf.WriteTo(w)
}

// dashError answers a page that says why the request failed.
func (s *Server) dashError(w http.ResponseWriter, r *http.Request, frame dashboard.Frame, status int, msg string) {
	frame.Title = http.StatusText(status)
	s.dashRender(w, r, status, dashboard.ErrorPage{Frame: frame, Heading: http.StatusText(status), Message: msg})
}

// dashStoreError answers err, an error of the store, as the API would
// (storeAnswer), in a page.
func (s *Server) dashStoreError(w http.ResponseWriter, r *http.Request, frame dashboard.Frame, err error, subject, doing string) {
	status, msg := respond.StoreAnswer(r, s.cfg.Logger, err, subject, doing)
	s.dashError(w, r, frame, status, msg)
}

// dashBase returns the dashboard's path as the browser sees it: /dashboard
// under the prefix the host mounted the Server at. http.StripPrefix
// removes the prefix from the URL's path but not from RequestURI, so the
// prefix is what RequestURI has before the path the Server routed.
func dashBase(r *http.Request) string {
	const own = "/dashboard"
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		return own
	}
	prefix, ok := strings.CutSuffix(u.EscapedPath(), r.URL.EscapedPath())
	// A prefix must be a path of this host: "//host" would make every
	// link point elsewhere.
	if !ok || prefix != "" && (prefix[0] != '/' || strings.HasPrefix(prefix, "//") || strings.ContainsRune(prefix, '\\')) {
		return own
	}
	return prefix + own
}

// dashSecure reports whether the browser reached the dashboard over HTTPS:
// the request came over TLS, or through a trusted proxy whose
// X-Forwarded-Proto (the last value, which the nearest proxy wrote) says
// https. Cookies are then marked Secure, so no browser sends them over
// plain HTTP.
func (s *Server) dashSecure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !s.proxies.Trusts(peer.Addr()) {
		return false
	}
	vs := r.Header.Values("X-Forwarded-Proto")
	if len(vs) == 0 {
		return false
	}
	last := vs[len(vs)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.EqualFold(strings.TrimSpace(last), "https")
}
