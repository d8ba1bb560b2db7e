// Package assistantauth admits requests to the /discovery endpoints (the
// hosted Assistant API's search and page content), which take an assistant
// key (mint_dsc_...) and address a project by its domain identifier. What
// a request meets, in this order:
//
//  1. a budget per client address (ratelimit.PerAddress), before anything
//     costs a database read;
//  2. the bearer key: an assistant key, never an admin key, found by the
//     hash of its secret (through a short cache) and not revoked;
//  3. the path's domain, which must be the key's project's: the same 403
//     whether or not the domain exists, so that a key cannot probe for
//     other sites;
//  4. the request's Origin, when it has one: one of the key's origins. A
//     request without Origin comes from a server (the hosted platform
//     advises proxying the key through a backend), not a browser, and is
//     admitted: Origin is a browser's guarantee, which a script elsewhere
//     could forge anyway, so refusing its absence would stop backends and
//     no attacker;
//  5. the project's budget, shared by all its keys (the hosted service's
//     is per organisation).
//
// Answers are the hosted shape of the Assistant API's errors,
// {"message": "..."}; a 429 carries Retry-After. Once the origin is known
// to be allowed, every answer carries Access-Control-Allow-Origin, so that
// the page's script can read its errors too.
package assistantauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/clientip"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/site"
	"github.com/docsapi/docsapi-go/server/store"
)

// Prefix starts every assistant key, as it does the hosted platform's: the
// SDK tells an assistant key from an admin key by it (kindOf in its
// key.go). An admin key is the admin prefix and base62 characters, which
// hold no '_', so no admin key starts with Prefix.
const Prefix = "mint_dsc_"

// SecretLength is the number of base62 characters after Prefix: 43 carry
// about 256 bits, as admin keys' do.
const SecretLength = 43

// Hash is what the store keeps of an assistant key's secret: its SHA-256,
// as for admin keys. The secret is random, so a slow password hash would
// only tax every request.
func Hash(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// Config configures a Gate; package server resolves its values.
type Config struct {
	Store   store.Store
	Logger  *slog.Logger
	Now     func() time.Time
	Proxies clientip.Proxies // who the client is
	// CacheTTL is how long a verified key, and its project, are trusted
	// without reading the store again; 0: not at all. A key revoked
	// through this process is refused at once (Forget), one revoked
	// elsewhere within CacheTTL.
	CacheTTL time.Duration
	// PerAddress is the budget of one client address (an IPv6 client's
	// /64), preflights included; a zero Limit is none.
	PerAddress ratelimit.Limit
	// MaxAddresses bounds the addresses whose budgets are remembered.
	MaxAddresses int
	// PerProject is the budget of one project, all its keys together; a
	// zero Limit is none.
	PerProject ratelimit.Limit
}

// Gate admits requests to the /discovery endpoints. It is safe for
// concurrent use.
type Gate struct {
	cfg        Config
	cache      *keyauth.Cache[store.AssistantKey]
	perAddress *ratelimit.PerAddress // nil: no budget
	perProject *projectLimiter
}

// New returns the Gate of cfg.
func New(cfg Config) *Gate {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Gate{cfg: cfg, cache: keyauth.NewCache[store.AssistantKey](cfg.CacheTTL), perProject: newProjectLimiter(cfg.PerProject)}
	if !cfg.PerAddress.Off() {
		g.perAddress = ratelimit.NewPerAddress(cfg.PerAddress, max(cfg.MaxAddresses, 1))
	}
	return g
}

// takeAddress spends a token of r's client address's budget at now, or
// reports how long until one is free.
func (g *Gate) takeAddress(r *http.Request, now time.Time) (time.Duration, bool) {
	if g.perAddress == nil {
		return 0, false
	}
	return g.perAddress.Take(g.cfg.Proxies.Addr(r), now)
}

// Admission is an admitted request: the key that signed it, the project
// its path's domain names, and its Origin ("" from a server).
type Admission struct {
	Key     store.AssistantKey
	Project store.Project
	Origin  string
}

// Refusal is why a request was turned away: the status and message to
// answer, and for 429 how long until the budget allows one.
type Refusal struct {
	Status     int
	Message    string
	RetryAfter time.Duration
	// Outcome is what the refusal is, as package public names it
	// (RateLimited, BadKey, Origin, Error), for Config.OnPublicRequest.
	Outcome string
}

// Write answers the refusal in the hosted shape, {"message": ...}, with
// Retry-After on a 429.
func (f *Refusal) Write(w http.ResponseWriter) {
	if f.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", ratelimit.RetryAfter(f.RetryAfter))
	}
	WriteMessage(w, f.Status, f.Message)
}

