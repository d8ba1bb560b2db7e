// Package docsupdate keeps each project's documentation index in step with
// its repository: it runs the updates queued in the store (by the API's
// POST /v1/project/update/{projectId}, after an agent job completes, on an
// interval, and for projects never indexed at start), each a re-read of the
// project's ref through the repository's mirror that reads only the files
// whose blobs changed and writes the index in one atomic UpdateDocs.
//
// Several Updaters, in one process or many, may share a store: an update is
// leased to one of them, as jobs are (store.DocsUpdateStore), and a
// project's updates run one at a time. An Updater that dies leaves a lease
// that lapses; another then takes the update over. One that was only
// paused past its lease (a stopped process, a partition from the
// database) cannot write the commit it read over the newer one its
// successor wrote: the store fences the index write by the update's lease
// (store.DocsFence). A failed update leaves the index as it was, still
// serving.
package docsupdate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/internal/base62"
	"github.com/docsapi/docsapi-go/server/store"
)

// Defaults of Config.
const (
	DefaultLeaseFor        = time.Minute
	DefaultTimeout         = 10 * time.Minute
	DefaultMaxAttempts     = 3
	DefaultPollInterval    = 5 * time.Second
	DefaultRefreshInterval = 10 * time.Minute
	DefaultRetention       = 7 * 24 * time.Hour
)

// Config configures an Updater. Store, Owner and Trees are required.
type Config struct {
	Store store.Store
	// Owner names this Updater in leases, unique among those sharing the
	// store.
	Owner string
	// Trees gives the reader of a project's repository (gitrepo's
	// *Repositories, as the project's jobs use).
	Trees func(ctx context.Context, project store.Project) (TreeReader, error)
	// Options gives how a project's files map to pages; nil: the
	// conventions at the repository's root (docs.Options' zero value).
	Options func(project store.Project) docs.Options
	// Limits bounds each read: TreeSpec's MaxFiles, MaxFileBytes and
	// MaxBytes (their defaults when zero); its other fields are ignored.
	Limits gitrepo.TreeSpec
	// LeaseFor is how long a claim holds an update without a heartbeat:
	// how long a crashed Updater's update waits before it is taken over.
	LeaseFor time.Duration
	// Timeout bounds one update: past it, the update fails and the index
	// keeps serving what it held.
	Timeout     time.Duration
	MaxAttempts int
	// PollInterval is how often an idle Updater looks for updates that
	// another process queued.
	PollInterval time.Duration
	// RefreshInterval is how often every project is re-read without being
	// asked (negative: never); DefaultRefreshInterval when zero.
	RefreshInterval time.Duration
	// Retention is how long an ended update's record is kept (its status
	// answered by the API); DefaultRetention when zero, negative for
	// ever. The refreshes make one a project and interval.
	Retention time.Duration
	// Refresh says which projects the periodic refresh and the first
	// index at start cover; nil: every project.
	Refresh func(project store.Project) bool
	// Now tells the time: the records' times, and on a store told the
	// time its leases. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// OnUpdateEnd, if set, is told of every update this Updater ended.
	OnUpdateEnd func(store.DocsUpdateRecord)
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Store == nil:
		return c, errors.New("docsupdate: Config.Store is nil")
	case c.Owner == "":
		return c, errors.New("docsupdate: Config.Owner is empty")
	case c.Trees == nil:
		return c, errors.New("docsupdate: Config.Trees is nil")
	case c.LeaseFor < 0 || c.Timeout < 0 || c.MaxAttempts < 0 || c.PollInterval < 0:
		return c, errors.New("docsupdate: Config's durations and MaxAttempts must not be negative")
	}
	if c.Options == nil {
		c.Options = func(store.Project) docs.Options { return docs.Options{} }
	}
	c.LeaseFor = cmpOr(c.LeaseFor, DefaultLeaseFor)
	c.Timeout = cmpOr(c.Timeout, DefaultTimeout)
	c.MaxAttempts = cmpOr(c.MaxAttempts, DefaultMaxAttempts)
	c.PollInterval = cmpOr(c.PollInterval, DefaultPollInterval)
	c.RefreshInterval = cmpOr(c.RefreshInterval, DefaultRefreshInterval)
	c.Retention = cmpOr(c.Retention, DefaultRetention)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Updater runs documentation updates. Start it with Run; Queue and the
// hooks queue updates.
type Updater struct {
	cfg  Config
	wake chan struct{}

	mu        sync.Mutex
	refreshed map[string]time.Time // project → when this Updater last queued its periodic refresh
	hooks     sync.WaitGroup       // the queuing JobRunEnded started in the background
}

