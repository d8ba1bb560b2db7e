package storetest_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// docsUpdateMutants are the reference store's deliberate bugs in the
// documentation updates' methods, and the subtests that must fail with
// each; see TestMutantsFail.
var docsUpdateMutants = map[string][]string{
	"updatesNeverJoin":        {"DocsUpdates/SecondCreateJoinsTheQueuedUpdateOnly"},
	"updatesJoinRunning":      {"DocsUpdates/SecondCreateJoinsTheQueuedUpdateOnly"},
	"updatesProjectsParallel": {"DocsUpdates/ClaimTakesOldestAndAProjectsUpdatesOneAtATime"},
	"updatesClaimByID":        {"DocsUpdates/ClaimTakesOldestAndAProjectsUpdatesOneAtATime"},
	"updatesNoTakeover":       {"DocsUpdates/LapsedLeaseIsTakenOverAndTheOldHolderIsLost"},
	"updatesExpiryInclusive":  {"DocsUpdates/LapsedLeaseIsTakenOverAndTheOldHolderIsLost"},
	"updatesAnyOwner":         {"DocsUpdates/LapsedLeaseIsTakenOverAndTheOldHolderIsLost"},
	"updatesExtendLapsed":     {"DocsUpdates/ExtendAfterExpiryIsLost"},
	"updatesEndlessAttempts":  {"DocsUpdates/AttemptsRunOutEndsFailure"},
	"updatesFinishDropsLogs":  {"DocsUpdates/FinishRecordsTheOutcomeOnce"},
	"updatesNilLogs":          {"DocsUpdates/CreateQueuesAndReadsBack"},
	"updatesPruneOpen":        {"DocsUpdates/PruneDeletesOnlyUpdatesEndedBefore"},
	"updatesPruneInclusive":   {"DocsUpdates/PruneDeletesOnlyUpdatesEndedBefore"},
}

func (m *memStore) updates() map[string]*store.DocsUpdateRecord {
	if m.docsUpdates == nil {
		m.docsUpdates = map[string]*store.DocsUpdateRecord{}
	}
	return m.docsUpdates
}

func cloneUpdate(u *store.DocsUpdateRecord) store.DocsUpdateRecord {
	c := *u
	c.Logs = slices.Clone(u.Logs)
	c.Commit.Added, c.Commit.Modified, c.Commit.Removed = slices.Clone(u.Commit.Added), slices.Clone(u.Commit.Modified), slices.Clone(u.Commit.Removed)
	return c
}