// WriteMessage answers status with {"message": message}, the Assistant
// API's error body (the hosted page endpoint's 404 is one), for the
// /discovery handlers' own errors too.
func WriteMessage(w http.ResponseWriter, status int, message string) {
	body, _ := json.Marshal(struct {
		Message string `json:"message"`
	}{message})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// Guard serves h for the requests Admit admits, the domain taken from the
// path's {domain}, and answers the others itself.
func (g *Gate) Guard(h func(http.ResponseWriter, *http.Request, Admission)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a, ok := g.Admit(w, r, r.PathValue("domain")); ok {
			h(w, r, a)
		}
	})
}

// Serve is Guard for a handler that returns what came of the request (a
// constant of package public): on, if set, is told it, or the outcome of
// the refusal that answered instead.
func (g *Gate) Serve(h func(http.ResponseWriter, *http.Request, Admission) string, on func(outcome string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		a, refusal := g.Check(r, r.PathValue("domain"))
		if a.Origin != "" {
			w.Header().Set("Access-Control-Allow-Origin", a.Origin)
		}
		var outcome string
		if refusal != nil {
			refusal.Write(w)
			outcome = refusal.Outcome
		} else {
			outcome = h(w, r, a)
		}
		if on != nil {
			on(outcome)
		}
	})
}

// Admit checks r for a /discovery endpoint of domain, in the order of the
// package's doc. It sets Vary: Origin, and Access-Control-Allow-Origin once
// the origin is allowed; a refused request is answered, and ok is false.
func (g *Gate) Admit(w http.ResponseWriter, r *http.Request, domain string) (a Admission, ok bool) {
	w.Header().Add("Vary", "Origin")
	a, refusal := g.Check(r, domain)
	if a.Origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", a.Origin)
	}
	if refusal != nil {
		refusal.Write(w)
		return Admission{}, false
	}
	return a, true
}

// Check is Admit without the answer: the admission, or why r is refused.
// A refusal's Admission still names the Origin if it was allowed, for the
// CORS header of the answer.
func (g *Gate) Check(r *http.Request, domain string) (Admission, *Refusal) {
	now := g.cfg.Now()
	if wait, limited := g.takeAddress(r, now); limited {
		return Admission{}, &Refusal{Status: http.StatusTooManyRequests, Message: "too many requests from this address; retry later", RetryAfter: wait, Outcome: public.RateLimited}
	}
	key, refusal := g.key(r, now)
	if refusal != nil {
		return Admission{}, refusal
	}
	project, err := g.project(r, key.ProjectID, now)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Admission{}, &Refusal{Status: http.StatusInternalServerError, Message: respond.LogInternal(r, g.cfg.Logger, "loading an assistant key's project", err), Outcome: public.Error}
	}
	// Domains are DNS labels, which compare without case.
	if err != nil || project.Domain == "" || project.Domain != strings.ToLower(domain) {
		return Admission{}, &Refusal{Status: http.StatusForbidden, Message: "this assistant key is not allowed to use domain " + respond.Quote(domain), Outcome: public.BadKey}
	}
	origin, hasOrigin := requestOrigin(r)
	if hasOrigin && !slices.Contains(key.Origins, origin) {
		return Admission{}, &Refusal{Status: http.StatusForbidden, Message: "origin " + respond.Quote(origin) + " is not allowed to use this assistant key", Outcome: public.Origin}
	}
	a := Admission{Key: key, Project: project, Origin: origin}
	if wait, limited := g.perProject.take(project.ID, now); limited {
		return a, &Refusal{Status: http.StatusTooManyRequests, Message: "rate limit exceeded for this site's assistant keys; retry later", RetryAfter: wait, Outcome: public.RateLimited}
	}
	return a, nil
}

