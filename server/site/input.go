package site

import (
	"net/http"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/strictjson"
	"github.com/docsapi/docsapi-go/server/pageviews"
)

// sitePath checks and normalises the path of a page of the site, given in
// field, as the page-view middleware does (so feedback and views name a
// page alike); a query or fragment, if sent, is dropped.
func sitePath(field, v string) (string, *input.Problem) {
	if i := strings.IndexAny(v, "?#"); i >= 0 {
		v = v[:i]
	}
	if v == "" {
		return "", input.Invalid("field %q must not be empty", field)
	}
	if p := input.PathProblem(v); p != "" {
		return "", input.Invalid("field %q %s", field, p)
	}
	return pageviews.NormalizePath(v), nil
}

// readSubmission reads a public submission's body into in (a pointer to a
// body type), answering the request itself when there is nothing to store:
// a refused body gets its 400 or 413, and a filled honeypot (what honeypot
// returns: a form field hidden from people) the same 202 as a stored
// submission, counted. It returns "" if in is to be stored, else the
// outcome of the request it answered.
func (s *Endpoints) readSubmission(w http.ResponseWriter, r *http.Request, in any, honeypot func() *string) (answered string) {
	body, bad := input.ReadBody(w, r, s.cfg.Limits.MaxBodyBytes)
	if bad == nil {
		bad = input.DecodeJSON(body, in, strictjson.Options{})
	}
	if bad != nil {
		respond.Error(w, bad.Status, bad.Message)
		return badBody(bad)
	}
	if h := honeypot(); h != nil && strings.TrimSpace(*h) != "" {
		s.counters.honeypot.Add(1)
		writeAccepted(w)
		return public.Honeypot
	}
	return ""
}

// badBody is the outcome of a body refused with bad.
func badBody(bad *input.Problem) string {
	if bad.Status == http.StatusRequestEntityTooLarge {
		return public.TooLarge
	}
	return public.BadBody
}
