package sqlite

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// A Store that found a project creates its jobs without asking again (no
// store method deletes a project). Should another program delete the
// project's row, a create answers ErrNotFound naming the project, as for a
// project never seen, and stores nothing.
func TestCreateJobOfAProjectDeletedByHand(t *testing.T) {
	path := dbPath(t)
	s := open(t, path)
	mustProject(t, s, "p1")
	mustJob(t, s, "p1", "j1", t0)
	raw := rawOpen(t, path)
	for _, q := range []string{`DELETE FROM job_prompts`, `DELETE FROM jobs`, `DELETE FROM projects WHERE id = 'p1'`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_, _, err := s.CreateJob(t.Context(), store.NewJob{ID: "j2", ProjectID: "p1", Prompt: "again", CreatedAt: t0.Add(time.Minute)})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `project "p1"`) {
		t.Fatalf("CreateJob after the project was deleted: %v, want ErrNotFound naming project p1", err)
	}
	if n := queryInt(t, raw, `SELECT count(*) FROM jobs`); n != 0 {
		t.Errorf("%d jobs stored for a project that is gone", n)
	}
}
