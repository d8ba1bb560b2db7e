// Package ingest is the ingestion endpoint, POST
// /v1/analytics/{projectId}/views, a self-hosted addition for sites not
// served by a Go handler (a static host, a CDN's logs): a strict parser of
// the views sent (the date window, no control or bidirectional characters
// in paths), their classification as the page-view middleware classifies
// requests, the hashing of the visitors they name, and the group commit
// that stores the views of requests arriving together in one AddViews
// before any of them is answered. Package server wires it behind the API's
// authentication.
package ingest

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/strictjson"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// Bounds of one ingestion request.
const (
	maxIngestViews  = 1000
	maxIngestCount  = 1_000_000
	maxIngestHeader = 1024
	// maxIngestFuture tolerates clocks that run a little ahead; views
	// further in the future are a client bug, not traffic.
	maxIngestFuture = time.Hour
)

// minIngestTime is the earliest view accepted: anything older is a broken
// clock or a zero value, not traffic of a documentation site.
var minIngestTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// ingestView is one entry of an ingestion body. The server classifies it
// from userAgent, path and accept, exactly as the middleware classifies a
// request, so that both sources count alike, AI and bot views per agent
// name included.
type ingestView struct {
	Path      *string `json:"path"`
	UserAgent string  `json:"userAgent"`
	Accept    string  `json:"accept"`
	At        string  `json:"at"`
	Count     *int64  `json:"count"`
	// Visitor names the viewer for unique visitors (a site's session or
	// hashed address): hashed with its day's salt and the project, then
	// dropped. Absent, the view counts no visitor.
	Visitor *string `json:"visitor"`
}

// ingestBody is an ingestion body: {"views": [...]}.
type ingestBody struct {
	Views *[]ingestView `json:"views"`
}

// ingestViewFields are the fields of a view, for the message that lists
// them.
var ingestViewFields = strictjson.Fields(reflect.TypeFor[ingestView]())

// Config configures a Handler; package server resolves its values (see
// server.Config's Ingest fields).
type Config struct {
	// Store keeps the views, and their visitors if it keeps visitors
	// (AddVisitors and VisitorSalt).
	Store  store.Store
	Logger *slog.Logger
	Now    func() time.Time
	// Classifier classifies the views sent, as the page-view middleware
	// classifies requests.
	Classifier *traffic.Classifier
	// MaxBodyBytes bounds a request body; a larger one answers 413.
	MaxBodyBytes int64
	// Window, MaxCommit and MaxQueued bound the group commit (see
	// groupCommitter): how long a request's views wait for others at
	// most (≤ 0: no wait), the counts of one commit, and those waiting.
	Window    time.Duration
	MaxCommit int
	MaxQueued int
	// OnCommit, if set, is told of every commit, before its requests are
	// answered.
	OnCommit func(CommitInfo)
}

// Handler serves the ingestion endpoint. It holds no goroutine while no
// request is waiting for a commit, so it needs no Close.
type Handler struct {
	cfg     Config
	commits *groupCommitter
}

// New returns the Handler of cfg.
func New(cfg Config) *Handler {
	return &Handler{cfg: cfg, commits: newGroupCommitter(cfg)}
}

// Stats counts what a Handler stored since it was made.
type Stats struct {
	// Views counts the page views stored (human, AI and bot), whose
	// requests were answered 202.
	Views int64
}

// Stats returns what h stored so far.
func (h *Handler) Stats() Stats {
	return Stats{Views: h.commits.stored.Load()}
}

// RecordViews: POST /v1/analytics/{projectId}/views for the project
// projectID, whose key was admitted already.
//
// The answer 202 means the views are committed to the store: they are
// written by a group commit (see groupCommitter), never held in memory
// after the answer, so a crash loses no view that was acknowledged. Any
// other answer means they were not stored, except when a commit outcome
// could not be told (a 503 after the request ended, which no client reads).
// The views' visitors, if named, are added right after in the same group;
// the answer does not wait for them (see groupCommitter).
//
// It returns what came of the request: a constant of package
// internal/public (Accepted, TooLarge, BadBody, Busy, Cancelled, Error).
func (h *Handler) RecordViews(w http.ResponseWriter, r *http.Request, projectID string) string {
	pending := h.commits.arrive()
	defer pending.leave()
	body, bad := input.ReadBody(w, r, h.cfg.MaxBodyBytes)
	if bad != nil {
		respond.Error(w, bad.Status, bad.Message)
		if bad.Status == http.StatusRequestEntityTooLarge {
			return public.TooLarge
		}
		return public.BadBody
	}
	now := h.cfg.Now()
	counts, visitors, details := parseIngest(body, now, h.cfg.Classifier)
	if len(details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid page views", details)
		return public.BadBody
	}
	var total int64
	for i := range counts {
		counts[i].ProjectID = projectID
		total += counts[i].Human + counts[i].AI + counts[i].Bot
	}
	sketches, err := h.commits.hashVisitors(r.Context(), projectID, counts, visitors, now)
	if err != nil {
		// The views count all the same; their visitors are what is lost.
		h.cfg.Logger.WarnContext(r.Context(), "server: cannot get the visitor salt; these views are counted without their visitors",
			slog.String("request_id", respond.RequestIDFrom(r.Context())), slog.Any("error", err))
	}
	switch err := pending.submit(r.Context(), counts, sketches); {
	case err == nil:
		respond.JSON(w, http.StatusAccepted, map[string]int64{"accepted": total})
		return public.Accepted
	case errors.Is(err, errIngestQueueFull):
		w.Header().Set("Retry-After", "1")
		respond.Error(w, http.StatusServiceUnavailable, "the server is storing too many page views at once; nothing was recorded, retry later")
		return public.Busy
	case errors.Is(err, errIngestCancelled):
		// The client went away (or the server is closing its
		// connections): whatever is written here is likely unread.
		w.Header().Set("Retry-After", "1")
		respond.Error(w, http.StatusServiceUnavailable, "the request ended before its page views were stored")
		return public.Cancelled
	default:
		respond.StoreError(w, r, h.cfg.Logger, err, "project "+respond.Quote(projectID), "recording page views")
		return public.Error
	}
}

