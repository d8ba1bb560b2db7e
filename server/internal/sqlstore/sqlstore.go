// Package sqlstore is store.Store as every SQL backend runs it: the steps
// of each method (the checks, the transaction, what is read, locked and
// written, and in which order) are written here once, over the statements
// a backend supplies (Backend, Tx), and the change each method makes to a
// record is package store's. A backend (server/sqlite, server/postgres)
// holds only its SQL: how rows are found, locked, read and written, how its
// transactions run, and what its database cannot hold.
//
// The views methods (AddViews, QueryViews), Ping and Close are each
// backend's own.
package sqlstore

import (
	"context"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// Store has the methods of store.Store that the SQL backends share. A
// backend embeds it, so that its own type is the store.Store.
type Store struct{ db Backend }

// New returns the shared methods over db.
func New(db Backend) *Store { return &Store{db: db} }

// Backend is a SQL database as the methods use it.
type Backend interface {
	// Write runs fn in one transaction, which it commits if fn returns
	// nil; fn's error is returned as it is. The rows fn reads through Tx's
	// Lock methods stay as read until the transaction ends.
	Write(ctx context.Context, op string, fn func(Tx) error) error
	// Read runs fn, which only reads; each of Tx's reading methods sees one
	// consistent state of the database.
	Read(ctx context.Context, op string, fn func(Tx) error) error
	// Fail wraps an error of op, the database's or the method's own, with
	// the backend's name and op. Refusals and package store's errors are
	// wrapped, never replaced, so that errors.Is finds them.
	Fail(op string, err error) error
	// CheckPrompt refuses a prompt the database cannot store, with
	// store.Invalid; package store's checks come first.
	CheckPrompt(jobID, prompt string) error
}

// Tx is the statements of one transaction (in Read, of one consistent state
// per method). A missing row is found false, not an error; other errors
// are the database's, returned as they are, unless a method says
// otherwise.
type Tx interface {
	FeedbackTx   // feedback.go
	SearchTx     // searches.go
	SiteTx       // site.go
	SessionTx    // sessions.go
	DocsTx       // docs.go
	DocsUpdateTx // docs_updates.go

	AssistantTx    // assistant.go
	ConversationTx // conversations.go

	// ProjectExists reports whether the project id exists.
	ProjectExists(ctx context.Context, id string) (bool, error)
	// InsertProject stores a new project: store.ErrConflict if its ID, or
	// its domain (when not ""), is taken.
	InsertProject(ctx context.Context, p store.Project) error
	// UpdateProject stores p over the project with its ID, all but
	// CreatedAt: store.ErrConflict if its domain (when not "") is another
	// project's.
	UpdateProject(ctx context.Context, p store.Project) (found bool, err error)
	// Project reads the project id.
	Project(ctx context.Context, id string) (p store.Project, found bool, err error)
	// Projects reads every project, ordered by ID (bytes).
	Projects(ctx context.Context) ([]store.Project, error)

	// InsertKey stores a new key and its sets: store.ErrConflict if its ID
	// or its hash is taken.
	InsertKey(ctx context.Context, k store.APIKey) error
	// KeyByHash reads the key whose hash is hash, with its sets sorted.
	KeyByHash(ctx context.Context, hash []byte) (k store.APIKey, found bool, err error)
	// Keys reads every key with its sets sorted, ordered by CreatedAt (a
	// zero one first), then ID.
	Keys(ctx context.Context) ([]store.APIKey, error)
	// LockKey reads the key id and locks it.
	LockKey(ctx context.Context, id string) (k store.APIKey, found bool, err error)
	// SaveKey stores what RevokeKey changes of k, a key the transaction
	// locked: its RevokedAt.
	SaveKey(ctx context.Context, k store.APIKey) error

	// Job reads the job jobID of the project, with its prompts.
	Job(ctx context.Context, projectID, jobID string) (j store.Job, found bool, err error)
	// ListJobs reads at most q.Limit jobs that q selects, without their
	// prompts, in ListJobs' order, from after q.After; the index on
	// (project, created_at, id) serves it.
	ListJobs(ctx context.Context, q store.JobsQuery) ([]store.Job, error)
	// LockJob reads the job jobID of the project, with its prompts, and
	// locks it.
	LockJob(ctx context.Context, projectID, jobID string) (j store.Job, found bool, err error)
	// LockLeasedJob reads the job jobID whose lease owner holds, expired or
	// not, and locks it. An empty job ID or owner holds no lease.
	LockLeasedJob(ctx context.Context, jobID, owner string) (j store.Job, found bool, err error)
	// LockReadyJob reads the oldest job (CreatedAt, then ID) that is ready
	// at the database's lease time, active and unleased or with a lease
	// that expired before it, and locks it. The lease time is now for a
	// database told the time, and its own clock's for one whose leases
	// follow it (a store.LeaseClock), read once per transaction; leaseNow
	// is that time, which the claim's lease runs from. A job that another
	// transaction holds is passed over, never waited for, nor ever taken
	// twice.
	LockReadyJob(ctx context.Context, now time.Time) (j store.Job, leaseNow time.Time, found bool, err error)
	// JobByID reads the job id.
	JobByID(ctx context.Context, id string) (j store.Job, found bool, err error)
	// InsertJob stores a new job with its prompts: store.ErrConflict if its
	// ID is taken. Its project was found by ProjectExists.
	InsertJob(ctx context.Context, j store.Job) error
	// SaveJob stores j, which a function of package store made of was, the
	// job as the transaction locked it: the fields the job methods change,
	// and the prompts j has beyond was's.
	SaveJob(ctx context.Context, was, j store.Job) error
	// ExtendLease moves the expiry of the lease owner holds on the job to
	// leaseFor after the database's lease time (as for LockReadyJob), if
	// it did not expire before that time (a lease holds through its
	// expiry instant); held is false otherwise.
	ExtendLease(ctx context.Context, jobID, owner string, now time.Time, leaseFor time.Duration) (held bool, err error)
	// AnnounceJobs tells the engines of other processes, once the
	// transaction commits, that a job may have become ready, if the
	// database can.
	AnnounceJobs(ctx context.Context) error

	// ReserveKey looks up idem's key in the project: used is true if the
	// project used it before, with the request hash usedHash, for a write
	// to the job usedBy. If not, a database that can record the key before
	// the job it names exists records it for jobID now, and KeepKey does
	// nothing; another records it at KeepKey.
	ReserveKey(ctx context.Context, projectID string, idem *store.Idempotency, jobID string) (usedHash []byte, usedBy string, used bool, err error)
	// KeepKey records idem's key for jobID, after the write, unless
	// ReserveKey did.
	KeepKey(ctx context.Context, projectID string, idem *store.Idempotency, jobID string) error
}
