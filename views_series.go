package docsapi

import (
	"context"
	"time"
)

// SeriesInterval is the length of a point of a views series.
type SeriesInterval string

// The intervals of a views series.
const (
	SeriesHour SeriesInterval = "hour"
	SeriesDay  SeriesInterval = "day" // UTC days
)

// ViewsSeriesParams selects a views series, a self-hosted addition. The
// zero value asks for the server's defaults: daily points of the last 30
// days.
type ViewsSeriesParams struct {
	// DateFrom is the first instant counted (inclusive), widened to the
	// start of its hour or day. Zero: 30 days (or 24 hours) before DateTo.
	DateFrom DateBound
	// DateTo is the end of the range (exclusive), widened to the end of
	// its hour or day. Zero: now, the current hour or day included.
	DateTo DateBound
	// Interval is the length of a point: SeriesHour or SeriesDay. Empty
	// leaves it to the server (days).
	Interval SeriesInterval
	// Path keeps the views of one page path; "" counts every path.
	Path string
}

func (p ViewsSeriesParams) validate() error {
	if p.Interval != "" && p.Interval != SeriesHour && p.Interval != SeriesDay {
		return invalid("interval", "must be %q or %q, got %q", SeriesHour, SeriesDay, p.Interval)
	}
	return checkDates(p.DateFrom, p.DateTo)
}

func (p ViewsSeriesParams) query() string {
	q := dateQuery(p.DateFrom, p.DateTo)
	setNonEmpty(q, "interval", string(p.Interval))
	setNonEmpty(q, "path", p.Path)
	return q.Encode()
}

// ViewsSeries is the views of a project over time: one point per hour or
// day of the range, those without views included.
type ViewsSeries struct {
	// Interval is the length of each point.
	Interval SeriesInterval
	// DateFrom and DateTo are the range the points cover, [DateFrom,
	// DateTo), after the server widened it to whole intervals.
	DateFrom, DateTo time.Time
	// Path is the page path counted, as the server normalised it; "" for
	// every path.
	Path string
	// Points holds one point per interval, in time order.
	Points []ViewsPoint
}

// ViewsPoint is the views of one hour or day.
type ViewsPoint struct {
	// At is the start of the point's interval, in UTC.
	At time.Time
	// Human and AI are counted as the views export counts them; Total is
	// Human + AI.
	Human, AI, Total int64
	// Bots are the crawlers' and other bots' views, which no export
	// counts: shown here for operators.
	Bots int64
}

type viewsPointWire struct {
	At    *string `json:"at"`
	Human count   `json:"human"`
	AI    count   `json:"ai"`
	Bots  count   `json:"bots"`
	Total count   `json:"total"`
}

type viewsSeriesWire struct {
	Interval SeriesInterval   `json:"interval"`
	DateFrom *string          `json:"dateFrom"`
	DateTo   *string          `json:"dateTo"`
	Path     *string          `json:"path"`
	Points   []viewsPointWire `json:"points"`
}

// UnmarshalJSON decodes a series in the API's shape, counts in any JSON
// number form. points is required.
func (s *ViewsSeries) UnmarshalJSON(b []byte) error { return s.decodeBody(b) }

func (s *ViewsSeries) decodeBody(b []byte) error {
	const what = "views series"
	var w viewsSeriesWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	if w.Points == nil {
		return missingField(what, "points")
	}
	from, err := parseTimestamp(what, "dateFrom", w.DateFrom)
	if err != nil {
		return err
	}
	to, err := parseTimestamp(what, "dateTo", w.DateTo)
	if err != nil {
		return err
	}
	series := ViewsSeries{Interval: w.Interval, DateFrom: from, DateTo: to, Path: deref(w.Path), Points: make([]ViewsPoint, len(w.Points))}
	for i, p := range w.Points {
		at, err := parseTimestamp(what, "points.at", p.At)
		if err != nil {
			return err
		}
		pt := ViewsPoint{At: at, Human: p.Human.n, AI: p.AI.n, Bots: p.Bots.n}
		_, _, pt.Total = counts{p.Human, p.AI, p.Total}.values()
		series.Points[i] = pt
	}
	*s = series
	return nil
}

// ViewsSeries returns the project's views per hour or day: GET
// /v1/analytics/{projectId}/views/series. Self-hosted servers only: the
// hosted service has no series, and answers with an error. The server caps
// the points of one request (1,000 on the self-hosted server); a longer
// range answers 400.
func (s *AnalyticsService) ViewsSeries(ctx context.Context, projectID string, params ViewsSeriesParams, opts ...RequestOption) (*ViewsSeries, error) {
	return getOne[ViewsSeries](ctx, s.client, projectID, params, func(p string) string { return analyticsPath(p, "views/series") }, opts)
}