// addAgent adds n views of the named agent to agents.
func addAgent(agents []store.AgentCount, name string, class traffic.Class, n int64) []store.AgentCount {
	ac := store.AgentClass(class.String())
	for i := range agents {
		if agents[i].Name == name && agents[i].Class == ac {
			agents[i].Views += n
			return agents
		}
	}
	return append(agents, store.AgentCount{Name: name, Class: ac, Views: n})
}

// parseIngest reads {"views": [...]} and returns one count per view,
// merged by path and hour, and the visitors of the views that name one
// (humans and AI: bots are no visitors), or every problem found.
func parseIngest(body []byte, now time.Time, cl *traffic.Classifier) ([]store.ViewCount, []ingestVisitor, []wire.ErrorDetail) {
	var details []wire.ErrorDetail
	fail := func(format string, args ...any) {
		if len(details) < 20 { // enough to fix a batch without flooding
			details = append(details, wire.ErrorDetail{Message: fmt.Sprintf(format, args...)})
		}
	}
	var in ingestBody
	if bad := input.DecodeJSON(body, &in, strictjson.Options{}); bad != nil {
		fail("%s", bad.Message)
		return nil, nil, details
	}
	switch {
	case in.Views == nil:
		fail(`field "views" is required: an array of {%s}`, input.QuoteFields(ingestViewFields))
	case len(*in.Views) == 0:
		fail(`field "views" is empty`)
	case len(*in.Views) > maxIngestViews:
		fail(`field "views" has %d entries; send at most %d per request`, len(*in.Views), maxIngestViews)
	}
	if len(details) > 0 {
		return nil, nil, details
	}
	merged := map[[2]string]int{}
	var out []store.ViewCount
	var visitors []ingestVisitor
	for i, v := range *in.Views {
		at, n, ok := now, int64(1), true
		where := fmt.Sprintf("views[%d]", i)
		switch {
		case v.Path == nil || *v.Path == "":
			fail("%s.path is required", where)
			ok = false
		default:
			if p := input.PathProblem(*v.Path); p != "" {
				fail("%s.path %s", where, p)
				ok = false
			}
		}
		if len(v.UserAgent) > maxIngestHeader || len(v.Accept) > maxIngestHeader {
			fail("%s: userAgent and accept may have at most %d bytes", where, maxIngestHeader)
			ok = false
		}
		if v.At != "" {
			t, err := time.Parse(time.RFC3339Nano, v.At)
			switch {
			case err != nil:
				fail("%s.at must be an RFC 3339 timestamp, got %q", where, v.At)
				ok = false
			case t.After(now.Add(maxIngestFuture)):
				fail("%s.at (%s) is more than an hour in the future", where, v.At)
				ok = false
			case t.Before(minIngestTime):
				fail("%s.at (%s) is before %s", where, v.At, minIngestTime.Format(time.RFC3339))
				ok = false
			default:
				at = t
			}
		}
		if v.Count != nil {
			if n = *v.Count; n < 1 || n > maxIngestCount {
				fail("%s.count must be from 1 to %d, got %d", where, maxIngestCount, n)
				ok = false
			}
		}
		if v.Visitor != nil {
			if p := visitorProblem(*v.Visitor); p != "" {
				fail("%s.visitor %s", where, p)
				ok = false
			}
		}
		if !ok {
			continue
		}
		path := pageviews.NormalizePath(*v.Path)
		hour := at.UTC().Truncate(time.Hour)
		mk := [2]string{path, hour.Format(time.RFC3339)}
		i, seen := merged[mk]
		if !seen {
			i = len(out)
			merged[mk] = i
			out = append(out, store.ViewCount{Path: path, Hour: hour})
		}
		vc := &out[i]
		class, agent := cl.ClassifyAgent(v.UserAgent, *v.Path, v.Accept)
		switch class {
		case traffic.Human:
			vc.Human += n
		case traffic.AI:
			vc.AI += n
		default:
			vc.Bot += n
		}
		if agent != "" && class != traffic.Human {
			// The name is the classifier's, never the user agent sent:
			// a body of distinct user agents adds no names.
			vc.Agents = addAgent(vc.Agents, agent, class, n)
		}
		if v.Visitor != nil && (class == traffic.Human || class == traffic.AI) { // bots are no visitors
			vi := 0
			if class == traffic.AI {
				vi = 1
			}
			visitors = append(visitors, ingestVisitor{key: *v.Visitor, at: at, count: i, class: vi})
		}
	}
	if len(details) > 0 {
		return nil, nil, details
	}
	return out, visitors, nil
}
