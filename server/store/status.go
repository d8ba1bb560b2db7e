package store

// The store's own enumerations: a job's status, and a feedback entry's
// status and source. Their values are the API's strings, which the HTTP
// layer sends as they are and the backends keep as text; they are the
// store's types, not the SDK's, so that the storage layer depends on no
// client and changes with the contract only when the server does.

// JobStatus is where a job stands.
type JobStatus string

// The statuses of a job.
const (
	JobStatusActive    JobStatus = "active"    // waiting for a run, or running
	JobStatusCompleted JobStatus = "completed" // its last run finished
	JobStatusFailed    JobStatus = "failed"    // a run failed for good, or attempts ran out
	JobStatusArchived  JobStatus = "archived"  // archived: no more runs or follow-ups
)

// Known reports whether s is one of the statuses above.
func (s JobStatus) Known() bool {
	switch s {
	case JobStatusActive, JobStatusCompleted, JobStatusFailed, JobStatusArchived:
		return true
	}
	return false
}

// FeedbackSource is where a feedback entry was given, which says which of
// its source-specific fields mean something (see Feedback).
type FeedbackSource string

// The sources of feedback.
const (
	FeedbackSourceCodeSnippet FeedbackSource = "code_snippet" // about a code block
	FeedbackSourceContextual  FeedbackSource = "contextual"   // the page's form, with a comment or a contact
	FeedbackSourceAgent       FeedbackSource = "agent"        // left by an AI agent
	FeedbackSourceThumbsOnly  FeedbackSource = "thumbs_only"  // a vote on the page alone
)

// Known reports whether s is one of the sources above.
func (s FeedbackSource) Known() bool {
	switch s {
	case FeedbackSourceCodeSnippet, FeedbackSourceContextual, FeedbackSourceAgent, FeedbackSourceThumbsOnly:
		return true
	}
	return false
}

// FeedbackStatus is where a feedback entry stands in its triage.
type FeedbackStatus string

// The statuses of feedback; an entry starts pending.
const (
	FeedbackStatusPending    FeedbackStatus = "pending"
	FeedbackStatusInProgress FeedbackStatus = "in_progress"
	FeedbackStatusResolved   FeedbackStatus = "resolved"
	FeedbackStatusDismissed  FeedbackStatus = "dismissed"
)

// Known reports whether s is one of the statuses above.
func (s FeedbackStatus) Known() bool {
	switch s {
	case FeedbackStatusPending, FeedbackStatusInProgress, FeedbackStatusResolved, FeedbackStatusDismissed:
		return true
	}
	return false
}
