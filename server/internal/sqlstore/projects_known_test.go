package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
)

// existsTx answers ProjectExists from a set and counts the questions; the
// rest of Tx is not used.
type existsTx struct {
	Tx
	exists map[string]bool
	asked  int
}

func (t *existsTx) ProjectExists(_ context.Context, id string) (bool, error) {
	t.asked++
	return t.exists[id], nil
}

// A project found is asked about once; a flood of unknown ones is asked
// about every time and never kept; the set stops at its bound.
func TestRequireProjectRemembersOnlyProjectsFound(t *testing.T) {
	s := &Store{}
	tx := &existsTx{exists: map[string]bool{"p": true}}
	for range 3 {
		if err := s.requireProject(t.Context(), tx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	if tx.asked != 1 {
		t.Errorf("asked %d times about a project found, want 1", tx.asked)
	}
	for i := range 10_000 {
		err := s.requireProject(t.Context(), tx, fmt.Sprintf("nope%d", i))
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown project: %v, want ErrNotFound", err)
		}
	}
	if n := len(s.projects.ids); n != 1 {
		t.Errorf("%d projects kept after a flood of unknown ones, want 1", n)
	}
	for i := range 2 * maxKnownProjects {
		tx.exists[fmt.Sprintf("q%d", i)] = true
		if err := s.requireProject(t.Context(), tx, fmt.Sprintf("q%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.projects.ids); n != maxKnownProjects {
		t.Errorf("%d projects kept, want the bound %d", n, maxKnownProjects)
	}
}
