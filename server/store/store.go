// Package store defines the storage the server needs as one interface, Store,
// that every backend implements, the records it keeps, and the rules every
// backend applies alike: the checks of each input (validate.go) and the
// change each method makes to a job or a key (transitions.go). The backends
// are server/sqlite (embedded, the default) and server/postgres (for
// several replicas); the suite in server/store/storetest checks that each
// behaves exactly as documented here.
//
// Conventions for every method:
//   - Times are stored with microsecond precision and returned in UTC; a zero
//     time.Time means "not set" and is stored as NULL. No method reads a
//     clock: each is told the time it needs, except that a store whose
//     leases follow its database's clock (a LeaseClock, see leaseclock.go)
//     reads that clock for the leases, and for nothing else.
//   - Job IDs are unique across projects, since the lease methods name a job
//     by ID alone.
//   - Lists and Rows are never nil, only empty; paths compare by bytes.
//   - A Job's UpdatedAt is the time given to the last CreateJob, ClaimJob,
//     AddPrompt, ArchiveJob or FinishJob that changed it.
//   - Lists are returned in the order documented, never in storage order.
//   - A method that changes several rows does so atomically.
//   - Errors that callers branch on are the constants of errors.go, matched
//     with errors.Is; backends wrap them with context.
//   - An argument that the checks of validate.go (or a backend's own limits)
//     refuse gets ErrInvalid, and nothing is stored. After Close, every
//     method returns ErrClosed.
package store

import (
	"context"
	"time"
)