// New returns an Updater; nothing runs until Run.
func New(cfg Config) (*Updater, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Updater{cfg: cfg, wake: make(chan struct{}, 1), refreshed: map[string]time.Time{}}, nil
}

// Queue queues an update of the project, or joins the one queued already,
// and wakes this Updater. trigger is one of store's DocsTrigger constants.
func (u *Updater) Queue(ctx context.Context, projectID, trigger string) (store.DocsUpdateRecord, error) {
	rec, _, err := u.cfg.Store.CreateDocsUpdate(ctx, store.NewDocsUpdate{
		ID: NewID(), ProjectID: projectID, Trigger: trigger, CreatedAt: u.cfg.Now(),
	})
	if err == nil {
		u.DocsUpdateQueued()
	}
	return rec, err
}

// NewID returns a new update's ID: an update status ID of the API.
func NewID() string { return "upd_" + base62.Random(20) }

// DocsUpdateQueued wakes an idle worker of this Updater: an update was
// queued in this process.
func (u *Updater) DocsUpdateQueued() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// JobRunEnded is the hook for engine.Config.OnRunEnd: a job that
// completed may have changed the project's repository (its branch, or its
// ref once merged), so the project's index is refreshed. It queues in the
// background and returns at once, as OnRunEnd must.
func (u *Updater) JobRunEnded(info engine.RunInfo) {
	if info.Outcome != engine.RunCompleted {
		return
	}
	u.hooks.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := u.Queue(ctx, info.ProjectID, store.DocsTriggerJob); err != nil {
			u.cfg.Logger.Warn("docsupdate: queuing the refresh after a job", slog.String("project_id", info.ProjectID), slog.Any("error", err))
		}
	})
}

// Flush waits until the updates JobRunEnded queues in the background are
// stored (or failed to be): call it before the store closes.
func (u *Updater) Flush() { u.hooks.Wait() }

// RefreshDue queues the refreshes due at now: every project whose index
// is empty, the first time this Updater is asked, and every project this
// Updater has not queued within RefreshInterval. It returns the projects
// queued. Run calls it on a ticker; tests call it with the times they
// choose.
func (u *Updater) RefreshDue(ctx context.Context, now time.Time) ([]string, error) {
	projects, err := u.cfg.Store.Projects(ctx)
	if err != nil {
		return nil, err
	}
	var queued []string
	for _, p := range projects {
		if u.cfg.Refresh != nil && !u.cfg.Refresh(p) {
			continue
		}
		u.mu.Lock()
		last, seen := u.refreshed[p.ID]
		u.mu.Unlock()
		trigger := ""
		switch {
		case !seen:
			state, err := u.cfg.Store.DocsState(ctx, p.ID)
			if err != nil {
				return queued, err
			}
			if len(state.Files) == 0 && state.Commit == "" {
				trigger = store.DocsTriggerStart
			}
			u.mu.Lock()
			u.refreshed[p.ID] = now // the interval counts from the first look
			u.mu.Unlock()
		case u.cfg.RefreshInterval > 0 && !now.Before(last.Add(u.cfg.RefreshInterval)):
			trigger = store.DocsTriggerInterval
		}
		if trigger == "" {
			continue
		}
		if _, _, err := u.cfg.Store.CreateDocsUpdate(ctx, store.NewDocsUpdate{ID: NewID(), ProjectID: p.ID, Trigger: trigger, CreatedAt: now}); err != nil {
			return queued, err
		}
		u.mu.Lock()
		u.refreshed[p.ID] = now
		u.mu.Unlock()
		queued = append(queued, p.ID)
	}
	if len(queued) > 0 {
		u.DocsUpdateQueued()
	}
	return queued, nil
}

// Prune deletes the records of the updates that ended Retention before
// now, and returns how many; none with a negative Retention.
func (u *Updater) Prune(ctx context.Context, now time.Time) (int, error) {
	if u.cfg.Retention < 0 {
		return 0, nil
	}
	return u.cfg.Store.PruneDocsUpdates(ctx, now.Add(-u.cfg.Retention))
}

// Run works until ctx ends: one worker claiming and running updates, the
// first index of the projects never indexed (at once), and, unless
// RefreshInterval is negative, the periodic refresh. An update running
// when ctx ends is abandoned, as a crash would leave it, and taken over
// once its lease lapses.
func (u *Updater) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { u.refreshLoop(ctx) })
	u.worker(ctx)
	wg.Wait()
}