// key finds r's bearer assistant key, active, from the cache while fresh.
func (g *Gate) key(r *http.Request, now time.Time) (store.AssistantKey, *Refusal) {
	unauthorized := func(msg string) (store.AssistantKey, *Refusal) {
		return store.AssistantKey{}, &Refusal{Status: http.StatusUnauthorized, Message: msg, Outcome: public.BadKey}
	}
	header := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(header, " ")
	secret = strings.TrimSpace(secret)
	switch {
	case header == "":
		return unauthorized("missing assistant key: send the header Authorization: Bearer " + Prefix + "...")
	case !ok || !strings.EqualFold(scheme, "Bearer"):
		return unauthorized("the Authorization header must be: Bearer " + Prefix + "...")
	case !strings.HasPrefix(secret, Prefix):
		// An admin key is a server's secret: it must not work, nor be
		// sent, where pages call.
		return unauthorized("this endpoint takes an assistant key (" + Prefix + "...), not an admin API key or any other")
	}
	hash := Hash(secret)
	key, cached := g.cache.Key(hash, now)
	if !cached {
		gen := g.cache.Generation()
		var err error
		key, err = g.cfg.Store.AssistantKeyByHash(r.Context(), hash[:])
		if errors.Is(err, store.ErrNotFound) {
			return unauthorized("invalid assistant key")
		}
		if err != nil {
			return store.AssistantKey{}, &Refusal{Status: http.StatusInternalServerError, Message: respond.LogInternal(r, g.cfg.Logger, "loading assistant key", err), Outcome: public.Error}
		}
		// The lookup is by hash; the comparison guards against a store
		// that matches loosely.
		if subtle.ConstantTimeCompare(key.Hash, hash[:]) != 1 {
			return unauthorized("invalid assistant key")
		}
		if key.RevokedAt.IsZero() {
			g.cache.PutKey(gen, hash, key, now)
		}
	}
	if !key.RevokedAt.IsZero() {
		return unauthorized("this assistant key was revoked")
	}
	return key, nil
}

// project returns the project id, from the cache while fresh.
func (g *Gate) project(r *http.Request, id string, now time.Time) (store.Project, error) {
	if p, ok := g.cache.Project(id, now); ok {
		return p, nil
	}
	gen := g.cache.Generation()
	p, err := g.cfg.Store.Project(r.Context(), id)
	if err == nil {
		g.cache.PutProject(gen, p, now)
	}
	return p, err
}

// Forget drops every key and project cached, for a change made through
// this process (a key revoked): it then takes effect at once here, not a
// TTL later.
func (g *Gate) Forget() { g.cache.Forget() }

// Addresses returns the number of client addresses whose budgets are
// remembered.
func (g *Gate) Addresses() int {
	if g.perAddress == nil {
		return 0
	}
	return g.perAddress.Size()
}

// requestOrigin returns the request's Origin, as origins are compared
// (site.NormalizeOrigin), and whether it has one. Several Origin headers,
// or one that is not an origin ("null" from a sandboxed page or a file),
// count as an origin no key allows.
func requestOrigin(r *http.Request) (string, bool) {
	vs := r.Header.Values("Origin")
	switch len(vs) {
	case 0:
		return "", false
	case 1:
		if o, err := site.NormalizeOrigin(vs[0]); err == nil {
			return o, true
		}
		return vs[0], true
	}
	return strings.Join(vs, ", "), true
}
