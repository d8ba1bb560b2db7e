package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// ProjectExists reports whether the project id exists.
func (t txn) ProjectExists(ctx context.Context, id string) (bool, error) {
	var found bool
	err := t.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = $1)`, id).Scan(&found)
	return found, err
}

// InsertProject stores a new project. The primary key decides, atomically,
// between two replicas creating the same ID: no check-then-insert window.
func (t txn) InsertProject(ctx context.Context, p store.Project) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO projects (id, name, repository, ref, model, domain, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		p.ID, p.Name, p.Repository, p.Ref, p.Model, p.Domain, ts(p.CreatedAt))
	if uniqueViolation(err, "projects_pkey") {
		return fmt.Errorf("project %q: %w", p.ID, store.ErrConflict)
	}
	return domainConflict(p, err)
}

// UpdateProject stores p over the project with its ID, all but CreatedAt.
func (t txn) UpdateProject(ctx context.Context, p store.Project) (bool, error) {
	tag, err := t.q.Exec(ctx,
		`UPDATE projects SET name = $2, repository = $3, ref = $4, model = $5, domain = $6 WHERE id = $1`,
		p.ID, p.Name, p.Repository, p.Ref, p.Model, p.Domain)
	return tag.RowsAffected() > 0, domainConflict(p, err)
}

const projectColumns = `id, name, repository, ref, model, domain, created_at`

func scanProject(row pgx.CollectableRow) (store.Project, error) {
	var p store.Project
	var created pgtype.Timestamptz
	if err := row.Scan(&p.ID, &p.Name, &p.Repository, &p.Ref, &p.Model, &p.Domain, &created); err != nil {
		return store.Project{}, err
	}
	p.CreatedAt = fromTS(created)
	return p, nil
}

// Project reads the project id.
func (t txn) Project(ctx context.Context, id string) (store.Project, bool, error) {
	return queryOne(ctx, t.q, scanProject, `SELECT `+projectColumns+` FROM projects WHERE id = $1`, id)
}

// Projects reads every project, ordered by ID (bytes: the column's
// collation is "C").
func (t txn) Projects(ctx context.Context) ([]store.Project, error) {
	rows, _ := t.q.Query(ctx, `SELECT `+projectColumns+` FROM projects ORDER BY id`) // CollectRows reports its error
	return pgx.CollectRows(rows, scanProject)
}
