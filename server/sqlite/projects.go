package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docsapi/docsapi-go/server/store"
)

// ProjectExists reports whether the project id exists.
func (t txn) ProjectExists(ctx context.Context, id string) (bool, error) {
	return exists(ctx, t.tx, `SELECT 1 FROM projects WHERE id = ?`, id)
}

// InsertProject stores a new project. The write lock is held from BEGIN
// IMMEDIATE, so nothing can insert the ID between the check and the
// insert.
func (t txn) InsertProject(ctx context.Context, p store.Project) error {
	found, err := t.ProjectExists(ctx, p.ID)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("project %q: %w", p.ID, store.ErrConflict)
	}
	if err := t.domainFree(ctx, p); err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx,
		`INSERT INTO projects (id, name, repository, ref, model, domain, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Name, p.Repository, p.Ref, p.Model, p.Domain, micros(p.CreatedAt))
	return err
}

// UpdateProject stores p over the project with its ID, all but CreatedAt.
func (t txn) UpdateProject(ctx context.Context, p store.Project) (bool, error) {
	if err := t.domainFree(ctx, p); err != nil {
		return false, err
	}
	res, err := t.tx.ExecContext(ctx,
		`UPDATE projects SET name = ?, repository = ?, ref = ?, model = ?, domain = ? WHERE id = ?`,
		p.Name, p.Repository, p.Ref, p.Model, p.Domain, p.ID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

const projectColumns = `id, name, repository, ref, model, domain, created_at`

func scanProject(sc scanner) (store.Project, error) {
	var p store.Project
	err := sc.Scan(&p.ID, &p.Name, &p.Repository, &p.Ref, &p.Model, &p.Domain, timeCol{&p.CreatedAt})
	return p, err
}

// Project reads the project id.
func (t txn) Project(ctx context.Context, id string) (store.Project, bool, error) {
	p, err := scanProject(t.tx.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Project{}, false, nil
	}
	return p, err == nil, err
}

// Projects reads every project, ordered by ID (BINARY, as Go compares).
func (t txn) Projects(ctx context.Context) ([]store.Project, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+projectColumns+` FROM projects ORDER BY id`)
	return collect(rows, err, scanProject)
}
