package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// CreateJobOfAProjectDeletedByHand is each SQL backend's test that a Store
// which created jobs of a project (no store method deletes one) answers
// ErrNotFound naming the project once another program has deleted its row,
// as for a project never seen, and stores nothing; and that a new
// conversation in it is refused alike. exec runs a statement on
// the store's database from outside the store; count answers a query of one
// integer there.
func CreateJobOfAProjectDeletedByHand(t *testing.T, s store.Store, exec func(query string) error, count func(query string) (int, error)) {
	t.Helper()
	ctx := t.Context()
	if err := s.CreateProject(ctx, NewProject("p1")); err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	if _, _, err := s.CreateJob(ctx, NewJob("p1", "j1", At(0))); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	for _, q := range []string{`DELETE FROM job_prompts`, `DELETE FROM jobs`, `DELETE FROM projects WHERE id = 'p1'`} {
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_, _, err := s.CreateJob(ctx, NewJob("p1", "j2", At(time.Minute)))
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `project "p1"`) {
		t.Fatalf("CreateJob after the project was deleted: %v, want ErrNotFound naming project p1", err)
	}
	jobs, err := count(`SELECT count(*) FROM jobs`)
	if err != nil {
		t.Fatal(err)
	}
	if jobs != 0 {
		t.Errorf("%d jobs stored for a project that is gone", jobs)
	}
	// A conversation started in it is refused alike.
	th := newThread("p1", 1, At(time.Minute))
	err = s.AddExchange(ctx, newExchange("p1", 1, 1, At(time.Minute)), &th)
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `project "p1"`) {
		t.Fatalf("AddExchange with a new thread after the project was deleted: %v, want ErrNotFound naming project p1", err)
	}
	threads, err := count(`SELECT count(*) FROM assistant_threads`)
	if err != nil {
		t.Fatal(err)
	}
	if threads != 0 {
		t.Errorf("%d threads stored for a project that is gone", threads)
	}
}
