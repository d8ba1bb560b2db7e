package docsapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrorKind is the type of the sentinel errors below. They are constants, so
// no code can reassign them, and errors.Is(err, ErrNotFound) matches an
// *APIError by its status code.
type ErrorKind string

// Error returns the sentinel's description.
func (k ErrorKind) Error() string { return "docsapi: " + string(k) }

// Sentinels for errors.Is. Each *APIError matches the one for its status.
const (
	ErrBadRequest   ErrorKind = "bad request"       // 400: the request is invalid
	ErrUnauthorized ErrorKind = "unauthorized"      // 401: missing, invalid or expired key
	ErrForbidden    ErrorKind = "forbidden"         // 403: the key lacks the scope or address
	ErrNotFound     ErrorKind = "not found"         // 404: no such project or job
	ErrConflict     ErrorKind = "conflict"          // 409: e.g. an idempotency key reused with another body, a bundle of an unfinished export
	ErrRateLimited  ErrorKind = "rate limited"      // 429: the rate budget is spent
	ErrServer       ErrorKind = "server error"      // any 5xx
	ErrInvalidParam ErrorKind = "invalid parameter" // matched by *ValidationError, never sent
)

// APIError is a response with a status code outside 2xx. Use errors.As to
// read its fields and errors.Is to compare it with the sentinels.
type APIError struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// Message is the body's "error" field, or a short excerpt of a body
	// that was not the documented JSON (for example a proxy's HTML page).
	Message string
	// Details holds the analytics endpoints' "details" entries, if any.
	Details []ErrorDetail
	// RequestID is the server's request id header, when one was sent.
	RequestID string
	// RetryAfter is the wait the server asked for in a Retry-After header;
	// zero when the header was absent. When it is longer than the client's
	// cap or than the context has left, the client returns this error
	// instead of sleeping.
	RetryAfter time.Duration
	// Method and Path identify the request. Path has no query string.
	Method, Path string
	// Body is the raw response body, cut to at most 64 KiB.
	Body string
}

// ErrorDetail is one entry of the "details" array of an analytics error.
type ErrorDetail struct {
	Message string `json:"message"`
}

// Error formats the status, message, details and request id on one line.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("docsapi: ")
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Path)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	if text := http.StatusText(e.StatusCode); text != "" {
		b.WriteByte(' ')
		b.WriteString(text)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	for i, d := range e.Details {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(d.Message)
		if i == len(e.Details)-1 {
			b.WriteByte(')')
		}
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " [retry after %s]", e.RetryAfter)
	}
	if e.RequestID != "" {
		b.WriteString(" [request id ")
		b.WriteString(e.RequestID)
		b.WriteByte(']')
	}
	return b.String()
}

// Is reports whether target is the sentinel for e's status code.
func (e *APIError) Is(target error) bool {
	kind, ok := target.(ErrorKind)
	return ok && kind == kindOfStatus(e.StatusCode)
}

// kindOfStatus returns the sentinel an HTTP status matches, or "" for none.
func kindOfStatus(code int) ErrorKind {
	switch {
	case code == http.StatusBadRequest:
		return ErrBadRequest
	case code == http.StatusUnauthorized:
		return ErrUnauthorized
	case code == http.StatusForbidden:
		return ErrForbidden
	case code == http.StatusNotFound:
		return ErrNotFound
	case code == http.StatusConflict:
		return ErrConflict
	case code == http.StatusTooManyRequests:
		return ErrRateLimited
	case code >= 500:
		return ErrServer
	}
	return ""
}

// ValidationError reports an argument the client refused before sending
// anything. It matches ErrInvalidParam with errors.Is.
type ValidationError struct {
	// Param names the argument or field, as the API spells it where it has
	// a wire name (for example "limit" or "prompt").
	Param string
	// Reason says what is wrong with it.
	Reason string
}

// Error names the parameter and the reason.
func (e *ValidationError) Error() string {
	return "docsapi: invalid " + e.Param + ": " + e.Reason
}

// Is matches ErrInvalidParam.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidParam }

func invalid(param, format string, args ...any) error {
	return &ValidationError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// JobFailedError is returned by Wait when the job ended with status failed.
type JobFailedError struct {
	// Job is the job as last retrieved.
	Job *Job
}

// Error names the job.
func (e *JobFailedError) Error() string {
	return "docsapi: agent job " + e.Job.ID + " failed"
}

// WaitTimeoutError is returned by Wait when it stopped before the job reached
// a terminal status: its Timeout elapsed or its context ended. It unwraps to
// the context error (context.DeadlineExceeded or context.Canceled).
type WaitTimeoutError struct {
	// Job is the last job observed, or nil if no poll succeeded. Its ID is
	// enough to wait again later.
	Job *Job
	// Waited is how long Wait ran.
	Waited time.Duration
	// LastErr is the error of the last poll, if it failed.
	LastErr error

	cause error
}

// Error says how long Wait ran and what it last saw.
func (e *WaitTimeoutError) Error() string {
	var id, status string
	if e.Job != nil {
		id, status = e.Job.ID, string(e.Job.Status)
	}
	return stoppedWaiting("agent job", e.Job != nil, id, status, e.Waited, e.cause, e.LastErr)
}

// Unwrap returns the context error that ended the wait.
func (e *WaitTimeoutError) Unwrap() error { return e.cause }

// attemptsError wraps the error of the last attempt after retries ran out.
// It keeps that error (and so errors.Is and errors.As) and adds the count, so
// a log line tells a persistent failure from a one-off.
type attemptsError struct {
	attempts int
	err      error
}

func (e *attemptsError) Error() string {
	return e.err.Error() + " (after " + strconv.Itoa(e.attempts) + " attempts)"
}

func (e *attemptsError) Unwrap() error { return e.err }
