package server

import (
	"net/http"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// The points of a series when its range is left open: the last 30 days,
// or the last 24 hours.
const (
	defaultSeriesDays  = 30
	defaultSeriesHours = 24
)

// seriesIntervals maps the interval parameter to the points' length.
var seriesIntervals = map[string]time.Duration{
	"hour": time.Hour,
	"day":  24 * time.Hour,
}

// viewsSeries: GET /v1/analytics/{projectId}/views/series, a self-hosted
// addition: the views per hour or day, for an operator's chart, bots
// included (which no export shows).
func (s *Server) viewsSeries(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	q, details := parseSeriesQuery(r.URL.RawQuery, s.now())
	if len(details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", details)
		return
	}
	q.ProjectID = c.Project.ID
	points, err := s.cfg.Store.ViewSeries(r.Context(), q)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "querying the views series")
		return
	}
	out := wire.ViewsSeries{Interval: intervalName(q.Interval), DateFrom: wire.Time(q.From), DateTo: wire.Time(q.To), Path: wire.NullString(q.Path), Points: make([]wire.ViewsPoint, len(points))}
	for i, p := range points {
		out.Points[i] = wire.ViewsPoint{At: wire.Time(p.At), Human: p.Human, AI: p.AI, Bots: p.Bot, Total: p.Human + p.AI}
	}
	respond.JSON(w, http.StatusOK, out)
}

// parseSeriesQuery reads interval (hour or day, day when omitted),
// dateFrom and dateTo, and path, and lists every problem it finds.
//
// The dates follow the views export's rules (a date or a date-time, dateTo
// exclusive), widened to whole points: a point is in the range when any
// part of it is. An omitted dateTo is the end of the hour or day in
// progress, so that it is the last point; an omitted dateFrom is
// defaultSeriesDays (or Hours) before dateTo. A path is normalised as the recorder normalises the paths
// it counts, so /guide/ asks for the views of /guide.
func parseSeriesQuery(raw string, now time.Time) (store.SeriesQuery, []wire.ErrorDetail) {
	qs := newExportQuery(raw)
	q := store.SeriesQuery{Interval: 24 * time.Hour}
	if v, ok := qs.one("interval"); ok {
		if d, known := seriesIntervals[v]; known {
			q.Interval = d
		} else {
			qs.fail("interval must be hour or day, got %q", v)
		}
	}
	from, to := qs.dates()
	if v, ok := qs.one("path"); ok {
		if p := input.PathProblem(v); p != "" {
			qs.fail("path %s", p)
		} else {
			q.Path = pageviews.NormalizePath(v)
		}
	}
	if len(qs.details) > 0 {
		return q, qs.details
	}
	if to.IsZero() {
		to = now.Truncate(q.Interval).Add(q.Interval)
		if !from.IsZero() && from.After(to) {
			qs.fail("dateFrom (%s) is after the current %s, where the range ends when dateTo is omitted", from.Format(time.RFC3339), intervalName(q.Interval))
			return q, qs.details
		}
	}
	if from.IsZero() {
		points := defaultSeriesDays
		if q.Interval == time.Hour {
			points = defaultSeriesHours
		}
		_, end := wholeRange(time.Time{}, to, q.Interval)
		from = end.Add(-time.Duration(points) * q.Interval)
	}
	q.From, q.To = wholeRange(from, to, q.Interval)
	if n := q.Points(); n > store.MaxSeriesPoints {
		hint := "narrow the range"
		if q.Interval == time.Hour {
			hint += ", or ask for interval=day"
		}
		qs.fail("dateFrom (%s) to dateTo (%s) holds %d %ss; a series has at most %d points: %s",
			q.From.Format(time.RFC3339), q.To.Format(time.RFC3339), n, intervalName(q.Interval), store.MaxSeriesPoints, hint)
	}
	return q, qs.details
}

// intervalName is the interval parameter's value for d.
func intervalName(d time.Duration) string {
	if d == time.Hour {
		return "hour"
	}
	return "day"
}