// refreshLoop queues the first indexes and the refreshes due, and prunes
// the records past their retention, at once and then on a ticker: a tenth
// of the interval, so that a project's refresh comes within a tenth of
// the interval of its time (hourly with the refresh off, for the pruning).
func (u *Updater) refreshLoop(ctx context.Context) {
	period := time.Hour
	if u.cfg.RefreshInterval > 0 {
		period = max(u.cfg.RefreshInterval/10, time.Second)
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		now := u.cfg.Now()
		if _, err := u.RefreshDue(ctx, now); err != nil && ctx.Err() == nil {
			u.cfg.Logger.Error("docsupdate: queuing the refreshes", slog.Any("error", err))
		}
		if _, err := u.Prune(ctx, now); err != nil && ctx.Err() == nil {
			u.cfg.Logger.Error("docsupdate: pruning the ended updates", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (u *Updater) worker(ctx context.Context) {
	for ctx.Err() == nil {
		ran, err := u.RunOne(ctx)
		if ran {
			continue
		}
		if err != nil && ctx.Err() == nil {
			u.cfg.Logger.Error("docsupdate: claiming an update", slog.Any("error", err))
		}
		idle := time.NewTimer(u.cfg.PollInterval)
		select {
		case <-ctx.Done():
		case <-u.wake:
		case <-idle.C:
		}
		idle.Stop()
	}
}

// RunOne claims one ready update and runs it to its end; ran is false
// when none was ready. The run stops when ctx ends, recording nothing (the
// update is taken over when its lease lapses), or when its lease is lost.
func (u *Updater) RunOne(ctx context.Context) (ran bool, err error) {
	claimCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	rec, err := u.cfg.Store.ClaimDocsUpdate(claimCtx, store.Claim{
		Owner: u.cfg.Owner, Now: u.cfg.Now(), LeaseFor: u.cfg.LeaseFor, MaxAttempts: u.cfg.MaxAttempts,
	})
	cancel()
	if errors.Is(err, store.ErrNoJob) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	u.run(ctx, rec)
	return true, nil
}

// errLeaseLost ends a run whose lease is gone or about to be.
var errLeaseLost = errors.New("docsupdate: the update's lease was lost")

// run runs a claimed update and records its outcome, unless its lease was
// lost or ctx ended first.
func (u *Updater) run(parent context.Context, rec store.DocsUpdateRecord) {
	log := u.cfg.Logger.With(slog.String("update_id", rec.ID), slog.String("project_id", rec.ProjectID), slog.Int("attempt", rec.Attempts))
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	// The fence: the run stops a margin before its lease could end, unless
	// a heartbeat moved it, so that it never writes once another Updater
	// may have taken the update over.
	margin := max(u.cfg.LeaseFor/10, time.Millisecond)
	fence := time.AfterFunc(u.cfg.LeaseFor-margin, func() { cancel(errLeaseLost) })
	defer fence.Stop()
	hbDone := make(chan struct{})
	hbCtx, stopHB := context.WithCancel(ctx)
	go func() {
		defer close(hbDone)
		tick := time.NewTicker(u.cfg.LeaseFor / 3)
		defer tick.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-tick.C:
			}
			err := u.cfg.Store.ExtendDocsUpdateLease(hbCtx, rec.ID, u.cfg.Owner, u.cfg.Now(), u.cfg.LeaseFor)
			switch {
			case err == nil:
				fence.Reset(u.cfg.LeaseFor - margin)
			case errors.Is(err, store.ErrLeaseLost):
				cancel(errLeaseLost)
				return
			case hbCtx.Err() == nil:
				log.Warn("docsupdate: heartbeat failed; the run stops before its lease ends unless a later one succeeds", slog.Any("error", err))
			}
		}
	}()
	runCtx, cancelTimeout := context.WithTimeoutCause(ctx, u.cfg.Timeout, errTimeout)
	out, err := u.execute(runCtx, rec)
	cause := context.Cause(runCtx)
	cancelTimeout()
	stopHB()
	<-hbDone
	switch {
	case errors.Is(cause, errLeaseLost):
		log.Warn("docsupdate: run abandoned: the lease is gone")
		return
	case errors.Is(err, store.ErrLeaseLost):
		// The store refused the index write: the lease lapsed while this
		// run worked (its process paused, its heartbeats unanswered), and
		// what it read may be older than what the update's next holder
		// writes. Nothing is recorded; the holder, if any, ends the update.
		log.Warn("docsupdate: run abandoned: the lease lapsed before the index was written, which the store refused")
		return
	case parent.Err() != nil:
		log.Info("docsupdate: run abandoned at shutdown; another Updater takes it over when its lease lapses")
		return
	case errors.Is(cause, errTimeout):
		err = fmt.Errorf("the update took longer than %s", u.cfg.Timeout)
	}
	f := finishOf(rec, out, err)
	f.ID, f.Owner, f.At = rec.ID, u.cfg.Owner, u.cfg.Now()
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	stored, ferr := u.cfg.Store.FinishDocsUpdate(sctx, f)
	if ferr != nil {
		log.Error("docsupdate: recording the outcome", slog.Any("error", ferr))
		return
	}
	log.Info("docsupdate: update ended", slog.String("status", string(stored.Status)), slog.String("summary", stored.Summary))
	if u.cfg.OnUpdateEnd != nil {
		u.cfg.OnUpdateEnd(stored)
	}
}

var errTimeout = errors.New("docsupdate: the update's timeout passed")

func (u *Updater) execute(ctx context.Context, rec store.DocsUpdateRecord) (*outcome, error) {
	project, err := u.cfg.Store.Project(ctx, rec.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("loading the project: %w", err)
	}
	reader, err := u.cfg.Trees(ctx, project)
	if err != nil {
		return nil, fmt.Errorf("the project's repository: %w", err)
	}
	fence := func() store.DocsFence {
		return store.DocsFence{UpdateID: rec.ID, Owner: u.cfg.Owner, Now: u.cfg.Now()}
	}
	return reindex(ctx, u.cfg.Store, reader, project, u.cfg.Options(project), gitrepo.TreeSpec{
		MaxFiles: u.cfg.Limits.MaxFiles, MaxFileBytes: u.cfg.Limits.MaxFileBytes, MaxBytes: u.cfg.Limits.MaxBytes,
	}, fence)
}

// finishOf is the record of a run that ended with out or err.
func finishOf(rec store.DocsUpdateRecord, out *outcome, err error) store.DocsUpdateFinish {
	if err != nil {
		f := store.DocsUpdateFinish{Status: store.DocsUpdateFailure,
			Summary: store.CleanDocsText("failed: "+err.Error()+"; the previous index still serves", store.MaxDocsUpdateTextBytes)}
		f.Logs = []string{}
		return f
	}
	f := store.DocsUpdateFinish{Status: store.DocsUpdateSuccess, Summary: summary(out)}
	f.Logs = boundLogs(out.logs)
	c := out.commit
	c.Message = store.CleanDocsText(c.Message, store.MaxDocsUpdateTextBytes)
	c.Ref = store.CleanDocsText(c.Ref, 1024)
	var cut []string
	c.Added, cut = boundFiles(c.Added, "added", cut)
	c.Modified, cut = boundFiles(c.Modified, "modified", cut)
	c.Removed, cut = boundFiles(c.Removed, "removed", cut)
	if len(cut) > 0 && len(f.Logs) < store.MaxDocsUpdateLogs {
		f.Logs = append(f.Logs, cut...)
	}
	f.Commit = c
	return f
}

// summary says what an update did in a sentence.
func summary(o *outcome) string {
	short := o.commit.SHA
	if len(short) > 12 {
		short = short[:12]
	}
	if !o.changed {
		return fmt.Sprintf("no change: the index holds %s already", short)
	}
	changed := len(o.commit.Added) + len(o.commit.Modified)
	if o.full {
		return fmt.Sprintf("%d pages indexed from %d files at %s, every page read (%s)", o.pages, o.read, short, o.why)
	}
	return fmt.Sprintf("%d pages updated from %d changed files, %d files removed, at %s", o.pages, changed, o.removed, short)
}

// boundLogs keeps the log within the record's bounds, saying how many
// lines it left out.
func boundLogs(lines []string) []string {
	out := make([]string, 0, min(len(lines), store.MaxDocsUpdateLogs))
	for i, l := range lines {
		if i == store.MaxDocsUpdateLogs-2 && len(lines) > store.MaxDocsUpdateLogs-1 {
			out = append(out, fmt.Sprintf("… and %d more lines", len(lines)-i))
			break
		}
		out = append(out, store.CleanDocsText(l, store.MaxDocsUpdateLogBytes))
	}
	return out
}

// boundFiles keeps a list of the commit within the record's bounds.
func boundFiles(files []string, what string, cut []string) ([]string, []string) {
	cleaned := make([]string, 0, min(len(files), store.MaxDocsUpdateFiles))
	for _, f := range files {
		if len(cleaned) == store.MaxDocsUpdateFiles {
			cut = append(cut, fmt.Sprintf("%d more files %s, not listed", len(files)-len(cleaned), what))
			break
		}
		cleaned = append(cleaned, store.CleanDocsText(f, 4096))
	}
	return cleaned, cut
}
