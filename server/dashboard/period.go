package dashboard

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/store"
)

// The analytics pages' periods (the overview, AI & crawlers, searches):
// whole UTC days ending with today's, or a custom range of days (from,
// to), read and offered the same way on each page.

const day = 24 * time.Hour

// dashPeriods are the values of the period parameter, in the picker's
// order, with the picker's names for them.
var dashPeriods = []struct{ name, label string }{
	{"today", "Today"},
	{"7d", "7 days"},
	{"30d", "30 days"},
	{"mtd", "Month to date"},
	{"12m", "12 months"},
	{"custom", "Custom"},
}

// dashDefaultPeriod is the period shown when none is asked for; a
// custom range without one left open starts dashDefaultDays before its
// end.
const (
	dashDefaultPeriod = "30d"
	dashDefaultDays   = 30
)

// dashSpan is a range of whole UTC days, [From, To), as the analytics
// pages show it.
type dashSpan struct {
	Period   string // one of dashPeriods' names
	From, To time.Time
}

// Days returns how many days the span holds.
func (s dashSpan) Days() int { return int(s.To.Sub(s.From) / day) }

// Previous returns the span the pages' cards compare s with: for
// month to date, the previous month up to the same day (or its end); for
// 12 months, the same days a year before; for any other span, as many
// days just before it. The presets so compare with what their names
// promise, not with an odd number of days.
func (s dashSpan) Previous() dashSpan {
	switch s.Period {
	case "mtd":
		from := s.From.AddDate(0, -1, 0)
		return dashSpan{Period: "custom", From: from, To: earliest(from.Add(s.To.Sub(s.From)), s.From)}
	case "12m":
		return dashSpan{Period: "custom", From: s.From.AddDate(-1, 0, 0), To: s.To.AddDate(-1, 0, 0)}
	}
	return dashSpan{Period: "custom", From: s.From.Add(-s.To.Sub(s.From)), To: s.From}
}

// PreviousLabel names the previous span (Previous) after "vs" and after
// "the": "previous month to date", "previous 12 months", "previous day",
// "previous 30 days".
func (s dashSpan) PreviousLabel() string {
	switch n := s.Days(); {
	case s.Period == "mtd":
		return "previous month to date"
	case s.Period == "12m":
		return "previous 12 months"
	case n != 1:
		return fmt.Sprintf("previous %d days", n)
	}
	return "previous day"
}

// Interval returns the length of the chart's bars for a span of days:
// hours up to dashHourlyDays (at most 48 bars), days up to dashDailyDays
// (62 bars), ISO weeks up to dashWeeklyDays (27 bars), months beyond
// (34 bars over the longest range, store.MaxSeriesPoints days). Each
// bound keeps a chart under about 60 bars, wide enough to read on a
// phone.
func (s dashSpan) Interval() pages.Interval {
	switch n := s.Days(); {
	case n <= dashHourlyDays:
		return pages.Hour
	case n <= dashDailyDays:
		return pages.Day
	case n <= dashWeeklyDays:
		return pages.Week
	}
	return pages.Month
}

const (
	dashHourlyDays = 2
	dashDailyDays  = 62
	dashWeeklyDays = 182
)

// Query returns the parameters that ask for s again: the period, or a
// custom range's days.
func (s dashSpan) Query() url.Values {
	q := url.Values{"period": {s.Period}}
	if s.Period == "custom" {
		q.Set("from", s.From.Format(time.DateOnly))
		q.Set("to", s.To.Add(-day).Format(time.DateOnly))
	}
	return q
}

// dashPeriod reads an analytics page's period from q at the time now: period
// (one of dashPeriods, dashDefaultPeriod when absent), or the days of a
// custom range, from and to, both UTC days (YYYY-MM-DD) and both
// included. A range given without period is custom, as the picker's form
// of earlier versions sent it. A problem says what is wrong with what was
// asked for; the span is then the default one.
func dashPeriod(q url.Values, now time.Time) (dashSpan, string) {
	today := now.UTC().Truncate(day)
	tomorrow := today.Add(day)
	period := q.Get("period")
	hasRange := q.Has("from") || q.Has("to")
	if period == "" {
		period = dashDefaultPeriod
		if hasRange {
			period = "custom"
		}
	}
	span := dashSpan{Period: period, To: tomorrow}
	switch period {
	case "today":
		span.From = today
	case "7d":
		span.From = tomorrow.Add(-7 * day)
	case "30d":
		span.From = tomorrow.Add(-30 * day)
	case "mtd":
		span.From = time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	case "12m":
		span.From = time.Date(today.Year(), today.Month()-11, 1, 0, 0, 0, 0, time.UTC)
	case "custom":
		var problem string
		span.From, span.To, problem = dashRange(q, now)
		if problem != "" {
			return dashDefault(now), problem
		}
	default:
		names := make([]string, len(dashPeriods))
		for i, p := range dashPeriods {
			names[i] = p.name
		}
		return dashDefault(now), fmt.Sprintf("period must be one of %s, got %q", strings.Join(names, ", "), period)
	}
	if period != "custom" && hasRange {
		return dashDefault(now), fmt.Sprintf("from and to go with period=custom, not with period=%s", period)
	}
	return span, ""
}

// dashDefault is the span shown when none is asked for, or when what was
// asked for is wrong.
func dashDefault(now time.Time) dashSpan {
	s, _ := dashPeriod(url.Values{"period": {dashDefaultPeriod}}, now)
	return s
}