// Store is everything the server keeps. Implementations are safe for
// concurrent use, including by several server processes sharing one database.
type Store interface {
	FeedbackStore // readers' feedback (feedback.go)
	SearchStore   // readers' searches (searches.go)
	SiteStore     // the tokens of the public recording endpoints (site.go)
	SessionStore  // the dashboard's sessions ended before their time (sessions.go)
	VisitorStore  // unique visitors and their daily salts (visitors.go)
	AgentStore    // views per AI agent and crawler, by name (agents.go)
	DocsStore     // the documentation index and its search (docs_store.go)
	// DocsUpdateStore: re-reads of projects' repositories into the index
	// (docs_updates.go).
	DocsUpdateStore

	AssistantKeyStore // assistant keys and projects' domains (assistant.go)
	ConversationStore // the assistant's threads, exchanges, token days and gap links (conversations.go)

	// CreateProject stores a new project. ErrConflict if the ID is taken,
	// or if its Domain is another project's.
	CreateProject(ctx context.Context, p Project) error
	// UpdateProject replaces the project's fields except ID and CreatedAt.
	// ErrNotFound if there is no such project; ErrConflict, and nothing
	// changed, if its Domain is another project's.
	UpdateProject(ctx context.Context, p Project) error
	// Project returns one project, or ErrNotFound.
	Project(ctx context.Context, id string) (Project, error)
	// Projects returns every project, ordered by ID.
	Projects(ctx context.Context) ([]Project, error)

	// CreateKey stores a new API key. ErrConflict if its ID or Hash exists.
	CreateKey(ctx context.Context, k APIKey) error
	// KeyByHash returns the key whose Hash equals hash, revoked and expired
	// ones included (the caller decides), or ErrNotFound.
	KeyByHash(ctx context.Context, hash []byte) (APIKey, error)
	// Keys returns every key, ordered by CreatedAt then ID.
	Keys(ctx context.Context) ([]APIKey, error)
	// RevokeKey sets the key's RevokedAt to at, unless it is revoked
	// already, in which case the first time stays. ErrNotFound if no such key.
	RevokeKey(ctx context.Context, id string, at time.Time) error

	// CreateJob stores a new active job whose prompt history is the one
	// prompt (see the function CreateJob). It returns the stored job.
	//
	// With an Idempotency, the pair (ProjectID, Idempotency.Key) is recorded
	// with the request hash in the same transaction. If the pair exists
	// already, nothing is created: with the same RequestHash the job created
	// then is returned with replayed true (whatever its state now); with
	// another hash the error is ErrIdempotencyMismatch. Idempotency keys are
	// shared by CreateJob and AddPrompt within a project.
	//
	// ErrConflict if the job ID is taken; ErrNotFound if the project is not.
	CreateJob(ctx context.Context, j NewJob) (job Job, replayed bool, err error)
	// Job returns a job of the project, or ErrNotFound.
	Job(ctx context.Context, projectID, jobID string) (Job, error)
	// ListJobs returns one page of the jobs q selects, newest first:
	// CreatedAt descending, then ID descending (bytes), without their
	// prompts (see JobsPage). With q.After the page starts after that
	// place in the order, whether or not a job still holds it, so jobs
	// created while a client pages never shift the pages still to come.
	// HasMore reports whether a selected job follows the page. Unknown
	// projects give an empty page.
	ListJobs(ctx context.Context, q JobsQuery) (JobsPage, error)
	// AddPrompt appends a follow-up prompt to the job's history and makes
	// the job active again, as the function AddPrompt says (which also
	// says what becomes of Attempts and the lease). Idempotency works as
	// for CreateJob, the replay returning the job as it is now.
	//
	// ErrNotFound if no such job in the project; ErrArchived if archived;
	// ErrInvalid, naming the cap, if the prompt would take the job's
	// history past p.Limits, as read in the same transaction as the
	// write: however many follow-ups race, the history never passes a
	// cap.
	AddPrompt(ctx context.Context, p NewPrompt) (job Job, replayed bool, err error)
	// ArchiveJob sets the job archived with ArchivedAt at and drops any
	// lease, as the function ArchiveJob says. Archiving an archived job
	// changes nothing and returns it. ErrNotFound if no such job in the
	// project.
	ArchiveJob(ctx context.Context, projectID, jobID string, at time.Time) (Job, error)

	// ClaimJob leases one ready job to c.Owner for c.LeaseFor and returns
	// it with Attempts incremented. A job is ready when it is active and
	// unleased or its lease expired before the store's lease time; the
	// oldest (CreatedAt, then ID) is taken first. The lease ends c.LeaseFor
	// after the lease time. The lease time is c.Now on a store told the
	// time, and the database's clock on a LeaseClock (see leaseclock.go),
	// which then uses c.Now only as the job's UpdatedAt. A ready job whose
	// Attempts already reached c.MaxAttempts is not leased but ends failed,
	// and the claim moves on (Job.Claimed makes both
	// changes).
	// ErrNoJob when none is ready. Two concurrent claims never lease the
	// same job.
	ClaimJob(ctx context.Context, c Claim) (Job, error)
	// ExtendLease moves the lease's expiry to leaseFor after the store's
	// lease time (now, or the database's clock on a LeaseClock), if owner
	// holds the lease and it has not expired before that time (a lease
	// holds up to and including its expiry instant). The new expiry may be
	// earlier than the old one: the engine shortens a lease to wait out a
	// retry delay. ErrLeaseLost otherwise, even if the lease merely
	// expired and nobody claimed the job yet: another owner may claim it
	// at any moment after expiry, so the engine must stop. A store told
	// the time is tested without sleeping.
	ExtendLease(ctx context.Context, jobID, owner string, now time.Time, leaseFor time.Duration) error
	// FinishJob records the outcome of a run by the lease holder and drops
	// the lease, as the function FinishJob says. A lease that expired but
	// that no other owner has claimed is still the holder's: its outcome is
	// kept rather than thrown away. The job is returned as stored.
	// ErrLeaseLost if owner does not hold the lease.
	FinishJob(ctx context.Context, f Finish) (Job, error)
	// ReleaseJob drops owner's lease without an outcome and gives back the
	// attempt, as the function ReleaseJob says. ErrLeaseLost if owner does
	// not hold the lease; as for FinishJob, an expired lease nobody else
	// claimed is still the owner's.
	ReleaseJob(ctx context.Context, jobID, owner string) error

	// AddViews adds each count to the stored counts of its (ProjectID, Path,
	// Hour), creating rows as needed; it never overwrites. The whole batch
	// is applied or none of it. Hour must be whole hours in UTC.
	//
	// A store may cap the distinct paths of a project's UTC day (see
	// DefaultDailyPathCap): a path the day holds already (a row in any of
	// its hours, bot views included) keeps counting, and a path new to
	// the day is admitted while the day holds fewer paths than the cap;
	// past it, the new path's counts are added under OtherPagesPath for
	// their hour instead, so totals stay exact. Within a batch, new paths
	// are admitted in byte order of path. OtherPagesPath itself is always
	// admitted and is not counted. Such a store implements ViewFolder.
	AddViews(ctx context.Context, counts []ViewCount) error
	// QueryViews returns the counts of a project over an hour range: the
	// totals, and one page of per-path rows with Human+AI > 0 ordered by
	// Human+AI descending, then Path ascending. HasMore reports whether a
	// row follows the page. Unknown projects give empty results. With
	// q.Path, the totals are that path's and the rows its row, if any.
	QueryViews(ctx context.Context, q ViewsQuery) (ViewsResult, error)
	// ViewSeries returns the views of a project (of q.Path alone, if set)
	// per interval of q's range: q.Points() points in time order, one
	// for every interval, those without views included (all zero).
	// Unknown projects and paths give zero points.
	ViewSeries(ctx context.Context, q SeriesQuery) ([]SeriesPoint, error)

	// Ping checks that the storage answers.
	Ping(ctx context.Context) error
	// Close releases the storage. The Store is unusable afterwards.
	Close() error
}

