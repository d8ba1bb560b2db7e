package storetest_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/store"
)

// memStore is a reference store.Store held in memory behind one mutex. It
// exists to check the suite itself: it must pass, and each of its mutants
// (see TestMutantsFail) must fail. It makes package store's checks of its
// inputs, as every backend does, but computes each change of a job itself.
type memStore struct {
	mu       sync.Mutex
	mutant   string           // the name of the deliberate bug, if any
	clock    func() time.Time // set: leases follow it, not the times told (see memClockStore)
	projects map[string]store.Project
	keys     map[string]store.APIKey
	jobs     map[string]*store.Job
	idem     map[[2]string]idemEntry
	views    map[viewKey]store.ViewCount
	agents   map[agentKey]int64 // views per agent (memstore_agents_test.go)
	site     siteState          // feedback, searches, site tokens (memstore_site_test.go)
	visitors visitorState       // unique visitors and salts (memstore_visitors_test.go)
	sessions sessionState       // ended sessions (memstore_sessions_test.go)
	docsData docsState          // the documentation index (memstore_docs_test.go)
	// docsUpdates are the index's updates by ID (memstore_docs_updates_test.go).
	docsUpdates map[string]*store.DocsUpdateRecord

	assistant map[string]store.AssistantKey // assistant keys by ID (memstore_assistant_test.go)
	// conversations are the assistant's threads, exchanges, token days and
	// gap links (memstore_conversations_test.go).
	conversations convState
}

type idemEntry struct {
	hash  []byte
	jobID string
}

type viewKey struct {
	project, path string
	hour          int64
}

func newMemStore(mutant string) *memStore {
	return &memStore{
		mutant:   mutant,
		projects: map[string]store.Project{},
		keys:     map[string]store.APIKey{},
		jobs:     map[string]*store.Job{},
		idem:     map[[2]string]idemEntry{},
		views:    map[viewKey]store.ViewCount{},
	}
}

func (m *memStore) is(mutant string) bool { return m.mutant == mutant }

// memClockStore is the reference store with leases on a clock of its own,
// as PostgreSQL's follow the database's: a store.LeaseClock, which judges
// and sets leases by its clock and ignores the times it is told for them.
type memClockStore struct{ *memStore }

func (m memClockStore) LeaseNow(context.Context) (time.Time, error) {
	return m.norm(m.clock()), nil
}

// leaseTime returns the time the store judges and sets leases by when told
// told: told itself, or its clock's time if it has one.
func (m *memStore) leaseTime(told time.Time) time.Time {
	if m.clock == nil {
		return m.norm(told)
	}
	return m.norm(m.clock())
}

// ready reports whether j is active and unleased, or leased until before
// now, as a claim at now judges it.
func (m *memStore) ready(j *store.Job, now time.Time) bool {
	if j.Status != store.JobStatusActive && !(m.is("claimsFailed") && j.Status == store.JobStatusFailed) {
		return false
	}
	expired := j.LeaseExpiresAt.Before(now)
	if m.is("expiryInclusive") {
		expired = !j.LeaseExpiresAt.After(now)
	}
	if m.is("claimIgnoresLease") {
		expired = true
	}
	return j.LeaseOwner == "" || expired
}

// norm applies the storage conventions: UTC, microseconds, zero kept zero.
func (m *memStore) norm(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	if m.is("keepZone") {
		return t.Truncate(time.Microsecond)
	}
	if m.is("milliseconds") {
		return t.UTC().Truncate(time.Millisecond)
	}
	return t.UTC().Truncate(time.Microsecond)
}

func cloneJob(j *store.Job) store.Job {
	c := *j
	c.Prompts = slices.Clone(j.Prompts)
	return c
}

func (m *memStore) CreateProject(_ context.Context, p store.Project) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := p.Validate(); err != nil && !m.skipsDomainCheck(p) {
		if m.is("storesRefusedProject") {
			m.projects[p.ID] = p
		}
		return err
	}
	if _, ok := m.projects[p.ID]; ok && !m.is("projectOverwrite") {
		return fmt.Errorf("project %q: %w", p.ID, store.ErrConflict)
	}
	if err := m.domainTaken(&p); err != nil {
		return err
	}
	p.CreatedAt = m.norm(p.CreatedAt)
	m.projects[p.ID] = p
	return nil
}

