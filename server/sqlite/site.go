package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// InsertSiteToken stores a new token, after checking that it is free (the
// write lock keeps it free until the insert).
func (t txn) InsertSiteToken(ctx context.Context, st store.SiteToken) error {
	found, err := exists(ctx, t.tx, `SELECT 1 FROM site_tokens WHERE token = ?`, st.Token)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("site token: %w", store.ErrConflict)
	}
	_, err = t.tx.ExecContext(ctx,
		`INSERT INTO site_tokens (token, project_id, name, origins, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)`,
		st.Token, st.ProjectID, st.Name, sqlstore.JoinOrigins(st.Origins), micros(st.CreatedAt), micros(st.RevokedAt))
	return err
}

const siteTokenColumns = `token, project_id, name, origins, created_at, revoked_at`

func scanSiteToken(sc scanner) (store.SiteToken, error) {
	var (
		st      store.SiteToken
		origins string
	)
	err := sc.Scan(&st.Token, &st.ProjectID, &st.Name, &origins, timeCol{&st.CreatedAt}, timeCol{&st.RevokedAt})
	st.Origins = sqlstore.SplitOrigins(origins)
	return st, err
}

// SiteToken reads the token: a seek in the primary key.
func (t txn) SiteToken(ctx context.Context, token string) (store.SiteToken, bool, error) {
	st, err := scanSiteToken(t.tx.QueryRowContext(ctx, `SELECT `+siteTokenColumns+` FROM site_tokens WHERE token = ?`, token))
	if errors.Is(err, sql.ErrNoRows) {
		return store.SiteToken{}, false, nil
	}
	return st, err == nil, err
}

// LockSiteToken reads the token; the write lock keeps it as read.
func (t txn) LockSiteToken(ctx context.Context, token string) (store.SiteToken, bool, error) {
	return t.SiteToken(ctx, token)
}

// SiteTokens reads the project's tokens, or every project's: NULL
// created_at sorts first, as the zero time does.
func (t txn) SiteTokens(ctx context.Context, projectID string) ([]store.SiteToken, error) {
	rows, err := t.tx.QueryContext(ctx,
		`SELECT `+siteTokenColumns+` FROM site_tokens WHERE ? = '' OR project_id = ? ORDER BY created_at, token`,
		projectID, projectID)
	return collect(rows, err, scanSiteToken)
}

// SaveSiteToken stores the token's RevokedAt.
func (t txn) SaveSiteToken(ctx context.Context, st store.SiteToken) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE site_tokens SET revoked_at = ? WHERE token = ?`, micros(st.RevokedAt), st.Token)
	return err
}
