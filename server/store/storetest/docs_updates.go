package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docsapi/docsapi-go/server/store"
)

// testDocsUpdates checks the documentation updates' queue
// (store.DocsUpdateStore): creations joining a queued update, claims that
// run a project's updates one at a time, leases taken over when they
// lapse, attempts that run out, and outcomes recorded by the holder only.
func testDocsUpdates(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"CreateQueuesAndReadsBack", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			u, joined, err := s.CreateDocsUpdate(t.Context(), newDocsUpdate("u1", "p1", At(time.Second)))
			must(t, "CreateDocsUpdate", err)
			want := store.DocsUpdateRecord{ID: "u1", ProjectID: "p1", Status: store.DocsUpdateQueued, Trigger: store.DocsTriggerAPI,
				Logs: []string{}, Commit: emptyCommit(), CreatedAt: At(time.Second), UpdatedAt: At(time.Second)}
			if joined {
				t.Errorf("CreateDocsUpdate of a project without a queued update: joined = true")
			}
			diff(t, "CreateDocsUpdate", want, u)
			got, err := s.DocsUpdate(t.Context(), "u1")
			must(t, "DocsUpdate", err)
			diff(t, "DocsUpdate", want, got)
			if got.Logs == nil || got.Commit.Added == nil {
				t.Errorf("DocsUpdate: Logs %#v, Added %#v; want empty, not nil", got.Logs, got.Commit.Added)
			}
			checkTimes(t, "DocsUpdate", got.CreatedAt, got.UpdatedAt)
			_, err = s.DocsUpdate(t.Context(), "nope")
			wantErr(t, "DocsUpdate of an unknown ID", err, store.ErrNotFound)
			_, _, err = s.CreateDocsUpdate(t.Context(), newDocsUpdate("u2", "ghost", At(0)))
			wantErr(t, "CreateDocsUpdate of an unknown project", err, store.ErrNotFound)
			_, _, err = s.CreateDocsUpdate(t.Context(), store.NewDocsUpdate{ID: "u3", ProjectID: "p1", CreatedAt: At(0)})
			wantErr(t, "CreateDocsUpdate without a trigger", err, store.ErrInvalid)
		}},
		{"SecondCreateJoinsTheQueuedUpdateOnly", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			first := mustCreateUpdate(t, s, newDocsUpdate("u1", "p1", At(0)))
			again, joined, err := s.CreateDocsUpdate(t.Context(), newDocsUpdate("u2", "p1", At(time.Second)))
			must(t, "second CreateDocsUpdate", err)
			if !joined || again.ID != first.ID {
				t.Errorf("second CreateDocsUpdate while u1 is queued: got %q joined %v, want u1 joined", again.ID, joined)
			}
			if _, err := s.DocsUpdate(t.Context(), "u2"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the joined update u2 was stored: DocsUpdate error %v", err)
			}
			other := mustCreateUpdate(t, s, newDocsUpdate("u3", "p2", At(time.Second)))
			if other.ID != "u3" {
				t.Errorf("another project's creation joined %q", other.ID)
			}
			// Once claimed, the update reads the repository as it is then;
			// a creation after that queues a new one.
			mustClaimUpdate(t, s, "w1", At(time.Minute), "u1")
			third, joined, err := s.CreateDocsUpdate(t.Context(), newDocsUpdate("u4", "p1", At(2*time.Minute)))
			must(t, "CreateDocsUpdate while u1 runs", err)
			if joined || third.ID != "u4" {
				t.Errorf("CreateDocsUpdate while u1 runs: got %q joined %v, want a new update u4", third.ID, joined)
			}
			mustProject(t, s, "p3")
			_, _, err = s.CreateDocsUpdate(t.Context(), newDocsUpdate("u1", "p3", At(3*time.Minute)))
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("CreateDocsUpdate with a taken ID: error %v, want %v", err, store.ErrConflict)
			}
		}},
		{"ClaimTakesOldestAndAProjectsUpdatesOneAtATime", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			mustCreateUpdate(t, s, newDocsUpdate("b", "p1", At(0)))
			mustCreateUpdate(t, s, newDocsUpdate("a", "p2", At(time.Second)))
			now := At(time.Minute)
			u := mustClaimUpdate(t, s, "w1", now, "b")
			if u.Status != store.DocsUpdateInProgress || u.Attempts != 1 || u.LeaseOwner != "w1" || u.LeaseExpiresAt.IsZero() {
				t.Errorf("claimed update: status %q, attempts %d, owner %q, expiry %v; want in_progress, 1, w1, set",
					u.Status, u.Attempts, u.LeaseOwner, u.LeaseExpiresAt)
			}
			checkTimes(t, "claimed update", u.LeaseExpiresAt, u.UpdatedAt)
			// p1's next update waits while b runs.
			mustCreateUpdate(t, s, newDocsUpdate("c", "p1", At(2*time.Second)))
			mustClaimUpdate(t, s, "w2", now, "a")
			wantNoUpdate(t, s, "while p1's update b runs and p2's a runs", now)
			finishUpdate(t, s, "b", "w1", now, store.DocsUpdateSuccess)
			mustClaimUpdate(t, s, "w2", now, "c")
		}},
		{"LapsedLeaseIsTakenOverAndTheOldHolderIsLost", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateUpdate(t, s, newDocsUpdate("u1", "p1", At(0)))
			c := store.Claim{Owner: "w1", Now: At(time.Minute), LeaseFor: lt.lapsing(leaseFor), MaxAttempts: maxAttempts}
			first, err := s.ClaimDocsUpdate(t.Context(), c)
			must(t, "ClaimDocsUpdate", err)
			if lt.toldTime() {
				wantNoUpdate(t, s, "at the instant the lease expires", first.LeaseExpiresAt)
			}
			told := updateOnceEnded(lt, first, first.LeaseExpiresAt.Add(time.Microsecond))
			second := mustClaimUpdate(t, s, "w2", told, "u1")
			if second.Attempts != 2 || second.LeaseOwner != "w2" || second.Status != store.DocsUpdateInProgress {
				t.Errorf("taken over: attempts %d, owner %q, status %q; want 2, w2, in_progress", second.Attempts, second.LeaseOwner, second.Status)
			}
			_, err = s.FinishDocsUpdate(t.Context(), finishOf("u1", "w1", told, store.DocsUpdateSuccess))
			wantErr(t, "FinishDocsUpdate by the old holder", err, store.ErrLeaseLost)
			err = s.ExtendDocsUpdateLease(t.Context(), "u1", "w1", told, leaseFor)
			wantErr(t, "ExtendDocsUpdateLease by the old holder", err, store.ErrLeaseLost)
			must(t, "ExtendDocsUpdateLease by the holder", s.ExtendDocsUpdateLease(t.Context(), "u1", "w2", told, leaseFor))
			got, err := s.DocsUpdate(t.Context(), "u1")
			must(t, "DocsUpdate", err)
			if got.Status != store.DocsUpdateInProgress || got.LeaseOwner != "w2" {
				t.Errorf("after the old holder's calls: status %q owner %q, want in_progress w2", got.Status, got.LeaseOwner)
			}
		}},
		{"ExtendAfterExpiryIsLost", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateUpdate(t, s, newDocsUpdate("u1", "p1", At(0)))
			c := store.Claim{Owner: "w1", Now: At(time.Minute), LeaseFor: lt.lapsing(leaseFor), MaxAttempts: maxAttempts}
			u, err := s.ClaimDocsUpdate(t.Context(), c)
			must(t, "ClaimDocsUpdate", err)
			told := updateOnceEnded(lt, u, u.LeaseExpiresAt.Add(time.Microsecond))
			err = s.ExtendDocsUpdateLease(t.Context(), "u1", "w1", told, leaseFor)
			wantErr(t, "ExtendDocsUpdateLease after expiry", err, store.ErrLeaseLost)
			// Nobody claimed it: the holder's outcome is still kept.
			got, err := s.FinishDocsUpdate(t.Context(), finishOf("u1", "w1", told, store.DocsUpdateFailure))
			must(t, "FinishDocsUpdate by the holder of a lapsed lease nobody claimed", err)
			if got.Status != store.DocsUpdateFailure {
				t.Errorf("status %q, want failure", got.Status)
			}
		}},
		{"AttemptsRunOutEndsFailure", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateUpdate(t, s, newDocsUpdate("u1", "p1", At(0)))
			told := At(time.Minute)
			var last store.DocsUpdateRecord
			for i := range 2 {
				var err error
				last, err = s.ClaimDocsUpdate(t.Context(), store.Claim{Owner: "w", Now: told, LeaseFor: lt.lapsing(leaseFor), MaxAttempts: 2})
				must(t, "ClaimDocsUpdate", err)
				if last.Attempts != i+1 {
					t.Fatalf("claim %d: attempts %d", i+1, last.Attempts)
				}
				told = updateOnceEnded(lt, last, last.LeaseExpiresAt.Add(time.Microsecond))
			}
			_, err := s.ClaimDocsUpdate(t.Context(), store.Claim{Owner: "w", Now: told, LeaseFor: leaseFor, MaxAttempts: 2})
			wantErr(t, "ClaimDocsUpdate once the attempts ran out", err, store.ErrNoJob)
			got, err := s.DocsUpdate(t.Context(), "u1")
			must(t, "DocsUpdate", err)
			if got.Status != store.DocsUpdateFailure || got.LeaseOwner != "" || got.EndedAt.IsZero() || got.Summary == "" {
				t.Errorf("after the attempts ran out: status %q owner %q ended %v summary %q; want failure, no lease, ended, a summary",
					got.Status, got.LeaseOwner, got.EndedAt, got.Summary)
			}
		}},
		{"FinishRecordsTheOutcomeOnce", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateUpdate(t, s, newDocsUpdate("u1", "p1", At(0)))
			claimed := mustClaimUpdate(t, s, "w1", At(time.Minute), "u1")
			f := finishOf("u1", "w1", At(2*time.Minute), store.DocsUpdateSuccess)
			f.Summary = "2 pages updated, 1 removed"
			f.Logs = []string{"docs/big.mdx: skipped: too large", "docs/a.mdx:3: front matter: bad line"}
			f.Commit = store.DocsCommit{SHA: "0123abcd", Ref: "main", Message: "Docs: more\n\nbody", Added: []string{"a.mdx"},
				Modified: []string{"b.mdx", "docs.json"}, Removed: []string{"c.md"}}
			got, err := s.FinishDocsUpdate(t.Context(), f)
			must(t, "FinishDocsUpdate", err)
			want := claimed
			want.Status, want.Summary, want.Logs, want.Commit = f.Status, f.Summary, f.Logs, f.Commit
			want.LeaseOwner, want.LeaseExpiresAt, want.EndedAt, want.UpdatedAt = "", time.Time{}, f.At, f.At
			diff(t, "FinishDocsUpdate", want, got)
			read, err := s.DocsUpdate(t.Context(), "u1")
			must(t, "DocsUpdate", err)
			diff(t, "DocsUpdate after the finish", want, read)
			_, err = s.FinishDocsUpdate(t.Context(), finishOf("u1", "w1", At(3*time.Minute), store.DocsUpdateFailure))
			wantErr(t, "second FinishDocsUpdate", err, store.ErrLeaseLost)
			wantNoUpdate(t, s, "after the finish", At(time.Hour))
			bad := finishOf("u1", "w1", At(3*time.Minute), store.DocsUpdateInProgress)
			_, err = s.FinishDocsUpdate(t.Context(), bad)
			wantErr(t, "FinishDocsUpdate with a status that is no outcome", err, store.ErrInvalid)
		}},
		{"IndexWriteIsFencedByTheUpdatesLease", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			// The holder writes; anyone else's write, or one naming
			// another project's index, is refused and changes nothing.
			mustCreateUpdate(t, s, newDocsUpdate("u1", "p1", At(0)))
			held := mustClaimUpdate(t, s, "w1", At(time.Minute), "u1")
			during := updateWhileHeld(lt, held, At(time.Minute))
			must(t, "UpdateDocs fenced by the holder", s.UpdateDocs(t.Context(), fencedDocs("p1", "c1", "u1", "w1", during)))
			want := wantIndex(t, s, "p1", "c1")
			refusedWrite(t, s, "by another owner", fencedDocs("p1", "stale", "u1", "w2", during), want)
			refusedWrite(t, s, "of an unknown update", fencedDocs("p1", "stale", "nope", "w1", during), want)
			empty := wantIndex(t, s, "p2", "")
			refusedWrite(t, s, "of another project's index", fencedDocs("p2", "stale", "u1", "w1", during), empty)
			wantIndex(t, s, "p1", "c1")
			bad := fencedDocs("p1", "stale", "u1", "", during)
			wantErr(t, "UpdateDocs with a fence without an owner", s.UpdateDocs(t.Context(), bad), store.ErrInvalid)
			finishUpdate(t, s, "u1", "w1", At(2*time.Minute), store.DocsUpdateSuccess)
			refusedWrite(t, s, "of an ended update", fencedDocs("p1", "stale", "u1", "w1", during), want)
			// A lease that lapsed fences out its holder even before
			// anyone takes the update over (the project's next update
			// may run), and for good once the new holder wrote.
			mustCreateUpdate(t, s, newDocsUpdate("u2", "p1", At(3*time.Minute)))
			first, err := s.ClaimDocsUpdate(t.Context(), store.Claim{Owner: "w1", Now: At(4 * time.Minute), LeaseFor: lt.lapsing(leaseFor), MaxAttempts: maxAttempts})
			must(t, "ClaimDocsUpdate", err)
			if lt.toldTime() {
				// A lease holds up to its expiry instant, included.
				must(t, "UpdateDocs fenced at the lease's expiry instant",
					s.UpdateDocs(t.Context(), fencedDocs("p1", "c2", "u2", "w1", first.LeaseExpiresAt)))
				want = wantIndex(t, s, "p1", "c2")
			}
			told := updateOnceEnded(lt, first, first.LeaseExpiresAt.Add(time.Microsecond))
			refusedWrite(t, s, "once the lease lapsed, nobody having claimed the update", fencedDocs("p1", "stale", "u2", "w1", told), want)
			second := mustClaimUpdate(t, s, "w2", told, "u2")
			must(t, "UpdateDocs fenced by the new holder",
				s.UpdateDocs(t.Context(), fencedDocs("p1", "c3", "u2", "w2", updateWhileHeld(lt, second, told))))
			want = wantIndex(t, s, "p1", "c3")
			refusedWrite(t, s, "by the old holder after the takeover", fencedDocs("p1", "stale", "u2", "w1", told), want)
		}},
		{"PruneDeletesOnlyUpdatesEndedBefore", func(t *testing.T, s store.Store) {
			for _, p := range []string{"p1", "p2", "p3", "p4"} {
				mustProject(t, s, p)
			}
			mustCreateUpdate(t, s, newDocsUpdate("old", "p1", At(0)))
			mustCreateUpdate(t, s, newDocsUpdate("edge", "p2", At(time.Millisecond)))
			mustCreateUpdate(t, s, newDocsUpdate("running", "p3", At(2*time.Millisecond)))
			mustClaimUpdate(t, s, "w", At(time.Second), "old")
			mustClaimUpdate(t, s, "w", At(time.Second), "edge")
			mustClaimUpdate(t, s, "w", At(time.Second), "running")
			finishUpdate(t, s, "old", "w", At(time.Hour), store.DocsUpdateSuccess)
			finishUpdate(t, s, "edge", "w", At(2*time.Hour), store.DocsUpdateFailure)
			mustCreateUpdate(t, s, newDocsUpdate("queued", "p4", At(0)))
			n, err := s.PruneDocsUpdates(t.Context(), At(2*time.Hour))
			must(t, "PruneDocsUpdates", err)
			if n != 1 {
				t.Errorf("PruneDocsUpdates deleted %d, want 1 (old)", n)
			}
			_, err = s.DocsUpdate(t.Context(), "old")
			wantErr(t, "DocsUpdate of the pruned update", err, store.ErrNotFound)
			for _, id := range []string{"edge", "running", "queued"} {
				if _, err := s.DocsUpdate(t.Context(), id); err != nil {
					t.Errorf("%s, which ended at the time given or has not ended, was pruned: %v", id, err)
				}
			}
		}},
	})
}

