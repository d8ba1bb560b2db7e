package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docsapi/docsapi-go/server/store"
)

// CreateProject stores a new project. ErrConflict if the ID is taken.
func (s *Store) CreateProject(ctx context.Context, p store.Project) error {
	const op = "create project"
	if pr := p.Problem(); pr != "" {
		return invalid(op, "%s", pr)
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		// The write lock is held from BEGIN IMMEDIATE, so nothing can
		// insert the ID between this check and the insert.
		found, err := exists(ctx, tx, "SELECT 1 FROM projects WHERE id = ?", p.ID)
		if err != nil {
			return dbErr(op, err)
		}
		if found {
			return fmt.Errorf("sqlite: project %q: %w", p.ID, store.ErrConflict)
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO projects (id, name, repository, ref, model, created_at)
			 VALUES (?, ?, ?, ?, ?, ?)`,
			p.ID, p.Name, p.Repository, p.Ref, p.Model, micros(p.CreatedAt))
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// UpdateProject replaces the project's fields except ID and CreatedAt.
// ErrNotFound if there is no such project.
func (s *Store) UpdateProject(ctx context.Context, p store.Project) error {
	const op = "update project"
	if pr := p.Problem(); pr != "" {
		return invalid(op, "%s", pr)
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE projects SET name = ?, repository = ?, ref = ?, model = ? WHERE id = ?`,
			p.Name, p.Repository, p.Ref, p.Model, p.ID)
		if err != nil {
			return dbErr(op, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return dbErr(op, err)
		} else if n == 0 {
			return fmt.Errorf("sqlite: project %q: %w", p.ID, store.ErrNotFound)
		}
		return nil
	})
}

const projectColumns = `id, name, repository, ref, model, created_at`

func scanProject(sc interface{ Scan(...any) error }) (store.Project, error) {
	var p store.Project
	var created sql.NullInt64
	if err := sc.Scan(&p.ID, &p.Name, &p.Repository, &p.Ref, &p.Model, &created); err != nil {
		return store.Project{}, err
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}

// Project returns one project, or ErrNotFound.
func (s *Store) Project(ctx context.Context, id string) (store.Project, error) {
	if s.closed.Load() {
		return store.Project{}, ErrClosed
	}
	p, err := scanProject(s.r.QueryRowContext(ctx,
		`SELECT `+projectColumns+` FROM projects WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Project{}, fmt.Errorf("sqlite: project %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Project{}, dbErr("project", err)
	}
	return p, nil
}

// Projects returns every project, ordered by ID.
func (s *Store) Projects(ctx context.Context) ([]store.Project, error) {
	const op = "projects"
	if s.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+projectColumns+` FROM projects ORDER BY id`)
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	ps := []store.Project{} // none is an empty list, not nil
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, dbErr(op, err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(op, err)
	}
	return ps, nil
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// exists reports whether query returns a row.
func exists(ctx context.Context, q querier, query string, args ...any) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
