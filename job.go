package docsapi

import (
	"encoding/json"
	"fmt"
	"time"
)

// JobStatus is the state of an agent job. The service may add values (it
// added archived after launch), so an unknown status is kept as sent and is
// not terminal: a poller keeps waiting rather than failing on it.
type JobStatus string

// The statuses the contract documents.
const (
	JobStatusActive    JobStatus = "active"    // the agent is working on the prompt
	JobStatusCompleted JobStatus = "completed" // finished; PRLink is set if a pull request was opened
	JobStatusArchived  JobStatus = "archived"  // archived; no further progress
	JobStatusFailed    JobStatus = "failed"    // ended with an unrecoverable error
)

// Terminal reports whether the status is final: completed, archived or failed.
func (s JobStatus) Terminal() bool {
	return s == JobStatusCompleted || s == JobStatusArchived || s == JobStatusFailed
}

// Known reports whether the status is one the contract documents.
func (s JobStatus) Known() bool {
	return s == JobStatusActive || s.Terminal()
}

// Job is a background agent job. Fields the service sends as null decode to
// their zero values: an empty PRLink, an empty Source.Ref, a zero ArchivedAt.
type Job struct {
	// ID identifies the job within its project.
	ID string
	// Status is the job's state; see JobStatus.
	Status JobStatus
	// Source is the repository and ref the agent works on.
	Source JobSource
	// Model names the AI model (or, on a self-hosted server whose project
	// names none, the agent) that runs the job, as the service names it.
	Model string
	// PRLink is the URL of the pull request the job opened. It is empty while
	// the job is active, and may stay empty after completion when no file
	// changed or the project pushes to its branch directly.
	PRLink string
	// CreatedAt is when the job was created, in UTC.
	CreatedAt time.Time
	// ArchivedAt is when the job was archived; zero if it was not.
	ArchivedAt time.Time
}

// JobSource is the repository an agent job works on.
type JobSource struct {
	// Repository names the source repository.
	Repository string
	// Ref is the git branch the agent works on, to which its changes are
	// pushed (the pull request's head); empty when the service sent null.
	Ref string
}

// jobWire is the JSON form of Job. Nullable fields are pointers so that
// encoding writes null, not "", exactly as the hosted service does; times are
// strings so that decoding can accept the ISO 8601 forms RFC 3339 rejects.
type jobWire struct {
	ID         string      `json:"id"`
	Status     JobStatus   `json:"status"`
	Source     *sourceWire `json:"source"`
	Model      string      `json:"model"`
	PRLink     *string     `json:"prLink"`
	CreatedAt  *string     `json:"createdAt"`
	ArchivedAt *string     `json:"archivedAt"`
}

type sourceWire struct {
	Repository string  `json:"repository"`
	Ref        *string `json:"ref"`
}

// MarshalJSON encodes the job in the API's shape, with null for an empty
// PRLink, Source.Ref and ArchivedAt, so that a job a program prints or
// stores as JSON reads as the API sends it, and decodes back to itself.
func (j Job) MarshalJSON() ([]byte, error) { return json.Marshal(j.wire()) }

func (j Job) wire() jobWire {
	return jobWire{
		ID:         j.ID,
		Status:     j.Status,
		Source:     &sourceWire{Repository: j.Source.Repository, Ref: nullString(j.Source.Ref)},
		Model:      j.Model,
		PRLink:     nullString(j.PRLink),
		CreatedAt:  nullTime(j.CreatedAt),
		ArchivedAt: nullTime(j.ArchivedAt),
	}
}

// UnmarshalJSON decodes the API's shape. Unknown fields are ignored and
// nulls become zero values; a malformed timestamp is an error naming the field.
func (j *Job) UnmarshalJSON(data []byte) error { return j.decodeBody(data) }

// decodeBody is UnmarshalJSON without the validation pass json.Unmarshal
// makes before calling it; the pipeline calls it directly.
func (j *Job) decodeBody(data []byte) error {
	var w jobWire
	if err := decodeWire("job", data, &w); err != nil {
		return err
	}
	job, err := w.job("job", "")
	if err != nil {
		return err
	}
	*j = job
	return nil
}

// job returns the job w holds. what names the response and prefix the
// path of w's fields in it ("jobs." in a page), for errors.
func (w *jobWire) job(what, prefix string) (Job, error) {
	created, err := parseTimestamp(what, prefix+"createdAt", w.CreatedAt)
	if err != nil {
		return Job{}, err
	}
	archived, err := parseTimestamp(what, prefix+"archivedAt", w.ArchivedAt)
	if err != nil {
		return Job{}, err
	}
	j := Job{
		ID:         w.ID,
		Status:     w.Status,
		Model:      w.Model,
		PRLink:     deref(w.PRLink),
		CreatedAt:  created,
		ArchivedAt: archived,
	}
	if w.Source != nil {
		j.Source = JobSource{Repository: w.Source.Repository, Ref: deref(w.Source.Ref)}
	}
	return j, nil
}

// timestampLayouts are the ISO 8601 forms accepted in job timestamps, most
// likely first, after normalize: RFC 3339, and the offsets "+00" and "+0000"
// that databases print (PostgreSQL writes "2026-08-14 09:21:07.482+00"). A
// form without a zone is read as UTC, which the contract says every
// timestamp is.
var timestampLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
}

// parseTimestamp reads a timestamp field of the response named what. Null,
// absent and "" are the zero time.
func parseTimestamp(what, field string, s *string) (time.Time, error) {
	if s == nil || *s == "" {
		return time.Time{}, nil
	}
	value := normalizeTimestamp(*s)
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, value); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("docsapi: %s field %s: %q is not an ISO 8601 timestamp", what, field, *s)
}

// normalizeTimestamp rewrites the variants RFC 3339 permits but time.Parse
// rejects: a space or a lower-case "t" between date and time, and a
// lower-case "z" for UTC.
func normalizeTimestamp(s string) string {
	if len(s) <= len("2006-01-02") || (s[10] != ' ' && s[10] != 't' && s[len(s)-1] != 'z') {
		return s
	}
	b := []byte(s)
	if b[10] == ' ' || b[10] == 't' {
		b[10] = 'T'
	}
	if b[len(b)-1] == 'z' {
		b[len(b)-1] = 'Z'
	}
	return string(b)
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