// fencedDocs is a full rebuild of the project's index at commit, one page
// read from a file named after the commit, fenced by owner's lease of the
// update id at now.
func fencedDocs(projectID, commit, id, owner string, now time.Time) store.DocsUpdate {
	page := docPage("/"+commit, commit+".mdx", "Page of "+commit, [4]string{"", "", "Read at " + commit + ".", ""})
	return store.DocsUpdate{ProjectID: projectID, Commit: commit, At: now, Replace: true, Pages: []store.DocPage{page},
		Files: []store.DocFile{{Path: page.File, Blob: commit}}, Fence: &store.DocsFence{UpdateID: id, Owner: owner, Now: now}}
}

// wantIndex checks that the project's index holds what fencedDocs wrote
// at commit ("": nothing), and returns its state. Its UpdatedAt is left
// out: the fence's time on a LeaseClock is the test's choice (see
// updateWhileHeld), and the Docs area checks UpdatedAt.
func wantIndex(t *testing.T, s store.Store, projectID, commit string) store.DocsState {
	t.Helper()
	st, err := s.DocsState(t.Context(), projectID)
	must(t, "DocsState", err)
	want := store.DocsState{Commit: commit, Files: map[string]string{}}
	if commit != "" {
		want.Files[commit+".mdx"] = commit
		if _, err := s.DocPage(t.Context(), projectID, "/"+commit); err != nil {
			t.Errorf("DocPage /%s of %s: %v", commit, projectID, err)
		}
	}
	diff(t, "DocsState of "+projectID, want, st, cmpopts.IgnoreFields(store.DocsState{}, "UpdatedAt"))
	return st
}

