package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/dashboard/internal/session"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// Sessions of the dashboard live in a sealed cookie (see package
// internal/session), sealed with a key derived from the server's secret
// (Config.Secret), which every replica is given and the database never
// holds: replicas share sessions, and a copy of the database seals none.
// The cookie holds the store's reference to the key, so every request
// checks the key again (VerifyKey, through the key cache): a revoked or
// expired key ends its sessions within server.Config.KeyCacheTTL, at once
// when revoked through this process. A sign-out is recorded in the store
// (store.SessionStore) until the session would have expired, and every
// request reads it there, so a copy of a signed-out cookie is refused by
// every replica, after restarts too.

// The cookies: the session, and the sign-in form's nonce, which its CSRF
// token is derived from.
const (
	sessionCookie = "docsapi_session"
	loginCookie   = "docsapi_login"
)

// The purposes of CSRF tokens, so that the sign-in form's token is no
// session's.
const (
	sessionPurpose = "session"
	loginPurpose   = "login"
)

// Why a browser was sent to the sign-in page, as the page's ended
// parameter names it: a code, so that no text of the URL reaches the
// page.
var endedNotices = map[string]string{
	"signed-out":  "You signed out.",
	"expired":     "Your session expired: sign in again.",
	"idle":        "Your session ended after a time without use: sign in again.",
	"revoked":     "Your session ended: its API key was revoked.",
	"key-expired": "Your session ended: its API key has expired.",
	"key-gone":    "Your session ended: its API key is no longer valid.",
}

// dashSession is a session the server accepted, with its key.
type dashSession struct {
	session.Session
	key    store.APIKey
	sealer *session.Sealer
}

// dashSession returns the request's session, checked: sealed by this
// server (or a replica), within its age and idle bounds, not signed out,
// its key still valid. Otherwise it answers (the sign-in page, or an
// error) and reports false.
func (s *Dashboard) dashSession(w http.ResponseWriter, r *http.Request) (*dashSession, bool) {
	sealer := s.sealer
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		s.dashToLogin(w, r, "")
		return nil, false
	}
	sess, ok := sealer.Open(c.Value)
	if !ok {
		s.dashToLogin(w, r, "")
		return nil, false
	}
	now := s.cfg.Now()
	switch {
	case !now.Before(sess.Expires), !now.Before(sess.Opened.Add(s.cfg.MaxAge)):
		s.dashToLogin(w, r, "expired")
		return nil, false
	case !now.Before(sess.Seen.Add(s.cfg.IdleTimeout)):
		s.dashToLogin(w, r, "idle")
		return nil, false
	}
	ended, err := s.cfg.Store.SessionEnded(r.Context(), sess.ID[:])
	switch {
	case err != nil:
		s.dashError(w, r, pages.Frame{Base: dashBase(r)}, http.StatusInternalServerError, respond.LogInternal(r, s.cfg.Logger, "reading whether a session was signed out", err))
		return nil, false
	case ended:
		s.dashToLogin(w, r, "signed-out")
		return nil, false
	}
	key, status, msg := s.cfg.Auth.VerifyKey(r.Context(), sess.KeyHash)
	switch {
	case status == http.StatusInternalServerError:
		s.dashError(w, r, pages.Frame{Base: dashBase(r)}, status, msg)
		return nil, false
	case status != 0:
		s.dashToLogin(w, r, keyEndedCode(msg))
		return nil, false
	}
	return &dashSession{Session: sess, key: key, sealer: sealer}, true
}

// keyEndedCode is the notice of a session whose key VerifyKey refused
// with msg.
func keyEndedCode(msg string) string {
	switch msg {
	case keyauth.MsgKeyRevoked:
		return "revoked"
	case keyauth.MsgKeyExpired:
		return "key-expired"
	}
	return "key-gone"
}

// dashKeepSession seals the session again with this request as its last
// use, which moves its idle deadline.
func (s *Dashboard) dashKeepSession(w http.ResponseWriter, r *http.Request, sess *dashSession) {
	next := sess.Session
	next.Seen = s.cfg.Now().UTC().Truncate(time.Second)
	s.setDashCookie(w, r, sessionCookie, sess.sealer.Seal(next))
}

