package sqlstore

import (
	"context"
	"sync"
)

// A write that needs its project asks the database whether it exists: a
// round trip of its own on PostgreSQL, a quarter of a job's create. No
// store method deletes a project, so once one is found it exists for good,
// and the answer is kept: a process asks about each project once. Only
// projects found are kept, so requests naming projects that do not exist
// cannot grow the set, and it is bounded besides; past the bound, the
// database is asked again. Should an operator delete a project's row by
// hand, the writes that reach it fail on its foreign keys instead.

// maxKnownProjects bounds the projects kept.
const maxKnownProjects = 4096

// knownProjects is the projects found to exist.
type knownProjects struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

func (k *knownProjects) has(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.ids[id]
	return ok
}

func (k *knownProjects) add(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ids == nil {
		k.ids = make(map[string]struct{})
	}
	if len(k.ids) < maxKnownProjects {
		k.ids[id] = struct{}{}
	}
}

// requireProject returns nil if the project id exists, its ErrNotFound if
// it does not.
func (s *Store) requireProject(ctx context.Context, tx Tx, id string) error {
	if s.projects.has(id) {
		return nil
	}
	found, err := tx.ProjectExists(ctx, id)
	switch {
	case err != nil:
		return err
	case !found:
		return projectNotFound(id)
	}
	s.projects.add(id)
	return nil
}
