package assistantauth

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// Preflight answers the CORS preflights of the /discovery endpoints, the
// domain taken from the path's {domain}: see ServePreflight. on, if set,
// is told what came of each (a constant of package public).
func (g *Gate) Preflight(on func(outcome string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outcome := g.ServePreflight(w, r, r.PathValue("domain"))
		if on != nil {
			on(outcome)
		}
	})
}

// ServePreflight answers the CORS preflight of a /discovery endpoint of
// domain: the browser asks whether the page's origin may POST with an
// Authorization header. A preflight carries no key, so the origin must be
// one of the active assistant keys' of the domain's project; the request
// may ask for no other method or header. An unknown domain gets the same
// 403 as an origin not allowed, so that a preflight cannot probe for
// sites. An OPTIONS that is not a preflight is told what the resource
// allows. It returns what came of the request, a constant of package
// public.
func (g *Gate) ServePreflight(w http.ResponseWriter, r *http.Request, domain string) string {
	w.Header().Add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	if wait, limited := g.takeAddress(r, g.cfg.Now()); limited {
		(&Refusal{Status: http.StatusTooManyRequests, Message: "too many requests from this address; retry later", RetryAfter: wait}).Write(w)
		return public.RateLimited
	}
	origin, hasOrigin := requestOrigin(r)
	method := r.Header.Get("Access-Control-Request-Method")
	if !hasOrigin || method == "" {
		w.Header().Set("Allow", "OPTIONS, POST")
		w.WriteHeader(http.StatusNoContent)
		return public.Accepted
	}
	if method != http.MethodPost {
		WriteMessage(w, http.StatusForbidden, "method "+respond.Quote(method)+" is not allowed; the /discovery endpoints take POST")
		return public.BadRequest
	}
	for _, h := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && h != "authorization" && h != "content-type" {
			WriteMessage(w, http.StatusForbidden, "header "+respond.Quote(h)+" is not allowed; the /discovery endpoints take Authorization and Content-Type")
			return public.BadRequest
		}
	}
	allowed, err := g.domainOrigins(r, domain)
	if err != nil {
		WriteMessage(w, http.StatusInternalServerError, respond.LogInternal(r, g.cfg.Logger, "loading a domain's assistant keys", err))
		return public.Error
	}
	if !slices.Contains(allowed, origin) {
		WriteMessage(w, http.StatusForbidden, "origin "+respond.Quote(origin)+" is not allowed to call the /discovery endpoints of domain "+respond.Quote(domain))
		return public.Origin
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Allow-Methods", "POST")
	w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return public.Accepted
}

// domainOrigins lists the origins of the active assistant keys of the
// project whose domain is domain: none for an unknown domain.
func (g *Gate) domainOrigins(r *http.Request, domain string) ([]string, error) {
	p, err := g.cfg.Store.ProjectByDomain(r.Context(), strings.ToLower(domain))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	keys, err := g.cfg.Store.AssistantKeys(r.Context(), p.ID)
	var origins []string
	for _, k := range keys {
		if k.RevokedAt.IsZero() {
			origins = append(origins, k.Origins...)
		}
	}
	return origins, err
}