// dashRange reads dashPeriod's custom range, from and to, both UTC days (YYYY-MM-DD)
// and both included, and returns it as [from, to) in whole days; without
// to, it ends with today's day, and without from, it starts
// dashDefaultDays before its end. A problem says what is wrong with the
// range asked for.
func dashRange(q url.Values, now time.Time) (from, to time.Time, problem string) {
	to = now.UTC().Truncate(day).Add(day)
	from = to.Add(-dashDefaultDays * day)
	parse := func(name string, into *time.Time, shift time.Duration) string {
		v := q.Get(name)
		if v == "" {
			return ""
		}
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return fmt.Sprintf("%s must be a day such as %s, got %q", name, now.UTC().Format(time.DateOnly), v)
		}
		*into = t.Add(shift)
		return ""
	}
	if p := cmp.Or(parse("from", &from, 0), parse("to", &to, day)); p != "" {
		return from, to, p
	}
	if q.Get("from") == "" && q.Get("to") != "" {
		from = to.Add(-dashDefaultDays * day)
	}
	switch days := int(to.Sub(from) / day); {
	case days < 1:
		return from, to, fmt.Sprintf("from (%s) is after to (%s)", from.Format(time.DateOnly), to.Add(-day).Format(time.DateOnly))
	case days > store.MaxSeriesPoints:
		return from, to, fmt.Sprintf("the range holds %d days; the dashboard shows at most %d", days, store.MaxSeriesPoints)
	}
	return from, to, ""
}

// dashBars groups a series' points into the chart's bars of iv over
// [from, to): one bar a point for hours and days; for weeks (ISO weeks,
// from Monday) and months, the points of each, which must be days, added
// up, the first and last bars cut to the range (dashSlot). Bots are not
// charted.
func dashBars(points []store.SeriesPoint, iv pages.Interval, from, to time.Time) []pages.Point {
	var bars []pages.Point
	for _, p := range points {
		start, next := dashSlot(p.At, iv, from, to)
		if n := len(bars); n > 0 && bars[n-1].At.Equal(start) {
			bars[n-1].Human += p.Human
			bars[n-1].AI += p.AI
			continue
		}
		bars = append(bars, pages.Point{At: start, End: next, Human: p.Human, AI: p.AI})
	}
	return bars
}

// dashSlot returns the bar of iv that the point at at (an hour's or a
// day's start) belongs to, [start, next), cut to [from, to): the hour or
// the day itself, its ISO week (from Monday), or its month.
func dashSlot(at time.Time, iv pages.Interval, from, to time.Time) (start, next time.Time) {
	at = at.UTC()
	switch iv {
	case pages.Hour:
		start, next = at, at.Add(time.Hour)
	case pages.Day:
		start, next = at, at.Add(day)
	case pages.Week:
		start = at.AddDate(0, 0, -(int(at.Weekday())+6)%7)
		next = start.AddDate(0, 0, 7)
	default:
		start = time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
		next = start.AddDate(0, 1, 0)
	}
	return latest(start, from), earliest(next, to)
}

// dashPeriodURL returns the URL of a section's page ("overview", "agents",
// "searches") of the frame's project showing span, with params, pairs of
// a name and a value, too (those with an empty value left out).
func dashPeriodURL(f pages.Frame, section string, span dashSpan, params ...string) string {
	v := span.Query()
	for i := 0; i+1 < len(params); i += 2 {
		if params[i+1] != "" {
			v.Set(params[i], params[i+1])
		}
	}
	f.PeriodQuery = v.Encode()
	return f.SectionURL(section)
}

// dashPicker returns the period picker of a section's page showing span:
// its presets' links and its custom form, each keeping keep (pairs of a
// name and a value: the page's own parameters, such as path); problem,
// what was wrong with the request; and the period the cards compare with.
// It sets f's PeriodQuery, so that the navigation keeps span, unless span
// is the default one, which needs no parameter.
func dashPicker(f *pages.Frame, section string, span dashSpan, problem string, keep ...string) pages.Period {
	prev := span.Previous()
	p := pages.Period{
		From: span.From.Format(time.DateOnly), To: span.To.Add(-day).Format(time.DateOnly),
		Custom: span.Period == "custom", Problem: problem,
		Compare: pages.Span{Label: span.PreviousLabel(), From: prev.From.Format(time.DateOnly), To: prev.To.Add(-day).Format(time.DateOnly)},
	}
	for _, preset := range dashPeriods {
		at := dashSpan{Period: preset.name}
		if preset.name == "custom" {
			at = dashSpan{Period: "custom", From: span.From, To: span.To}
		}
		p.Presets = append(p.Presets, pages.Preset{Name: preset.name, Label: preset.label, URL: dashPeriodURL(*f, section, at, keep...), Current: preset.name == span.Period})
	}
	bare := *f
	bare.PeriodQuery = ""
	p.Action = bare.SectionURL(section)
	for i := 0; i+1 < len(keep); i += 2 {
		if keep[i+1] != "" {
			p.Keep = append(p.Keep, pages.Param{Name: keep[i], Value: keep[i+1]})
		}
	}
	p.Asked = []pages.Param{{Name: "period", Value: span.Period}}
	if p.Custom {
		p.Asked = append(p.Asked, pages.Param{Name: "from", Value: p.From}, pages.Param{Name: "to", Value: p.To})
	}
	f.PeriodQuery = ""
	if span.Period != dashDefaultPeriod {
		f.PeriodQuery = span.Query().Encode()
	}
	return p
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