func (m *memStore) CreateDocsUpdate(_ context.Context, nu store.NewDocsUpdate) (store.DocsUpdateRecord, bool, error) {
	if err := nu.Validate(); err != nil {
		return store.DocsUpdateRecord{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.projects[nu.ProjectID]; !ok {
		return store.DocsUpdateRecord{}, false, fmt.Errorf("project %q: %w", nu.ProjectID, store.ErrNotFound)
	}
	for _, u := range m.sortedUpdates() {
		joinable := u.Status == store.DocsUpdateQueued || m.is("updatesJoinRunning") && u.Status == store.DocsUpdateInProgress
		if u.ProjectID == nu.ProjectID && joinable && !m.is("updatesNeverJoin") {
			return cloneUpdate(u), true, nil
		}
	}
	if _, taken := m.updates()[nu.ID]; taken {
		return store.DocsUpdateRecord{}, false, fmt.Errorf("docs update %q: %w", nu.ID, store.ErrConflict)
	}
	at := m.norm(nu.CreatedAt)
	u := &store.DocsUpdateRecord{ID: nu.ID, ProjectID: nu.ProjectID, Status: store.DocsUpdateQueued, Trigger: nu.Trigger,
		Logs: []string{}, Commit: store.DocsCommit{Added: []string{}, Modified: []string{}, Removed: []string{}},
		CreatedAt: at, UpdatedAt: at}
	if m.is("updatesNilLogs") {
		u.Logs = nil
	}
	m.updates()[nu.ID] = u
	return cloneUpdate(u), false, nil
}

// sortedUpdates is every update in claim order.
func (m *memStore) sortedUpdates() []*store.DocsUpdateRecord {
	list := make([]*store.DocsUpdateRecord, 0, len(m.updates()))
	for _, u := range m.updates() {
		list = append(list, u)
	}
	slices.SortFunc(list, func(a, b *store.DocsUpdateRecord) int {
		if m.is("updatesClaimByID") {
			return cmp.Compare(a.ID, b.ID)
		}
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return list
}

func (m *memStore) DocsUpdate(_ context.Context, id string) (store.DocsUpdateRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.updates()[id]
	if !ok {
		return store.DocsUpdateRecord{}, fmt.Errorf("docs update %q: %w", id, store.ErrNotFound)
	}
	return cloneUpdate(u), nil
}

// updateLeaseHolds reports whether u's lease holds at now.
func (m *memStore) updateLeaseHolds(u *store.DocsUpdateRecord, now time.Time) bool {
	if u.LeaseOwner == "" {
		return false
	}
	if m.is("updatesNoTakeover") {
		return true
	}
	if m.is("updatesExpiryInclusive") {
		return u.LeaseExpiresAt.After(now)
	}
	return !u.LeaseExpiresAt.Before(now)
}

func (m *memStore) ClaimDocsUpdate(_ context.Context, c store.Claim) (store.DocsUpdateRecord, error) {
	if err := c.Validate(); err != nil {
		return store.DocsUpdateRecord{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.leaseTime(c.Now)
	running := map[string]bool{}
	for _, u := range m.updates() {
		if u.Status == store.DocsUpdateInProgress && m.updateLeaseHolds(u, now) && !m.is("updatesProjectsParallel") {
			running[u.ProjectID] = true
		}
	}
	for _, u := range m.sortedUpdates() {
		open := u.Status == store.DocsUpdateQueued || u.Status == store.DocsUpdateInProgress
		if !open || m.updateLeaseHolds(u, now) || running[u.ProjectID] {
			continue
		}
		if m.is("updatesEndlessAttempts") {
			c.MaxAttempts = 1 << 30
		}
		next, failed := u.Claimed(c, m.norm(now.Add(c.LeaseFor)))
		next.UpdatedAt, next.EndedAt = m.norm(next.UpdatedAt), m.norm(next.EndedAt)
		*u = next
		if !failed {
			return cloneUpdate(u), nil
		}
	}
	return store.DocsUpdateRecord{}, fmt.Errorf("claim docs update: %w", store.ErrNoJob)
}

func (m *memStore) updateHolder(id, owner string) (*store.DocsUpdateRecord, error) {
	u, ok := m.updates()[id]
	if !ok || u.LeaseOwner == "" || u.Status != store.DocsUpdateInProgress || (u.LeaseOwner != owner && !m.is("updatesAnyOwner")) {
		return nil, fmt.Errorf("docs update %q: %w", id, store.ErrLeaseLost)
	}
	return u, nil
}

func (m *memStore) ExtendDocsUpdateLease(_ context.Context, id, owner string, told time.Time, leaseFor time.Duration) error {
	if err := store.ValidateDocsUpdateLease(id, owner, told, leaseFor); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u, err := m.updateHolder(id, owner)
	if err != nil {
		return err
	}
	now := m.leaseTime(told)
	if u.LeaseExpiresAt.Before(now) && !m.is("updatesExtendLapsed") {
		return fmt.Errorf("docs update %q: %w", id, store.ErrLeaseLost)
	}
	u.LeaseExpiresAt = m.norm(now.Add(leaseFor))
	return nil
}

func (m *memStore) FinishDocsUpdate(_ context.Context, f store.DocsUpdateFinish) (store.DocsUpdateRecord, error) {
	if err := f.Validate(); err != nil {
		return store.DocsUpdateRecord{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u, err := m.updateHolder(f.ID, f.Owner)
	if err != nil {
		return store.DocsUpdateRecord{}, err
	}
	if m.is("updatesFinishDropsLogs") {
		f.Logs = nil
	}
	f.At = m.norm(f.At)
	*u = u.Finished(f)
	return cloneUpdate(u), nil
}

func (m *memStore) PruneDocsUpdates(_ context.Context, endedBefore time.Time) (int, error) {
	if endedBefore.IsZero() {
		return 0, store.Invalid("zero time to prune before")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, u := range m.updates() {
		ended := u.Status.Ended() || m.is("updatesPruneOpen")
		before := u.EndedAt.Before(endedBefore) || m.is("updatesPruneInclusive") && u.EndedAt.Equal(endedBefore)
		if ended && before {
			delete(m.updates(), id)
			n++
		}
	}
	return n, nil
}
