// Package dashboard is the operators' web pages under /dashboard/: a
// project's traffic and its jobs. A browser signs in with an API key,
// which is checked as the API checks it (keyauth.Authenticator.VerifySecret)
// and exchanged for a session cookie (sessions.go); every page is then
// admitted as an API request of the same kind would be (Admit: the key's
// projects, its scope, the project, the key's rate budget), and reads the
// store through the API's own queries (Config.Jobs, and the store's
// QueryViews, ViewSeries and QueryVisitors), so the dashboard shows what
// the API answers and allows what it allows. Package server wires it and
// owns its configuration (server.DashboardConfig).
package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/dashboard/internal/session"
	"github.com/docsapi/docsapi-go/server/internal/clientip"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/site"
	"github.com/docsapi/docsapi-go/server/store"
)

// Config configures the Dashboard; package server resolves its values.
type Config struct {
	// MaxAge bounds a session from its sign-in, IdleTimeout from its last
	// use (server.DashboardConfig).
	MaxAge, IdleTimeout time.Duration
	// LoginPerAddress is the budget of sign-in attempts of one client
	// address, kept for up to MaxAddresses addresses.
	LoginPerAddress ratelimit.Limit
	MaxAddresses    int
	// Secret is the server's secret (server.Config.Secret), from which
	// the key of the sessions derives.
	Secret  []byte
	Store   store.Store
	Logger  *slog.Logger
	Now     func() time.Time
	Proxies clientip.Proxies // who the client is, and whether it came over HTTPS
	Auth    *keyauth.Authenticator
	Jobs    Jobs
	Site    *site.Endpoints // what the site endpoints met today
	// OnSignIn, if set, is told what came of every sign-in attempt: a
	// SignIn constant. It runs on the request's goroutine, so it must
	// return quickly.
	OnSignIn func(result string)

	// Feedback is what the feedback page reads and does (feedback.go).
	Feedback Feedback
	// Gaps is what the content gaps page reads and does (gaps.go).
	Gaps Gaps
}

// Jobs is what the pages read and do of a project's jobs: what the API's
// job endpoints do (package server implements it), so that a page shows
// and allows what the API does.
type Jobs interface {
	// Statuses are the values of the list's status filter, in order.
	Statuses() []store.JobStatus
	// List reads the page of a project's jobs that query, the query
	// string of GET .../jobs, asks for, and the cursor of the page after
	// it ("" on the last). problems says what is wrong with the query (a
	// 400); err is the store's.
	List(ctx context.Context, projectID, query string) (page store.JobsPage, next, problems string, err error)
	// Get returns a job with everything the store keeps, its repository
	// and its model as the API shows them.
	Get(ctx context.Context, projectID, jobID string) (store.Job, error)
	// Archive archives a job, as POST .../archive does.
	Archive(ctx context.Context, projectID, jobID string) (store.Job, error)
}

// Dashboard serves the pages. It is safe for concurrent use.
type Dashboard struct {
	cfg     Config
	sealer  *session.Sealer
	logins  *ratelimit.PerAddress
	origins *http.CrossOriginProtection
}

// New returns the Dashboard of cfg.
func New(cfg Config) (*Dashboard, error) {
	sealer, err := sealerOf(cfg.Secret)
	if err != nil {
		return nil, err
	}
	return &Dashboard{
		cfg:     cfg,
		sealer:  sealer,
		logins:  ratelimit.NewPerAddress(cfg.LoginPerAddress, cfg.MaxAddresses),
		origins: http.NewCrossOriginProtection(),
	}, nil
}

// sealerOf returns the Sealer of the sessions of a server whose secret is
// secret: with a key of its own derived from the secret, so that no other
// use of the secret can be turned against sessions.
func sealerOf(secret []byte) (*session.Sealer, error) {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("docsapi dashboard sessions"))
	return session.NewSealer(m.Sum(nil))
}

