package store

import "time"

// MaxSeriesPoints bounds the points one ViewSeries may ask for. Each point
// reads one hour or day roll, which holds up to a day's cap of paths, so
// the bound is what keeps a request's work bounded whatever the range
// asked for: 1,000 points is six weeks of hours or almost three years of
// days, more than a chart has room to draw.
const MaxSeriesPoints = 1000

// SeriesQuery selects the views of a project over time, for ViewSeries:
// one point per Interval from From (inclusive) to To (exclusive), both
// whole intervals in UTC (days start at midnight UTC).
type SeriesQuery struct {
	ProjectID string
	From, To  time.Time
	Interval  time.Duration // time.Hour or 24 * time.Hour
	Path      string        // "": every path
}

// SeriesPoint is the views of one interval: Human and AI as the views
// export counts them, and Bot, the crawlers and other bots that no export
// shows, for operators.
type SeriesPoint struct {
	At             time.Time // the interval's start, UTC
	Human, AI, Bot int64
}

// Points returns how many points q asks for.
func (q SeriesQuery) Points() int {
	if q.Interval <= 0 || !q.To.After(q.From) {
		return 0
	}
	return int(q.To.Sub(q.From) / q.Interval)
}

// Validate returns what makes q unfit for ViewSeries, or nil.
func (q SeriesQuery) Validate() error {
	switch {
	case q.ProjectID == "":
		return Invalid("empty project ID")
	case q.Interval != time.Hour && q.Interval != 24*time.Hour:
		return Invalid("interval %v: must be an hour or a day", q.Interval)
	case q.From.IsZero() || q.To.IsZero():
		return Invalid("a series needs both bounds, from %v to %v", q.From, q.To)
	case !q.From.Equal(q.From.Truncate(q.Interval)):
		return Invalid("from %v does not start an interval of %v", q.From, q.Interval)
	case !q.To.Equal(q.To.Truncate(q.Interval)):
		return Invalid("to %v does not start an interval of %v", q.To, q.Interval)
	case q.To.Before(q.From):
		return Invalid("to %v is before from %v", q.To, q.From)
	case q.Points() > MaxSeriesPoints:
		return Invalid("%d points: at most %d", q.Points(), MaxSeriesPoints)
	}
	return nil
}
