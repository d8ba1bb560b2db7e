package site

import (
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// maxRawQueryBytes bounds a query as sent, before it is normalised: a
// query is short, and normalising a long one is work for nothing.
const maxRawQueryBytes = 1000

// searchBody is a search event of POST /v1/site/{projectId}/searches: what
// a reader searched for, and the result they opened, if any.
type searchBody struct {
	Query       *string `json:"query"`
	ClickedPath *string `json:"clickedPath"`
	Website     *string `json:"website"` // the honeypot, as in feedback
}

// recordSearch: POST /v1/site/{projectId}/searches. 202 means counted (or
// caught by the honeypot, which answers alike); 400 names the field.
func (s *Endpoints) recordSearch(w http.ResponseWriter, r *http.Request, tok store.SiteToken) string {
	var in searchBody
	if answered := s.readSubmission(w, r, &in, func() *string { return in.Website }); answered != "" {
		return answered
	}
	sr, bad := parseSearch(in)
	if bad != nil {
		respond.Error(w, bad.Status, bad.Message)
		return badBody(bad)
	}
	sr.ProjectID, sr.At = tok.ProjectID, s.cfg.Now().UTC().Truncate(time.Microsecond)
	if err := s.RecordSearch(r, sr); err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(tok.ProjectID), "recording a search")
		return public.Error
	}
	writeAccepted(w)
	return public.Accepted
}

// RecordSearch counts sr, a search (or, ClickOnly, the opening of a
// result after one) that r's client made, as POST .../searches counts
// one: under the client's share of the day's new queries and the
// project's daily cap, folds told to Config.OnLimit and the log. sr is
// checked by the store (store.Search.Validate); its query must be
// normalised. It is how the /discovery search endpoint records its
// searches too, so that both count alike.
func (s *Endpoints) RecordSearch(r *http.Request, sr store.Search) error {
	// A search may add a query, and a pair of query and opened result,
	// new to the day: it takes a unit of its client's share, given back
	// if it added neither. Past the share, it is counted with a cap of 1,
	// under which the day keeps counting what it holds and takes nothing
	// new: the client's earlier searches left it holding a query at least
	// (a pair may still be admitted while the day holds none, so one at
	// most a day).
	hold, refused := s.shares.take(sr.ProjectID, shareSearches, s.cfg.Proxies.Addr(r), sr.At)
	dailyCap := s.cfg.Limits.MaxQueriesPerDay
	if refused != shareTaken {
		dailyCap = 1
	}
	folds, err := s.cfg.Store.AddSearches(r.Context(), store.SearchBatch{Searches: []store.Search{sr}, DailyQueryCap: dailyCap})
	if refused == shareTaken && (err != nil || folds.Added == store.SearchDayCounts{}) {
		s.shares.release(hold)
	}
	if err != nil {
		return err
	}
	s.counters.foldedSearches.Add(folds.Searches)
	s.counters.unattributed.Add(folds.Clicks)
	if folds.Searches+folds.Clicks > 0 {
		reason := ReasonCap
		if refused != shareTaken {
			reason = ReasonShare
			s.counters.searchesShare.Add(1)
		}
		s.limited(r, sr.ProjectID, shareSearches, reason, sr.At)
	}
	return nil
}

// parseSearch checks a search event and returns it normalised (see
// store.NormaliseQuery), all but its project and time.
func parseSearch(in searchBody) (store.Search, *input.Problem) {
	var sr store.Search
	switch {
	case in.Query == nil:
		return sr, input.Invalid(`field "query" is required: the text the reader searched for`)
	case len(*in.Query) > maxRawQueryBytes:
		return sr, input.Invalid(`field "query" has %d bytes; at most %d are allowed`, len(*in.Query), maxRawQueryBytes)
	}
	// Line breaks and tabs are white space to a query, folded away below.
	if p := input.TextProblem("query", *in.Query, maxRawQueryBytes, true); p != "" {
		return sr, input.Invalid("%s", p)
	}
	sr.Query = store.NormaliseQuery(*in.Query)
	switch n := utf8.RuneCountInString(sr.Query); {
	case n == 0:
		return sr, input.Invalid(`field "query" must not be blank`)
	case n > store.MaxQueryLength:
		return sr, input.Invalid(`field "query" is %d characters long once normalised; the limit is %d`, n, store.MaxQueryLength)
	}
	if in.ClickedPath != nil && *in.ClickedPath != "" {
		path, bad := sitePath("clickedPath", *in.ClickedPath)
		if bad != nil {
			return sr, bad
		}
		sr.ClickedPath = path
	}
	return sr, nil
}
