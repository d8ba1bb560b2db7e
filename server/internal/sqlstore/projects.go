package sqlstore

import (
	"context"
	"fmt"

	"github.com/docsapi/docsapi-go/server/store"
)

// CreateProject stores a new project. ErrConflict if the ID is taken.
func (s *Store) CreateProject(ctx context.Context, p store.Project) error {
	return s.exec(ctx, "create project", p.Validate(), func(tx Tx) error { return tx.InsertProject(ctx, p) })
}

// UpdateProject replaces the project's fields except ID and CreatedAt.
// ErrNotFound if there is no such project.
func (s *Store) UpdateProject(ctx context.Context, p store.Project) error {
	return s.exec(ctx, "update project", p.Validate(), func(tx Tx) error {
		found, err := tx.UpdateProject(ctx, p)
		if err == nil && !found {
			err = projectNotFound(p.ID)
		}
		return err
	})
}

// Project returns one project, or ErrNotFound.
func (s *Store) Project(ctx context.Context, id string) (store.Project, error) {
	return read(ctx, s, "project", func(tx Tx) (store.Project, error) {
		p, found, err := tx.Project(ctx, id)
		if err == nil && !found {
			err = projectNotFound(id)
		}
		return p, err
	})
}

// Projects returns every project, ordered by ID.
func (s *Store) Projects(ctx context.Context) ([]store.Project, error) {
	return read(ctx, s, "projects", func(tx Tx) ([]store.Project, error) {
		ps, err := tx.Projects(ctx)
		return append([]store.Project{}, ps...), err // none is an empty list, not nil
	})
}

// requireProject returns nil if the project id exists, its ErrNotFound if
// it does not.
func requireProject(ctx context.Context, tx Tx, id string) error {
	found, err := tx.ProjectExists(ctx, id)
	if err == nil && !found {
		err = projectNotFound(id)
	}
	return err
}

// projectNotFound is the error of a missing project.
func projectNotFound(id string) error {
	return fmt.Errorf("project %q: %w", id, store.ErrNotFound)
}
