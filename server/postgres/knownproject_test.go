package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// A Store that found a project creates its jobs without asking again (no
// store method deletes a project). Should an operator delete the project's
// row by hand, a create answers ErrNotFound naming the project, as for a
// project never seen, and stores nothing.
func TestCreateJobOfAProjectDeletedByHand(t *testing.T) {
	db := newDatabase(t)
	s := open(t, db)
	ctx := t.Context()
	must(t, s.CreateProject(ctx, storetest.NewProject("p1")))
	if _, _, err := s.CreateJob(ctx, storetest.NewJob("p1", "j1", storetest.At(0))); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	conn := connect(t, db)
	for _, q := range []string{
		`DELETE FROM job_prompts`, `DELETE FROM jobs`, `DELETE FROM projects WHERE id = 'p1'`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_, _, err := s.CreateJob(ctx, storetest.NewJob("p1", "j2", storetest.At(time.Minute)))
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `project "p1"`) {
		t.Fatalf("CreateJob after the project was deleted: %v, want ErrNotFound naming project p1", err)
	}
	var jobs int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM jobs`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 {
		t.Errorf("%d jobs stored for a project that is gone", jobs)
	}
}