// dashToLogin sends the browser to the sign-in page, saying why with the
// code of an endedNotice ("" for nothing to say), and drops its session
// cookie if it sent one.
func (s *Dashboard) dashToLogin(w http.ResponseWriter, r *http.Request, code string) {
	if _, err := r.Cookie(sessionCookie); err == nil {
		s.dropDashCookie(w, r, sessionCookie)
	}
	target := dashBase(r) + "/login"
	if code != "" {
		target += "?ended=" + code
	}
	dashHeaders(w.Header())
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// dashLoginForm: GET /dashboard/login, the sign-in form. Its CSRF token
// is bound to a nonce in a cookie of its own, since no session exists yet.
func (s *Dashboard) dashLoginForm(w http.ResponseWriter, r *http.Request) {
	s.dashRenderLogin(w, r, s.sealer, http.StatusOK, "", endedNotices[r.URL.Query().Get("ended")])
}

// dashRenderLogin answers the sign-in form with a fresh nonce, and the
// error of the last attempt or a notice, if any.
func (s *Dashboard) dashRenderLogin(w http.ResponseWriter, r *http.Request, sealer *session.Sealer, status int, problem, notice string) {
	nonce := session.NewID()
	s.setDashCookie(w, r, loginCookie, session.EncodeID(nonce))
	frame := pages.Frame{Title: "Sign in", Base: dashBase(r), CSRF: sealer.Token(loginPurpose, nonce)}
	s.dashRender(w, r, status, pages.LoginPage{Frame: frame, Error: problem, Notice: notice})
}

// dashLogin: POST /dashboard/login. The address's budget first, before
// anything costs a store read; then the form's origin and token; then the
// key, checked as the API checks a bearer key. A key that verifies opens
// a session; the key itself goes nowhere but into its hash.
func (s *Dashboard) dashLogin(w http.ResponseWriter, r *http.Request) {
	frame := pages.Frame{Base: dashBase(r)}
	sealer := s.sealer
	if wait, limited := s.logins.Take(s.cfg.Proxies.Addr(r), s.cfg.Now()); limited {
		s.signIn(SignInLimited)
		w.Header().Set("Retry-After", ratelimit.RetryAfter(wait))
		s.dashRenderLogin(w, r, sealer, http.StatusTooManyRequests, "Too many sign-in attempts from this address: wait a minute and try again.", "")
		return
	}
	var nonce [32]byte
	if c, err := r.Cookie(loginCookie); err == nil {
		nonce, _ = session.DecodeID(c.Value)
	}
	if !s.dashFormOK(w, r, frame, sealer, loginPurpose, nonce, maxDashFormBytes) {
		s.signIn(SignInInvalid)
		return
	}
	secret := strings.TrimSpace(r.PostForm.Get("key"))
	_, status, msg := s.cfg.Auth.VerifySecret(r.Context(), secret)
	switch {
	case status == http.StatusInternalServerError:
		s.signIn(SignInError)
		s.dashError(w, r, frame, status, msg)
		return
	case status != 0:
		s.signIn(SignInRefused)
		s.dashRenderLogin(w, r, sealer, status, "Sign-in failed: "+msg+".", "")
		return
	}
	s.signIn(SignInOK)
	now := s.cfg.Now().UTC().Truncate(time.Second)
	sess := session.Session{ID: session.NewID(), KeyHash: keyauth.Hash(secret), Opened: now, Seen: now, Expires: now.Add(s.cfg.MaxAge)}
	s.dropDashCookie(w, r, loginCookie)
	s.setDashCookie(w, r, sessionCookie, sealer.Seal(sess))
	dashHeaders(w.Header())
	http.Redirect(w, r, frame.Base+"/", http.StatusSeeOther)
}

// What came of a sign-in attempt, as Config.OnSignIn is told.
const (
	SignInOK      = "ok"      // a session opened
	SignInRefused = "refused" // the key was refused: unknown, revoked or expired
	SignInLimited = "limited" // the address had spent its budget of attempts
	SignInInvalid = "invalid" // the form came from another site, or without its CSRF token
	SignInError   = "error"   // the store failed
)

// SignInResults returns every SignIn constant.
func SignInResults() []string {
	return []string{SignInOK, SignInRefused, SignInLimited, SignInInvalid, SignInError}
}

// signIn tells Config.OnSignIn, if set, of a sign-in's result.
func (s *Dashboard) signIn(result string) {
	if s.cfg.OnSignIn != nil {
		s.cfg.OnSignIn(result)
	}
}

// dashLogout: POST /dashboard/logout. The store records the session as
// ended until it would have expired anyway (and a margin for the clocks
// of replicas), so that a copy of the cookie is refused everywhere, after
// restarts too; then the browser drops its cookie. If the store cannot
// record it, the session goes on and the page says so: a sign-out that
// only dropped the browser's cookie would leave copies working.
func (s *Dashboard) dashLogout(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.dashSession(w, r)
	if !ok {
		return
	}
	frame := s.dashFrame(r, sess)
	if !s.dashFormOK(w, r, frame, sess.sealer, sessionPurpose, sess.ID, maxDashFormBytes) {
		return
	}
	// Until its sign-in's end, not the configuration's: a MaxAge raised
	// after a restart must not revive the session once its record lapsed.
	ended := store.EndedSession{ID: sess.ID[:], Until: sess.Expires.Add(endedSessionMargin), Now: s.cfg.Now()}
	if err := s.cfg.Store.EndSession(r.Context(), ended); err != nil {
		s.dashError(w, r, frame, http.StatusInternalServerError, "signing out failed, and the session goes on: try again ("+respond.LogInternal(r, s.cfg.Logger, "recording a sign-out", err)+")")
		return
	}
	s.dashToLogin(w, r, "signed-out")
}

// endedSessionMargin is how long a sign-out is remembered past the
// session's own end: a replica whose clock is behind the one that prunes
// the record would otherwise still take the cookie for that long.
const endedSessionMargin = time.Hour

// setDashCookie sets a cookie of the dashboard: for its paths only, out
// of scripts' reach, never sent by another site's requests, and over
// HTTPS only when the dashboard is reached over HTTPS. It has no expiry:
// the browser forgets it when it closes, and the server bounds it anyway.
func (s *Dashboard) setDashCookie(w http.ResponseWriter, r *http.Request, name, value string) {
	http.SetCookie(w, s.dashCookie(r, name, value))
}

// dropDashCookie tells the browser to forget a cookie of the pages.
func (s *Dashboard) dropDashCookie(w http.ResponseWriter, r *http.Request, name string) {
	c := s.dashCookie(r, name, "")
	c.MaxAge = -1
	http.SetCookie(w, c)
}

func (s *Dashboard) dashCookie(r *http.Request, name, value string) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: value, Path: dashBase(r) + "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.dashSecure(r),
	}
}
