package pages

import "net/url"

// Period is the period picker the analytics pages share (the overview, AI
// & crawlers, searches, conversations): the presets, the custom range's form, and the
// period the cards compare with. The template "period" in period.html
// draws the picker, "compare" the note naming the previous period.
type Period struct {
	Presets  []Preset
	From, To string // the range's first and last days, YYYY-MM-DD
	Custom   bool   // the range is the custom one, not a preset
	// Action is the URL the custom range's form sends to; Keep is the
	// page's other parameters (its path) that the form sends again.
	Action string
	Keep   []Param
	// Asked is the parameters that ask for this period again, which a
	// page's other forms send as hidden fields.
	Asked []Param
	// Problem is what was wrong with the request: its period, or
	// another of the page's parameters.
	Problem string
	// Compare is the period before, which the cards' changes compare
	// with.
	Compare Span
}

// Preset is a link to a range of the period picker.
type Preset struct {
	Name, Label, URL string // Name is the period parameter's value
	Current          bool
}

// Param is a query parameter a form sends as a hidden field.
type Param struct{ Name, Value string }

// Span names a range of days: Label after "vs" ("previous 30 days",
// "previous day", "previous month to date"), From and To its first and
// last days, YYYY-MM-DD.
type Span struct {
	Label, From, To string
}

// analytics are the sections whose pages take the period, with their
// paths under the project's.
var analytics = map[string]string{"overview": "/", "agents": "/agents", "searches": "/searches", "conversations": "/conversations", "gaps": "/gaps"}

// SectionURL returns the URL of a section of the project: one of the
// analytics pages with the period shown (PeriodQuery), so that moving
// between them keeps it; the others ("feedback", "jobs") without.
func (f Frame) SectionURL(section string) string {
	u := f.Base + "/projects/" + url.PathEscape(f.Project)
	path, ok := analytics[section]
	if !ok {
		return u + "/" + section
	}
	if u += path; f.PeriodQuery != "" {
		u += "?" + f.PeriodQuery
	}
	return u
}