func (m *memStore) UpdateProject(_ context.Context, p store.Project) error {
	if err := p.Validate(); err != nil && !m.skipsDomainCheck(p) {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.projects[p.ID]
	if !ok {
		return fmt.Errorf("project %q: %w", p.ID, store.ErrNotFound)
	}
	if m.is("domainKeptOnUpdate") {
		p.Domain = old.Domain
	}
	if err := m.domainTaken(&p); err != nil && !m.is("domainUpdateUnchecked") {
		return err
	}
	if m.is("updateMergesEmpty") && p.Ref == "" {
		p.Ref = old.Ref
	}
	if !m.is("updateOverwritesCreatedAt") {
		p.CreatedAt = old.CreatedAt
	}
	p.CreatedAt = m.norm(p.CreatedAt)
	m.projects[p.ID] = p
	return nil
}

func (m *memStore) Project(_ context.Context, id string) (store.Project, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.projects[id]
	if !ok {
		return store.Project{}, fmt.Errorf("project %q: %w", id, store.ErrNotFound)
	}
	return p, nil
}

func (m *memStore) Projects(context.Context) ([]store.Project, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []store.Project
	for _, p := range m.projects {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b store.Project) int {
		if m.is("projectsByCreatedAt") {
			return a.CreatedAt.Compare(b.CreatedAt)
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return ps, nil
}

func (m *memStore) CreateKey(_ context.Context, k store.APIKey) error {
	if err := k.Validate(); err != nil && !m.is("keyChecksSkipped") {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.keys[k.ID]; ok {
		return fmt.Errorf("key %q: %w", k.ID, store.ErrConflict)
	}
	for _, o := range m.keys {
		if bytes.Equal(o.Hash, k.Hash) && !m.is("duplicateHash") {
			return fmt.Errorf("key hash: %w", store.ErrConflict)
		}
	}
	k.Hash = bytes.Clone(k.Hash)
	k.Projects = slices.Clone(k.Projects)
	k.Scopes = slices.Clone(k.Scopes)
	if !m.is("unsortedKeyLists") {
		slices.Sort(k.Projects)
		slices.Sort(k.Scopes)
	}
	k.CreatedAt, k.ExpiresAt, k.RevokedAt = m.norm(k.CreatedAt), m.norm(k.ExpiresAt), m.norm(k.RevokedAt)
	m.keys[k.ID] = k
	return nil
}

func (m *memStore) KeyByHash(_ context.Context, hash []byte) (store.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.keys {
		if m.is("hidesRevokedKeys") && !k.RevokedAt.IsZero() {
			continue
		}
		if bytes.Equal(k.Hash, hash) || (m.is("hashPrefixMatch") && len(hash) > 0 && bytes.HasPrefix(k.Hash, hash)) {
			return k, nil
		}
	}
	return store.APIKey{}, fmt.Errorf("key: %w", store.ErrNotFound)
}

func (m *memStore) Keys(context.Context) ([]store.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ks []store.APIKey
	for _, k := range m.keys {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b store.APIKey) int {
		if m.is("keysByID") {
			return cmp.Compare(a.ID, b.ID)
		}
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return ks, nil
}

func (m *memStore) RevokeKey(_ context.Context, id string, at time.Time) error {
	if err := store.ValidateRevokeKey(id, at); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[id]
	if !ok {
		if m.is("revokeMissingIsNil") {
			return nil
		}
		return fmt.Errorf("key %q: %w", id, store.ErrNotFound)
	}
	if k.RevokedAt.IsZero() || m.is("revokeOverwrites") {
		k.RevokedAt = m.norm(at)
	}
	m.keys[id] = k
	return nil
}

// checkIdem looks the idempotency key up: a replay returns the job, a
// mismatch an error, a fresh key neither.
func (m *memStore) checkIdem(projectID string, idem *store.Idempotency) (*store.Job, error) {
	if idem == nil {
		return nil, nil
	}
	k := [2]string{projectID, idem.Key}
	if m.is("globalIdemKeys") {
		k[0] = ""
	}
	e, ok := m.idem[k]
	if !ok {
		return nil, nil
	}
	if !bytes.Equal(e.hash, idem.RequestHash) && !m.is("ignoreHash") {
		return nil, fmt.Errorf("key %q: %w", idem.Key, store.ErrIdempotencyMismatch)
	}
	return m.jobs[e.jobID], nil
}

func (m *memStore) recordIdem(projectID, jobID string, idem *store.Idempotency) {
	if idem == nil {
		return
	}
	k := [2]string{projectID, idem.Key}
	if m.is("globalIdemKeys") {
		k[0] = ""
	}
	m.idem[k] = idemEntry{hash: bytes.Clone(idem.RequestHash), jobID: jobID}
}

func (m *memStore) CreateJob(_ context.Context, nj store.NewJob) (store.Job, bool, error) {
	if err := nj.Validate(); err != nil {
		return store.Job{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.is("recordKeyOnFailure") {
		if _, ok := m.idem[[2]string{nj.ProjectID, keyOf(nj.Idempotency)}]; !ok {
			m.recordIdem(nj.ProjectID, nj.ID, nj.Idempotency)
		}
	}
	if j, err := m.checkIdem(nj.ProjectID, nj.Idempotency); err != nil || j != nil {
		if j != nil && m.is("replayNotFlagged") {
			return cloneJob(j), false, nil
		}
		if j != nil {
			return cloneJob(j), true, nil
		}
		return store.Job{}, false, err
	}
	if _, ok := m.projects[nj.ProjectID]; !ok {
		return store.Job{}, false, fmt.Errorf("project %q: %w", nj.ProjectID, store.ErrNotFound)
	}
	if old, ok := m.jobs[nj.ID]; ok && (old.ProjectID == nj.ProjectID || !m.is("jobIDsPerProject")) {
		return store.Job{}, false, fmt.Errorf("job %q: %w", nj.ID, store.ErrConflict)
	}
	at := m.norm(nj.CreatedAt)
	j := &store.Job{
		ID:         nj.ID,
		ProjectID:  nj.ProjectID,
		Status:     store.JobStatusActive,
		Repository: nj.Repository,
		Ref:        nj.Ref,
		Model:      nj.Model,
		Branch:     nj.Branch,
		Prompts:    []store.Prompt{{Text: nj.Prompt, At: at}},
		CreatedAt:  at,
		UpdatedAt:  at,
	}
	if m.is("dropsBranch") {
		j.Branch = ""
	}
	m.jobs[nj.ID] = j
	m.recordIdem(nj.ProjectID, nj.ID, nj.Idempotency)
	return cloneJob(j), false, nil
}

func keyOf(idem *store.Idempotency) string {
	if idem == nil {
		return ""
	}
	return idem.Key
}

func (m *memStore) job(projectID, jobID string) (*store.Job, error) {
	j, ok := m.jobs[jobID]
	if !ok || (j.ProjectID != projectID && !m.is("jobsAcrossProjects")) {
		return nil, fmt.Errorf("job %q: %w", jobID, store.ErrNotFound)
	}
	return j, nil
}

func (m *memStore) Job(_ context.Context, projectID, jobID string) (store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.job(projectID, jobID)
	if err != nil {
		return store.Job{}, err
	}
	return cloneJob(j), nil
}

func (m *memStore) AddPrompt(_ context.Context, p store.NewPrompt) (store.Job, bool, error) {
	if err := p.Validate(); err != nil {
		return store.Job{}, false, err
	}
	if m.is("promptCapRacy") {
		// The history is read under one lock and appended to under
		// another: follow-ups racing for the last place all take it.
		m.mu.Lock()
		j, err := m.job(p.ProjectID, p.JobID)
		if err == nil {
			err = m.promptRefused(*j, p)
		}
		m.mu.Unlock()
		if err != nil {
			return store.Job{}, false, err
		}
		runtime.Gosched() // widen the race window
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.is("promptCapBeforeReplay") {
		if j, err := m.job(p.ProjectID, p.JobID); err == nil {
			if err := m.promptRefused(*j, p); err != nil {
				return store.Job{}, false, err
			}
		}
	}
	if j, err := m.checkIdem(p.ProjectID, p.Idempotency); err != nil || j != nil {
		if j != nil {
			if m.is("promptReplayAppends") {
				j.Prompts = append(j.Prompts, store.Prompt{Text: p.Prompt, At: m.norm(p.At)})
			}
			return cloneJob(j), true, nil
		}
		return store.Job{}, false, err
	}
	j, err := m.job(p.ProjectID, p.JobID)
	if err != nil {
		return store.Job{}, false, err
	}
	if j.Status == store.JobStatusArchived && !m.is("promptToArchived") {
		return store.Job{}, false, fmt.Errorf("job %q: %w", p.JobID, store.ErrArchived)
	}
	if !m.is("promptCapRacy") {
		if err := m.promptRefused(*j, p); err != nil {
			return store.Job{}, false, err
		}
	}
	at := m.norm(p.At)
	if m.is("promptsPrepended") {
		j.Prompts = append([]store.Prompt{{Text: p.Prompt, At: at}}, j.Prompts...)
	} else {
		j.Prompts = append(j.Prompts, store.Prompt{Text: p.Prompt, At: at})
	}
	if !m.is("promptKeepsStatus") {
		j.Status = store.JobStatusActive
	}
	if !m.is("promptKeepsReason") {
		j.FailureReason = ""
	}
	if m.is("promptClearsPRLink") {
		j.PRLink = ""
	}
	if m.is("promptDropsLease") {
		j.LeaseOwner, j.LeaseExpiresAt = "", time.Time{}
	}
	if j.LeaseOwner == "" && !m.is("promptKeepsAttempts") {
		j.Attempts = 0 // a new run
	}
	j.UpdatedAt = at
	m.recordIdem(p.ProjectID, p.JobID, p.Idempotency)
	return cloneJob(j), false, nil
}

// promptRefused says why p would take j's history past p.Limits, or nil.
func (m *memStore) promptRefused(j store.Job, p store.NewPrompt) error {
	if m.is("promptCapIgnored") {
		return nil
	}
	past := func(n, limit int) bool {
		if m.is("promptCapInclusive") {
			return limit > 0 && n >= limit
		}
		return limit > 0 && n > limit
	}
	length := utf8.RuneCountInString
	if m.is("promptCapCountsBytes") {
		length = func(s string) int { return len(s) }
	}
	chars := length(p.Prompt)
	for _, h := range j.Prompts {
		chars += length(h.Text)
	}
	switch {
	case past(len(j.Prompts)+1, p.Limits.Prompts):
		return store.Invalid("job %q is full: %d prompts", j.ID, len(j.Prompts))
	case past(chars, p.Limits.Characters):
		return store.Invalid("job %q is full: %d characters", j.ID, chars)
	}
	return nil
}

func (m *memStore) ArchiveJob(_ context.Context, projectID, jobID string, at time.Time) (store.Job, error) {
	if err := store.ValidateArchiveJob(projectID, jobID, at); err != nil {
		return store.Job{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.job(projectID, jobID)
	if err != nil {
		return store.Job{}, err
	}
	if j.Status == store.JobStatusArchived && !m.is("rearchive") {
		return cloneJob(j), nil
	}
	j.Status = store.JobStatusArchived
	j.ArchivedAt = m.norm(at)
	j.UpdatedAt = j.ArchivedAt
	if !m.is("archiveKeepsLease") {
		j.LeaseOwner, j.LeaseExpiresAt = "", time.Time{}
	}
	return cloneJob(j), nil
}

func (m *memStore) ClaimJob(_ context.Context, c store.Claim) (store.Job, error) {
	if err := c.Validate(); err != nil {
		return store.Job{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.leaseTime(c.Now)
	judged, from := now, now
	if m.is("claimByToldTime") {
		judged = m.norm(c.Now)
	}
	if m.is("leaseFromToldTime") {
		from = m.norm(c.Now)
	}
	var ready []*store.Job
	for _, j := range m.jobs {
		if m.ready(j, judged) {
			ready = append(ready, j)
		}
	}
	slices.SortFunc(ready, func(a, b *store.Job) int {
		if m.is("claimByID") {
			return cmp.Compare(a.ID, b.ID)
		}
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, j := range ready {
		if j.Attempts >= c.MaxAttempts && !m.is("ignoreMaxAttempts") {
			j.Status = store.JobStatusFailed
			j.FailureReason = fmt.Sprintf("gave up after %d attempts", j.Attempts)
			if !m.is("failedKeepsLease") {
				j.LeaseOwner, j.LeaseExpiresAt = "", time.Time{}
			}
			if m.is("maxAttemptsStops") {
				return store.Job{}, fmt.Errorf("claim: %w", store.ErrNoJob)
			}
			continue
		}
		j.Attempts++
		j.LeaseOwner = c.Owner
		j.LeaseExpiresAt = m.norm(from.Add(c.LeaseFor))
		return cloneJob(j), nil
	}
	return store.Job{}, fmt.Errorf("claim: %w", store.ErrNoJob)
}

// holder returns the job if owner holds its lease.
func (m *memStore) holder(jobID, owner string) (*store.Job, error) {
	j, ok := m.jobs[jobID]
	if !ok || j.LeaseOwner == "" || (j.LeaseOwner != owner && !m.is("anyOwner")) {
		return nil, fmt.Errorf("job %q: %w", jobID, store.ErrLeaseLost)
	}
	return j, nil
}

func (m *memStore) ExtendLease(_ context.Context, jobID, owner string, told time.Time, leaseFor time.Duration) error {
	if err := store.ValidateExtendLease(jobID, told, leaseFor); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.holder(jobID, owner)
	if err != nil {
		return err
	}
	now := m.leaseTime(told)
	judged, from := now, now
	if m.is("extendByToldTime") {
		judged = m.norm(told)
	}
	if m.is("extendFromToldTime") {
		from = m.norm(told)
	}
	if judged.After(j.LeaseExpiresAt) && !m.is("extendIgnoresExpiry") {
		return fmt.Errorf("job %q: %w", jobID, store.ErrLeaseLost)
	}
	until := m.norm(from.Add(leaseFor))
	if m.is("extendOnlyLater") && until.Before(j.LeaseExpiresAt) {
		until = j.LeaseExpiresAt
	}
	if !m.is("extendIgnored") {
		j.LeaseExpiresAt = until
	}
	return nil
}

// JobCounts counts the jobs by status, and the active ones ready at the
// store's lease time, as ClaimJob judges them.
func (m *memStore) JobCounts(_ context.Context, told time.Time) (store.JobCounts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.leaseTime(told)
	if m.is("countsByToldTime") {
		now = m.norm(told)
	}
	var c store.JobCounts
	for _, j := range m.jobs {
		switch j.Status {
		case store.JobStatusActive:
			c.Active++
			if m.ready(j, now) {
				c.Ready++
			}
		case store.JobStatusCompleted:
			c.Completed++
		case store.JobStatusFailed:
			c.Failed++
		case store.JobStatusArchived:
			c.Archived++
		}
	}
	return c, nil
}

func (m *memStore) FinishJob(_ context.Context, f store.Finish) (store.Job, error) {
	if err := f.Validate(); err != nil {
		return store.Job{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.holder(f.JobID, f.Owner)
	if err != nil {
		return store.Job{}, err
	}
	if f.Outcome == store.Completed && f.Handled > len(j.Prompts) && !m.is("finishAnyHandled") {
		return store.Job{}, store.Invalid("Handled %d beyond %d prompts", f.Handled, len(j.Prompts))
	}
	switch f.Outcome {
	case store.Completed:
		if f.PRLink != "" || m.is("finishClearsPRLink") {
			j.PRLink = f.PRLink
		}
		j.Handled = f.Handled
		if f.Handled < len(j.Prompts) && !m.is("finishIgnoresNewPrompts") {
			j.Status = store.JobStatusActive
			if !m.is("finishKeepsAttempts") {
				j.Attempts = 0
			}
		} else {
			j.Status = store.JobStatusCompleted
		}
	case store.Failed:
		j.Status = store.JobStatusFailed
		if !m.is("dropsFailureReason") {
			j.FailureReason = f.FailureReason
		}
	}
	j.UpdatedAt = m.norm(f.At)
	if !m.is("finishKeepsLease") {
		j.LeaseOwner, j.LeaseExpiresAt = "", time.Time{}
	}
	return cloneJob(j), nil
}

func (m *memStore) ReleaseJob(_ context.Context, jobID, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.holder(jobID, owner)
	if err != nil {
		return err
	}
	if !m.is("releaseKeepsAttempt") {
		j.Attempts--
	}
	j.LeaseOwner, j.LeaseExpiresAt = "", time.Time{}
	return nil
}

func (m *memStore) AddViews(_ context.Context, counts []store.ViewCount) error {
	if m.is("racyViews") {
		// Reads and writes under separate locks: concurrent adds are lost.
		for _, c := range counts {
			k := viewKey{c.ProjectID, c.Path, c.Hour.Unix()}
			m.mu.Lock()
			v := m.views[k]
			m.mu.Unlock()
			v.Human += c.Human
			v.AI += c.AI
			runtime.Gosched() // widen the race window
			m.mu.Lock()
			m.views[k] = v
			m.mu.Unlock()
		}
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.is("nonAtomicViews") {
		for _, c := range counts {
			if err := m.validView(c); err != nil {
				return err
			}
		}
	}
	for _, c := range counts {
		if err := m.validView(c); err != nil {
			return err
		}
		k := viewKey{c.ProjectID, c.Path, c.Hour.Unix()}
		v := m.views[k]
		if m.is("viewsOverwrite") {
			v = store.ViewCount{}
		}
		v.Human += c.Human
		v.AI += c.AI
		v.Bot += c.Bot
		m.views[k] = v
		m.addAgents(c)
	}
	return nil
}

func (m *memStore) validView(c store.ViewCount) error {
	if m.is("agentsUnchecked") {
		c.Agents = nil
	}
	if m.is("negativeBot") {
		c.Bot = max(c.Bot, 0)
	}
	if m.is("anyHour") {
		c.Hour = c.Hour.Truncate(time.Hour)
	}
	return c.Validate()
}

func (m *memStore) QueryViews(_ context.Context, q store.ViewsQuery) (store.ViewsResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := q.Validate(); err != nil && !m.is("noQueryValidation") {
		return store.ViewsResult{}, err
	}
	var res store.ViewsResult
	per := map[string]store.Counts{}
	for k, v := range m.views {
		if k.project != q.ProjectID && !m.is("leakProjects") {
			continue
		}
		h := time.Unix(k.hour, 0)
		if !q.From.IsZero() && h.Before(q.From) {
			continue
		}
		if !q.To.IsZero() && !h.Before(q.To) && !m.is("toInclusive") {
			continue
		}
		if m.is("toInclusive") && !q.To.IsZero() && h.After(q.To) {
			continue
		}
		if !m.pathSelected(q.Path, k.path, "viewsIgnorePath", "viewsPathPrefix") {
			continue
		}
		c := per[k.path]
		c.Human += v.Human
		c.AI += v.AI
		if m.is("countsBots") {
			c.Human += v.Bot
		}
		per[k.path] = c
		res.Totals.Human += v.Human
		res.Totals.AI += v.AI
		if m.is("countsBots") {
			res.Totals.Human += v.Bot
		}
	}
	rows := []store.PathCounts{}
	for p, c := range per {
		if c.Human+c.AI > 0 || m.is("listsEmptyRows") {
			rows = append(rows, store.PathCounts{Path: p, Counts: c})
		}
	}
	slices.SortFunc(rows, func(a, b store.PathCounts) int {
		if m.is("orderByHuman") {
			return cmp.Or(cmp.Compare(b.Human, a.Human), cmp.Compare(a.Path, b.Path))
		}
		return cmp.Or(cmp.Compare(b.Human+b.AI, a.Human+a.AI), cmp.Compare(a.Path, b.Path))
	})
	start := min(q.Offset, len(rows))
	end := min(start+q.Limit, len(rows))
	res.Rows = rows[start:end]
	res.HasMore = end < len(rows)
	if m.is("hasMoreOffByOne") {
		res.HasMore = end <= len(rows) && start < len(rows)
	}
	if m.is("nilRows") && len(res.Rows) == 0 {
		res.Rows = nil
	}
	return res, nil
}

func (m *memStore) Ping(context.Context) error {
	if m.is("pingFails") {
		return errors.New("no answer")
	}
	return nil
}

func (m *memStore) Close() error { return nil }