// Project is a documentation project: the repository its agent jobs work on
// and the model they use.
type Project struct {
	ID         string
	Name       string
	Repository string // clone URL or local path of the docs repository
	Ref        string // branch the jobs start from; "" means the default branch
	Model      string // the agent's model, reported in jobs
	// Domain is the project's domain identifier, by which the /discovery
	// endpoints address it (the hosted service's domain of
	// domain.mintlify.site): "" for none, else unique across projects and
	// a lower-case DNS label (see DomainProblem).
	Domain    string
	CreatedAt time.Time
}

// Scope is a permission of an API key.
type Scope string

// The scopes of the hosted service: GET and HEAD need read; everything else
// needs write, which implies read.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
)

// APIKey is an admin API key. The secret itself is never stored: only Hash,
// its SHA-256.
type APIKey struct {
	ID        string   // public identifier, for listing and revoking
	Hash      []byte   // SHA-256 of the secret
	Hint      string   // the secret's first characters, for listings
	Name      string   // what the key is for
	Projects  []string // projects the key may use, sorted
	Scopes    []Scope  // sorted
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never expires
	RevokedAt time.Time // zero: not revoked
}

// Job is an agent job with everything the engine needs.
type Job struct {
	ID         string
	ProjectID  string
	Status     JobStatus
	Repository string
	Ref        string
	Model      string
	Branch     string   // the branch the job's changes go to
	Prompts    []Prompt // the create prompt, then each follow-up, in order
	// Summary is what a list shows of the job: PromptSummary of its first
	// prompt. ListJobs sets it, and carries no Prompts; the methods that
	// return Prompts leave it empty.
	Summary string
	// Handled counts the prompts the last completed run took into account.
	Handled       int
	PRLink        string
	FailureReason string // for the operator; not sent to API clients
	Attempts      int    // claims so far (released claims given back)
	LeaseOwner    string
	// LeaseExpiresAt is by the store's lease time: on a LeaseClock, the
	// database's clock, which only that clock can be compared with (a
	// replica's own clock may be minutes off).
	LeaseExpiresAt time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	ArchivedAt     time.Time
}

// Prompt is one instruction in a job's history.
type Prompt struct {
	Text string
	At   time.Time
}

// Idempotency ties a write to the Idempotency-Key its client sent.
type Idempotency struct {
	Key         string
	RequestHash []byte // SHA-256 of what makes two requests the same
}

// NewJob is what CreateJob stores.
type NewJob struct {
	ID          string
	ProjectID   string
	Prompt      string
	Repository  string
	Ref         string
	Model       string
	Branch      string
	CreatedAt   time.Time
	Idempotency *Idempotency // optional
}

// NewPrompt is what AddPrompt stores.
type NewPrompt struct {
	ProjectID   string
	JobID       string
	Prompt      string
	At          time.Time
	Idempotency *Idempotency // optional
	// Limits caps the job's history, this prompt included: a prompt that
	// would take the job past either cap is refused (see the function
	// AddPrompt).
	Limits PromptLimits
}

