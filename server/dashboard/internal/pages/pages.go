package pages

import (
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// Frame is what every page shows around its content.
type Frame struct {
	Title string
	// Base is the dashboard's path as the browser sees it, without the
	// trailing slash ("/dashboard", or "/api/dashboard" under a prefix).
	Base     string
	Project  string   // the project shown; "" on pages of none
	Projects []string // the signed-in key's projects, for the picker
	Section  string   // "overview", "agents", "searches", "conversations", "gaps", "feedback" or "jobs": the navigation's current entry
	// KeyName names the signed-in key (its name, else its ID); "" when
	// nobody is signed in.
	KeyName string
	// CSRF is the token every form of the page sends.
	CSRF string
	// Now is when the page is made, for ages.
	Now time.Time
	// PeriodQuery asks for the period an analytics page shows (Period),
	// which the navigation's links to those pages keep; "" elsewhere.
	PeriodQuery string
}

// Style returns the stylesheet's URL.
func (f Frame) Style() string { return f.Base + "/style.css?v=" + StyleVersion }

// LoginPage is the sign-in form.
type LoginPage struct {
	Frame
	Error  string // why the last attempt failed
	Notice string // why the session ended
}

// Views is the views of a range, human and AI; their total is every view
// the exports count.
type Views struct {
	Human, AI, Total int64
}

// PageViews is the views of one page, and the URL of its own overview.
type PageViews struct {
	Path string
	URL  string
	Views
}

// OverviewPage is a project's traffic over a range of days, or one
// page's (Path).
type OverviewPage struct {
	Frame
	Period
	// Path is the page shown alone, "" for all; AllPages is then the URL
	// of the same range for all pages.
	Path, AllPages string
	Views          Views
	Visitors       store.VisitorTotals
	// Previous is the numbers of the period before (Period.Compare), for
	// the cards' changes: as many days just before, or for month to date
	// and 12 months, the same days of the month or year before.
	Previous Previous
	Chart    Chart
	Top      []PageViews
	TopMore  bool // more pages were viewed than Top lists
	// SeriesCSV and TopCSV are the URLs of the chart's and the top
	// pages' rows as CSV files.
	SeriesCSV, TopCSV string
	// Site is what readers' submissions met today, shown when anything.
	Site SiteToday
}

// Previous is the numbers of the period before the one shown (see
// OverviewPage.Previous).
type Previous struct {
	Views    Views
	Visitors store.VisitorTotals
}

// SiteToday is what the public site endpoints met on the current UTC day,
// as this server process counted it.
type SiteToday struct {
	Feedback, Searches SiteLimits
}

// SiteLimits is what one kind of submission met: the project's daily cap,
// and how many a client's share refused (feedback) or folded (searches).
type SiteLimits struct {
	CapReached   bool
	ShareRefused int64
}

// Any reports whether a cap or a share was met.
func (s SiteToday) Any() bool { return s != SiteToday{} }

// JobsPage is one page of a project's jobs, newest first.
type JobsPage struct {
	Frame
	Status   string            // the filter, "" for any
	Statuses []store.JobStatus // the filter's choices
	Jobs     []store.Job
	Next     string // the next page's URL, "" on the last
	Problem  string
}

// JobPage is one job: its facts and its prompts, and for a key that may
// write, its failure reason and the archive button.
type JobPage struct {
	Frame
	// Job is the job as the page may show it: without FailureReason
	// unless CanWrite.
	Job   store.Job
	Model string // the job's model, as the API names it
	// CanWrite says the key has the write scope. Every control that
	// changes something (the archive form) depends on it and on nothing
	// a caller could set apart from it.
	CanWrite bool
	// Gaps are the content gaps the job was made from, if any.
	Gaps []JobGap
}

// Archivable reports whether the page offers the archive form: to a key
// that may write, for a job not archived yet.
func (p JobPage) Archivable() bool {
	return p.CanWrite && p.Job.Status != store.JobStatusArchived
}

// ErrorPage says why a request failed.
type ErrorPage struct {
	Frame
	Heading, Message string
}

func (LoginPage) file() string    { return "login.html" }
func (OverviewPage) file() string { return "overview.html" }
func (JobsPage) file() string     { return "jobs.html" }
func (JobPage) file() string      { return "job.html" }
func (ErrorPage) file() string    { return "error.html" }