// refusedWrite checks that UpdateDocs refuses u for its fence and leaves
// the index as it was.
func refusedWrite(t *testing.T, s store.Store, what string, u store.DocsUpdate, was store.DocsState) {
	t.Helper()
	wantErr(t, "UpdateDocs fenced "+what, s.UpdateDocs(t.Context(), u), store.ErrLeaseLost)
	st, err := s.DocsState(t.Context(), u.ProjectID)
	must(t, "DocsState", err)
	diff(t, "DocsState after the write refused "+what, was, st)
	if _, err := s.DocPage(t.Context(), u.ProjectID, "/"+u.Commit); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after the write refused %s: DocPage /%s: error %v, want %v", what, u.Commit, err, store.ErrNotFound)
	}
}

// updateWhileHeld is leaseTimes.whileHeld for an update: told on a store
// told the time; on a LeaseClock, a day after the lease ends, which the
// store must ignore.
func updateWhileHeld(lt leaseTimes, u store.DocsUpdateRecord, told time.Time) time.Time {
	if lt.toldTime() {
		return told
	}
	return u.LeaseExpiresAt.Add(skew)
}

func newDocsUpdate(id, projectID string, at time.Time) store.NewDocsUpdate {
	return store.NewDocsUpdate{ID: id, ProjectID: projectID, Trigger: store.DocsTriggerAPI, CreatedAt: at}
}