// Mux is where Routes adds the routes: an http.ServeMux, or package
// server's, which remembers them.
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Routes adds the dashboard's pages under /dashboard/ to mux.
func (s *Dashboard) Routes(mux Mux) {
	mux.Handle("GET /dashboard/{$}", http.HandlerFunc(s.dashHome))
	mux.Handle("GET /dashboard/login", http.HandlerFunc(s.dashLoginForm))
	mux.Handle("POST /dashboard/login", http.HandlerFunc(s.dashLogin))
	mux.Handle("POST /dashboard/logout", http.HandlerFunc(s.dashLogout))
	mux.Handle("GET /dashboard/style.css", http.HandlerFunc(dashStyle))
	mux.Handle("GET /dashboard/projects/{projectId}/{$}", s.dashPage(keyauth.Analytics, store.ScopeRead, s.dashOverview))
	mux.Handle("GET /dashboard/projects/{projectId}/agents", s.dashPage(keyauth.Analytics, store.ScopeRead, s.dashAgents))
	mux.Handle("GET /dashboard/projects/{projectId}/jobs", s.dashPage(keyauth.Agent, store.ScopeRead, s.dashJobs))
	mux.Handle("GET /dashboard/projects/{projectId}/jobs/{id}", s.dashPage(keyauth.Agent, store.ScopeRead, s.dashJob))
	mux.Handle("POST /dashboard/projects/{projectId}/jobs/{id}/archive", s.dashPage(keyauth.Agent, store.ScopeWrite, s.dashArchive))
	mux.Handle("GET /dashboard/projects/{projectId}/searches", s.dashPage(keyauth.Analytics, store.ScopeRead, s.dashSearches))
	mux.Handle("GET /dashboard/projects/{projectId}/conversations", s.dashPage(keyauth.Analytics, store.ScopeRead, s.dashConversations))
	mux.Handle("GET /dashboard/projects/{projectId}/conversations/{threadId}", s.dashPage(keyauth.Analytics, store.ScopeRead, s.dashThread))
	mux.Handle("GET /dashboard/projects/{projectId}/feedback", s.dashPage(keyauth.Analytics, store.ScopeRead, s.dashFeedback))
	mux.Handle("POST /dashboard/projects/{projectId}/feedback/{id}/status", s.dashPage(keyauth.Analytics, store.ScopeWrite, s.dashFeedbackStatus))
	mux.Handle("GET /dashboard/projects/{projectId}/gaps", s.dashPage(keyauth.Analytics, store.ScopeRead, s.dashGaps))
	mux.Handle("POST /dashboard/projects/{projectId}/gaps/job", s.dashPageSized(keyauth.Agent, store.ScopeWrite, maxDashGapsFormBytes, s.dashGapsJob))
	mux.Handle("GET /dashboard/", http.HandlerFunc(s.dashNotFound))
}

// now is the time as the store keeps it.
func (s *Dashboard) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// dashRequest is a request of a signed-in browser, admitted to its
// project.
type dashRequest struct {
	keyauth.Caller
	frame pages.Frame
}

// dashPage wraps a page of a project: the session, then for a POST its
// origin and CSRF token, then Admit, as the API endpoint of the same kind
// and scope would be admitted. The session's cookie is sealed again with
// this request as its last use, which moves its idle deadline.
func (s *Dashboard) dashPage(kind keyauth.Kind, scope store.Scope, h func(http.ResponseWriter, *http.Request, *dashRequest)) http.Handler {
	return s.dashPageSized(kind, scope, maxDashFormBytes, h)
}

// dashPageSized is dashPage for a page whose form's body may hold up to
// maxForm bytes.
func (s *Dashboard) dashPageSized(kind keyauth.Kind, scope store.Scope, maxForm int64, h func(http.ResponseWriter, *http.Request, *dashRequest)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok := s.dashSession(w, r)
		if !ok {
			return
		}
		frame := s.dashFrame(r, sess)
		if r.Method == http.MethodPost && !s.dashFormOK(w, r, frame, sess.sealer, sessionPurpose, sess.ID, maxForm) {
			return
		}
		c, no := s.cfg.Auth.Admit(r, sess.key, r.PathValue("projectId"), kind, scope)
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
func (s *Dashboard) dashFrame(r *http.Request, sess *dashSession) pages.Frame {
	return pages.Frame{
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
// reports false otherwise. The body is bounded by maxBytes: every form is
// a few fields (maxDashFormBytes), but for the gaps' selection.
func (s *Dashboard) dashFormOK(w http.ResponseWriter, r *http.Request, frame pages.Frame, sealer *session.Sealer, purpose string, id [32]byte, maxBytes int64) bool {
	if err := s.origins.Check(r); err != nil {
		s.dashError(w, r, frame, http.StatusForbidden, "this form was sent from another site")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
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
func (s *Dashboard) dashHome(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.dashSession(w, r)
	if !ok {
		return
	}
	project := cmp.Or(r.URL.Query().Get("project"), sess.key.Projects[0])
	http.Redirect(w, r, dashBase(r)+"/projects/"+url.PathEscape(project)+"/", http.StatusSeeOther)
}

// dashNotFound answers a path under /dashboard/ that no page has.
func (s *Dashboard) dashNotFound(w http.ResponseWriter, r *http.Request) {
	s.dashError(w, r, pages.Frame{Base: dashBase(r)}, http.StatusNotFound, "there is no page "+respond.Quote(r.URL.Path))
}

// dashStyle serves the stylesheet: cached for long under the URL of its
// version, which the pages name, so that a new version is fetched anew.
func dashStyle(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == pages.StyleVersion {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	w.Write(pages.Style())
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
func (s *Dashboard) dashRender(w http.ResponseWriter, r *http.Request, status int, p pages.Page) {
	var buf bytes.Buffer
	if err := pages.Render(&buf, p); err != nil {
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
func (s *Dashboard) dashError(w http.ResponseWriter, r *http.Request, frame pages.Frame, status int, msg string) {
	frame.Title = http.StatusText(status)
	s.dashRender(w, r, status, pages.ErrorPage{Frame: frame, Heading: http.StatusText(status), Message: msg})
}

// dashStoreError answers err, an error of the store, as the API would
// (respond.StoreAnswer), in a page.
func (s *Dashboard) dashStoreError(w http.ResponseWriter, r *http.Request, frame pages.Frame, err error, subject, doing string) {
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
func (s *Dashboard) dashSecure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !s.cfg.Proxies.Trusts(peer.Addr()) {
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
