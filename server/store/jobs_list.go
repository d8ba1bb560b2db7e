package store

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// JobKey is a place in the order of ListJobs: a job's CreatedAt and ID.
type JobKey struct {
	CreatedAt time.Time
	ID        string
}

// Key returns j's place in the order of ListJobs.
func (j Job) Key() JobKey { return JobKey{CreatedAt: j.CreatedAt, ID: j.ID} }

// JobFilter selects jobs: those of one project created in [From, To) (a
// zero bound leaves that side open) whose status is one of Statuses
// (empty for any).
type JobFilter struct {
	ProjectID string
	From, To  time.Time
	Statuses  []JobStatus
}

// JobsQuery asks ListJobs for a page.
type JobsQuery struct {
	JobFilter
	Limit int     // jobs per page, at least 1
	After *JobKey // nil: the first page
}

// JobsPage is one page of ListJobs. Its jobs carry no prompts (Prompts is
// empty): a job's history can be long, and a list shows the jobs with a
// line of what they were first told (Summary); Job reads one job whole.
type JobsPage struct {
	Jobs    []Job
	HasMore bool
}

// Bounds of Job.Summary: SummaryScan is how much of the first prompt, in
// characters, it is taken from, so that a list reads a bounded prefix of
// each prompt whatever its length; MaxSummaryLength bounds it, in
// characters.
const (
	SummaryScan      = 1000
	MaxSummaryLength = 120
)

// PromptSummary returns the Summary of a job whose first prompt is text:
// among text's first SummaryScan characters, the first line that holds
// more than white space, with its runs of white space made one space and
// none at either end; a line longer than MaxSummaryLength characters is
// cut to at most MaxSummaryLength-1, at the last space of its second half
// if it has one (a word is not cut), and ends with "…". "" if there is no
// such line.
func PromptSummary(text string) string {
	n := 0
	for i := range text {
		if n == SummaryScan {
			text = text[:i]
			break
		}
		n++
	}
	for line := range strings.Lines(text) {
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		s := strings.Join(words, " ")
		if utf8.RuneCountInString(s) <= MaxSummaryLength {
			return s
		}
		n := 0
		for i := range s {
			if n == MaxSummaryLength-1 {
				cut := s[:i]
				if j := strings.LastIndexByte(cut, ' '); s[i] != ' ' && j >= 0 && utf8.RuneCountInString(cut[:j]) >= MaxSummaryLength/2 {
					cut = cut[:j]
				}
				return strings.TrimRightFunc(cut, unicode.IsSpace) + "…"
			}
			n++
		}
	}
	return ""
}

// Validate returns what makes f unfit to select jobs, or nil.
func (f JobFilter) Validate() error {
	if f.ProjectID == "" {
		return Invalid("empty project ID")
	}
	return validateStatuses(f.Statuses)
}

// Validate returns what makes q unfit for ListJobs, or nil.
func (q JobsQuery) Validate() error {
	if err := q.JobFilter.Validate(); err != nil {
		return err
	}
	if q.After == nil {
		return validatePage(q.Limit, nil, "")
	}
	return validatePage(q.Limit, &q.After.CreatedAt, q.After.ID)
}