func emptyCommit() store.DocsCommit {
	return store.DocsCommit{Added: []string{}, Modified: []string{}, Removed: []string{}}
}

func finishOf(id, owner string, at time.Time, status store.DocsUpdateStatus) store.DocsUpdateFinish {
	return store.DocsUpdateFinish{ID: id, Owner: owner, At: at, Status: status, Summary: string(status)}
}

func mustCreateUpdate(t *testing.T, s store.Store, u store.NewDocsUpdate) store.DocsUpdateRecord {
	t.Helper()
	rec, _, err := s.CreateDocsUpdate(t.Context(), u)
	must(t, "CreateDocsUpdate "+u.ID, err)
	return rec
}

func mustClaimUpdate(t *testing.T, s store.Store, owner string, now time.Time, wantID string) store.DocsUpdateRecord {
	t.Helper()
	u, err := s.ClaimDocsUpdate(t.Context(), store.Claim{Owner: owner, Now: now, LeaseFor: leaseFor, MaxAttempts: maxAttempts})
	must(t, "ClaimDocsUpdate by "+owner, err)
	if u.ID != wantID {
		t.Fatalf("ClaimDocsUpdate by %s: got %q, want %q", owner, u.ID, wantID)
	}
	return u
}

func wantNoUpdate(t *testing.T, s store.Store, what string, now time.Time) {
	t.Helper()
	u, err := s.ClaimDocsUpdate(t.Context(), store.Claim{Owner: "probe", Now: now, LeaseFor: leaseFor, MaxAttempts: maxAttempts})
	if !errors.Is(err, store.ErrNoJob) {
		t.Errorf("%s: ClaimDocsUpdate = %q, error %v; want %v", what, u.ID, err, store.ErrNoJob)
	}
}

func finishUpdate(t *testing.T, s store.Store, id, owner string, at time.Time, status store.DocsUpdateStatus) {
	t.Helper()
	_, err := s.FinishDocsUpdate(t.Context(), finishOf(id, owner, at, status))
	must(t, "FinishDocsUpdate "+id, err)
}

// updateOnceEnded is leaseTimes.onceEnded for an update: told on a store
// told the time; on a LeaseClock, once its clock passed the lease, a time
// a day before the lease's end, which the store must ignore.
func updateOnceEnded(lt leaseTimes, u store.DocsUpdateRecord, told time.Time) time.Time {
	lt.t.Helper()
	if lt.toldTime() {
		return told
	}
	deadline := time.Now().Add(waitLimit)
	for !lt.read().After(u.LeaseExpiresAt) {
		if time.Now().After(deadline) {
			lt.t.Fatalf("update %s: the store's lease clock did not pass the lease's end %v within %v", u.ID, u.LeaseExpiresAt, waitLimit)
		}
		time.Sleep(lapse)
	}
	return u.LeaseExpiresAt.Add(-skew)
}
