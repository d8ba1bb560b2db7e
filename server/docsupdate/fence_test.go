package docsupdate_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/docsupdate"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/store"
)

// pausingReader reads through inner, then, on its first read only, tells
// read and waits for resume before it returns the tree: an Updater paused
// between reading the repository and writing the index, as a stopped
// process or a partition from the database would leave it.
type pausingReader struct {
	inner        docsupdate.TreeReader
	read, resume chan struct{}
	once         sync.Once
}

func newPausingReader(inner docsupdate.TreeReader) *pausingReader {
	return &pausingReader{inner: inner, read: make(chan struct{}), resume: make(chan struct{})}
}

func (p *pausingReader) ReadTree(ctx context.Context, repository string, spec gitrepo.TreeSpec) (*gitrepo.Tree, error) {
	tree, err := p.inner.ReadTree(ctx, repository, spec)
	p.once.Do(func() {
		close(p.read)
		select {
		case <-p.resume:
		case <-ctx.Done():
		}
	})
	return tree, err
}

// pausedRun starts an update of alpha run by an Updater named owner that
// pauses after it read the repository; it returns the update's ID, the
// reader (resume it to go on), what RunOne returns once done, and whether
// the Updater ended any update. Its lease lasts an hour, so that only the
// injected clock ends it: the run's own fence and heartbeats, on real
// time, do not come in during the test.
func (e *env) pausedRun(owner string) (id string, reader *pausingReader, done <-chan error, ended func() bool) {
	e.t.Helper()
	reader = newPausingReader(e.reader)
	var mu sync.Mutex
	var endings int
	u := e.updater(owner, func(c *docsupdate.Config) {
		c.LeaseFor = time.Hour
		c.Trees = func(context.Context, store.Project) (docsupdate.TreeReader, error) { return reader, nil }
		c.OnUpdateEnd = func(store.DocsUpdateRecord) { mu.Lock(); endings++; mu.Unlock() }
	})
	rec, err := u.Queue(e.t.Context(), "alpha", store.DocsTriggerAPI)
	if err != nil {
		e.t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		ran, err := u.RunOne(e.t.Context())
		if err == nil && !ran {
			err = errors.New("no update was ready")
		}
		result <- err
	}()
	select {
	case <-reader.read:
	case err := <-result:
		e.t.Fatalf("%s's run ended before it read the repository: %v", owner, err)
	case <-time.After(time.Minute):
		e.t.Fatalf("%s's run never read the repository", owner)
	}
	return rec.ID, reader, result, func() bool { mu.Lock(); defer mu.Unlock(); return endings > 0 }
}

// finish resumes a paused run and waits for RunOne to return.
func finish(t *testing.T, owner string, reader *pausingReader, done <-chan error) {
	t.Helper()
	close(reader.resume)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s's RunOne: %v", owner, err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("%s's run did not return once resumed", owner)
	}
}

func (e *env) head() string {
	e.t.Helper()
	return strings.TrimSpace(runGit(e.t, e.repo.work, "rev-parse", "HEAD"))
}

// TestPausedRunCannotOverwriteItsSuccessorsIndex: w1 reads commit A and
// pauses; its lease lapses, w2 takes the update over and writes the newer
// commit B; w1 resumes and its write of A is refused by the store, so the
// index serves B and the update's record is w2's.
func TestPausedRunCannotOverwriteItsSuccessorsIndex(t *testing.T) {
	e := newEnv(t, site())
	wantSuccess(t, e.update(e.updater("w0")))
	e.repo.commit("Guide: A", map[string]string{"guide.mdx": "# Guide\n\nInstall at commit A.\n"})
	id, reader, done, w1Ended := e.pausedRun("w1")

	e.repo.commit("Guide: B", map[string]string{"guide.mdx": "# Guide\n\nInstall at commit B.\n"})
	shaB := e.head()
	e.clock.Advance(time.Hour + time.Second)
	w2 := e.updater("w2", func(c *docsupdate.Config) { c.LeaseFor = time.Hour })
	if ran, err := w2.RunOne(t.Context()); !ran || err != nil {
		t.Fatalf("w2's RunOne after w1's lease lapsed: ran %v, error %v", ran, err)
	}
	byW2, err := e.st.DocsUpdate(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, byW2)
	if byW2.Commit.SHA != shaB || byW2.Attempts != 2 {
		t.Fatalf("w2's update: commit %s, attempts %d; want %s, 2", byW2.Commit.SHA, byW2.Attempts, shaB)
	}

	finish(t, "w1", reader, done)
	if txt := e.page("/guide"); !strings.Contains(txt, "commit B") {
		t.Errorf("/guide once w1 resumed: %q, want commit B's text", txt)
	}
	if state, err := e.st.DocsState(t.Context(), "alpha"); err != nil || state.Commit != shaB {
		t.Errorf("index commit once w1 resumed: %q (%v), want B %s", state.Commit, err, shaB)
	}
	got, err := e.st.DocsUpdate(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, byW2) {
		t.Errorf("the update once w1 resumed:\n%+v\nwant it as w2 ended it:\n%+v", got, byW2)
	}
	if w1Ended() {
		t.Error("w1 ended an update")
	}
}

// TestLapsedRunRecordsNothingAndIsTakenOver: w1 reads and pauses past its
// lease, which nobody takes over meanwhile; its write is refused, and it
// records nothing (no failure that would end the update: the lease lapsed,
// the repository did not fail), so the index keeps serving and the update
// waits for another Updater, which completes it.
func TestLapsedRunRecordsNothingAndIsTakenOver(t *testing.T) {
	e := newEnv(t, site())
	first := e.update(e.updater("w0"))
	wantSuccess(t, first)
	e.repo.commit("Guide: A", map[string]string{"guide.mdx": "# Guide\n\nInstall at commit A.\n"})
	shaA := e.head()
	id, reader, done, w1Ended := e.pausedRun("w1")
	e.clock.Advance(time.Hour + time.Second)
	finish(t, "w1", reader, done)

	mid, err := e.st.DocsUpdate(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if mid.Status != store.DocsUpdateInProgress || mid.LeaseOwner != "w1" || mid.Attempts != 1 || w1Ended() {
		t.Fatalf("after w1's refused write: status %q, owner %q, attempts %d, ended by w1 %v; want in_progress, w1, 1, false (summary %q)",
			mid.Status, mid.LeaseOwner, mid.Attempts, w1Ended(), mid.Summary)
	}
	if state, err := e.st.DocsState(t.Context(), "alpha"); err != nil || state.Commit != first.Commit.SHA {
		t.Errorf("index commit after w1's refused write: %q (%v), want the previous %s", state.Commit, err, first.Commit.SHA)
	}
	w2 := e.updater("w2")
	if ran, err := w2.RunOne(t.Context()); !ran || err != nil {
		t.Fatalf("w2's RunOne: ran %v, error %v", ran, err)
	}
	got, err := e.st.DocsUpdate(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, got)
	if got.Commit.SHA != shaA || got.Attempts != 2 || !strings.Contains(e.page("/guide"), "commit A") {
		t.Errorf("taken over: commit %s, attempts %d, /guide %q; want %s, 2, commit A's text", got.Commit.SHA, got.Attempts, e.page("/guide"), shaA)
	}
}
