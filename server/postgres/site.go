package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// InsertSiteToken stores a new token; the primary key decides a taken one.
func (t txn) InsertSiteToken(ctx context.Context, st store.SiteToken) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO site_tokens (token, project_id, name, origins, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		st.Token, st.ProjectID, st.Name, sqlstore.JoinOrigins(st.Origins), ts(st.CreatedAt), ts(st.RevokedAt))
	if uniqueViolation(err, "site_tokens_pkey") {
		return fmt.Errorf("site token: %w", store.ErrConflict)
	}
	return err
}

const siteTokenColumns = `token, project_id, name, origins, created_at, revoked_at`

func scanSiteToken(row pgx.CollectableRow) (store.SiteToken, error) {
	var (
		st               store.SiteToken
		origins          string
		created, revoked pgtype.Timestamptz
	)
	if err := row.Scan(&st.Token, &st.ProjectID, &st.Name, &origins, &created, &revoked); err != nil {
		return store.SiteToken{}, err
	}
	st.Origins = sqlstore.SplitOrigins(origins)
	st.CreatedAt, st.RevokedAt = fromTS(created), fromTS(revoked)
	return st, nil
}

// SiteToken reads the token: a seek in the primary key.
func (t txn) SiteToken(ctx context.Context, token string) (store.SiteToken, bool, error) {
	return queryOne(ctx, t.q, scanSiteToken, `SELECT `+siteTokenColumns+` FROM site_tokens WHERE token = $1`, token)
}

// LockSiteToken reads the token and locks its row.
func (t txn) LockSiteToken(ctx context.Context, token string) (store.SiteToken, bool, error) {
	return queryOne(ctx, t.q, scanSiteToken, `SELECT `+siteTokenColumns+` FROM site_tokens WHERE token = $1 FOR UPDATE`, token)
}

// SiteTokens reads the project's tokens, or every project's, a token
// without CreatedAt first as the zero time sorts first.
func (t txn) SiteTokens(ctx context.Context, projectID string) ([]store.SiteToken, error) {
	rows, _ := t.q.Query(ctx, `SELECT `+siteTokenColumns+` FROM site_tokens WHERE $1 = '' OR project_id = $1
		ORDER BY created_at NULLS FIRST, token`, projectID) // CollectRows reports its error
	return pgx.CollectRows(rows, scanSiteToken)
}

// SaveSiteToken stores the token's RevokedAt.
func (t txn) SaveSiteToken(ctx context.Context, st store.SiteToken) error {
	_, err := t.q.Exec(ctx, `UPDATE site_tokens SET revoked_at = $2 WHERE token = $1`, st.Token, ts(st.RevokedAt))
	return err
}
