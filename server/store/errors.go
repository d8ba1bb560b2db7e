package store

import "fmt"

// Error is the type of the errors callers branch on. They are constants, so no
// code can reassign them.
type Error string

// Error returns the text of the error.
func (e Error) Error() string { return "store: " + string(e) }

// The errors a Store returns for conditions callers act on.
const (
	// ErrNotFound: no such project, key or job (a job of another project
	// counts as not found).
	ErrNotFound Error = "not found"
	// ErrConflict: a record with that ID (or that key hash) already exists.
	ErrConflict Error = "already exists"
	// ErrIdempotencyMismatch: an idempotency key was used before for a
	// request with a different hash.
	ErrIdempotencyMismatch Error = "idempotency key was used for a different request"
	// ErrArchived: the job is archived and takes no more prompts.
	ErrArchived Error = "job is archived"
	// ErrLeaseLost: the caller does not hold the job's lease (it expired and
	// another owner claimed the job, the job was archived, or it was never
	// the caller's), or the documentation update's (DocsUpdateStore); or an
	// index write fenced by an update's lease (DocsFence) was refused.
	ErrLeaseLost Error = "lease lost"
	// ErrNoJob: no job is ready to be claimed.
	ErrNoJob Error = "no job to claim"
	// ErrInvalid: an argument the store refuses to keep (an empty ID, a
	// negative count, a time that is not a whole hour, ...). Nothing was
	// stored. The error is an *InvalidError, which says what is wrong.
	ErrInvalid Error = "invalid argument"
	// ErrClosed: the Store was closed.
	ErrClosed Error = "closed"
)

// InvalidError is the error of an argument a Store refuses. It matches
// ErrInvalid. Problem says what is wrong in terms of the argument alone, so
// it can be shown to whoever sent it.
type InvalidError struct {
	Problem string
}

// Invalid returns an *InvalidError whose Problem is formatted as by
// fmt.Sprintf. Every refusal of an argument, by this package or by a
// backend's own limits, is made by it.
func Invalid(format string, args ...any) error {
	return &InvalidError{Problem: fmt.Sprintf(format, args...)}
}

// Error returns the text of the error.
func (e *InvalidError) Error() string { return ErrInvalid.Error() + ": " + e.Problem }

// Is reports whether target is ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }
