package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// api wraps an endpoint of the contract: the bearer key's authentication,
// then its admission to the path's project for a request of kind needing
// scope (package keyauth), then the declared size of a POST body. None of
// these refusals reads the body, so each closes the connection (see
// closeUnreadBodies).
func (s *Server) api(kind keyauth.Kind, scope store.Scope, h func(http.ResponseWriter, *http.Request, keyauth.Caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, status, msg := s.auth.Authenticate(r)
		if status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="docsapi"`)
			}
			respond.Error(w, status, msg)
			return
		}
		c, no := s.auth.Admit(r, key, r.PathValue("projectId"), kind, scope)
		if no != nil {
			if no.RetryAfter > 0 {
				w.Header().Set("Retry-After", ratelimit.RetryAfter(no.RetryAfter))
			}
			respond.Error(w, no.Status, no.Message)
			return
		}
		// A body declared too large is refused before a byte of it is
		// read; the handlers' own bound catches chunked bodies. GET and
		// archive ignore bodies, whose contracts have no 413.
		if r.Method == http.MethodPost && r.ContentLength > s.cfg.MaxBodyBytes && !strings.HasSuffix(r.Pattern, "/archive") {
			respond.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		h(w, r, c)
	})
}
