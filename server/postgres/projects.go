package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// CreateProject stores a new project. ErrConflict if the ID is taken.
func (s *Store) CreateProject(ctx context.Context, p store.Project) error {
	const op = "create project"
	if pr := p.Problem(); pr != "" {
		return invalid(op, "%s", pr)
	}
	db, err := s.db()
	if err != nil {
		return err
	}
	// The primary key decides, atomically, between two replicas creating
	// the same ID: no check-then-insert window.
	_, err = db.Exec(ctx,
		`INSERT INTO projects (id, name, repository, ref, model, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		p.ID, p.Name, p.Repository, p.Ref, p.Model, ts(p.CreatedAt))
	switch {
	case uniqueViolation(err, "projects_pkey"):
		return fmt.Errorf("postgres: project %q: %w", p.ID, store.ErrConflict)
	case err != nil:
		return s.dbErr(op, err)
	}
	return nil
}

// UpdateProject replaces the project's fields except ID and CreatedAt.
// ErrNotFound if there is no such project.
func (s *Store) UpdateProject(ctx context.Context, p store.Project) error {
	const op = "update project"
	if pr := p.Problem(); pr != "" {
		return invalid(op, "%s", pr)
	}
	db, err := s.db()
	if err != nil {
		return err
	}
	tag, err := db.Exec(ctx,
		`UPDATE projects SET name = $2, repository = $3, ref = $4, model = $5 WHERE id = $1`,
		p.ID, p.Name, p.Repository, p.Ref, p.Model)
	if err != nil {
		return s.dbErr(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: project %q: %w", p.ID, store.ErrNotFound)
	}
	return nil
}

const projectColumns = `id, name, repository, ref, model, created_at`

func scanProject(row pgx.Row) (store.Project, error) {
	var p store.Project
	var created pgtype.Timestamptz
	if err := row.Scan(&p.ID, &p.Name, &p.Repository, &p.Ref, &p.Model, &created); err != nil {
		return store.Project{}, err
	}
	p.CreatedAt = fromTS(created)
	return p, nil
}

// Project returns one project, or ErrNotFound.
func (s *Store) Project(ctx context.Context, id string) (store.Project, error) {
	db, err := s.db()
	if err != nil {
		return store.Project{}, err
	}
	p, err := scanProject(db.QueryRow(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Project{}, fmt.Errorf("postgres: project %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Project{}, s.dbErr("project", err)
	}
	return p, nil
}

// Projects returns every project, ordered by ID (bytes: the column's
// collation is "C").
func (s *Store) Projects(ctx context.Context) ([]store.Project, error) {
	const op = "projects"
	db, err := s.db()
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT `+projectColumns+` FROM projects ORDER BY id`)
	if err != nil {
		return nil, s.dbErr(op, err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Project, error) { return scanProject(r) })
	if err != nil {
		return nil, s.dbErr(op, err)
	}
	if ps == nil {
		ps = []store.Project{} // none is an empty list, not nil
	}
	return ps, nil
}