// PromptLimits caps a job's prompt history, checked by AddPrompt inside
// its write against the history as stored, so that concurrent follow-ups
// never pass a cap together. A zero field caps nothing.
type PromptLimits struct {
	// Prompts is the most prompts a job holds, its first included.
	Prompts int
	// Characters is the most characters (Unicode code points, as the
	// API counts a prompt's length) a job's prompts hold together.
	Characters int
}

// Claim asks ClaimJob for a job.
type Claim struct {
	Owner string
	// Now is the caller's time: the job's UpdatedAt, and on a store told
	// the time (not a LeaseClock) the instant its leases are judged by.
	Now time.Time
	// LeaseFor is how long the lease lasts, from the store's lease time.
	LeaseFor    time.Duration
	MaxAttempts int
}

// Outcome is how a run ended.
type Outcome int

// The outcomes of FinishJob.
const (
	Completed Outcome = iota + 1
	Failed
)

// Finish reports a run's outcome to FinishJob.
type Finish struct {
	JobID         string
	Owner         string
	At            time.Time
	Outcome       Outcome
	PRLink        string // Completed: the pull request, if one exists
	Handled       int    // Completed: how many prompts the run took into account
	FailureReason string // Failed: why
}

// ViewCount is a number of page views of one path in one hour.
type ViewCount struct {
	ProjectID string
	Path      string
	Hour      time.Time // whole hour, UTC
	Human     int64
	AI        int64
	Bot       int64 // crawlers and other bots: kept, never exported as views
	// Agents splits some of the AI and bot views by agent (see
	// AgentStore): their views of class AgentAI add up to at most AI,
	// those of the bot classes to at most Bot. Stored per UTC day, under
	// the path the count is stored under.
	Agents []AgentCount
}

// OtherPagesPath is the path a capped store counts the views of paths
// under once a project's day holds as many distinct paths as its cap (see
// AddViews).
const OtherPagesPath = "/(other pages)"

// DefaultDailyPathCap is the cap on distinct paths per project and UTC day
// of the stores that have one, unless configured otherwise: above what a
// documentation site serves in a day, far below what a script requesting
// made-up paths reaches.
const DefaultDailyPathCap = 50_000

// ViewFolds counts the views a capped store added under OtherPagesPath
// because their path was new to a day past the cap.
type ViewFolds struct {
	Counts int64 // counts (one path's views in one hour) folded
	Views  int64 // their human, AI and bot views
}

// ViewFolder is implemented by stores that cap the distinct paths of a
// project's day (see AddViews).
type ViewFolder interface {
	// ViewFolds returns what AddViews has folded since the store was
	// opened, in this process: the caller compares two readings, and
	// logs or exports the difference.
	ViewFolds() ViewFolds
}

// ViewsQuery selects counts for QueryViews. An hour H is counted when
// From <= H < To, with From and To whole hours; a zero From or To leaves that
// side open.
type ViewsQuery struct {
	ProjectID string
	From, To  time.Time
	Limit     int // rows per page, at least 1
	Offset    int // rows to skip, at least 0
	// Path, if set, selects one path: the totals are its own, and the
	// rows its row alone, if it has one (at offset 0). "": every path.
	Path string
}

// Counts is human and AI views; their total is Human+AI.
type Counts struct {
	Human, AI int64
}

// PathCounts is the counts of one path.
type PathCounts struct {
	Path string
	Counts
}

// ViewsResult is one page of QueryViews.
type ViewsResult struct {
	Totals  Counts
	Rows    []PathCounts
	HasMore bool
}

// JobNotifier is implemented by stores that can tell engines in other
// processes that a job became ready (PostgreSQL's LISTEN/NOTIFY). An engine
// whose store has it starts such jobs at once instead of at its next poll.
type JobNotifier interface {
	// JobNotifications returns a channel that receives a value soon after
	// any process sharing the store creates a job or adds a prompt, until
	// ctx ends (then the channel is closed). Notifications may be merged,
	// and some may be lost while a connection is re-established, so engines
	// keep polling as well.
	JobNotifications(ctx context.Context) (<-chan struct{}, error)
}
