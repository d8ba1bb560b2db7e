package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeleteEndedSessions deletes the records that lapsed by now: a range of
// the index on kept_until.
func (t txn) DeleteEndedSessions(ctx context.Context, now time.Time) error {
	_, err := t.q.Exec(ctx, `DELETE FROM ended_sessions WHERE kept_until <= $1`, ts(now))
	return err
}

// EndSession records the session, keeping the later until of two: a
// replica ending the same session at once waits on the primary key, then
// updates the row the other inserted.
func (t txn) EndSession(ctx context.Context, id []byte, until time.Time) error {
	_, err := t.q.Exec(ctx, `INSERT INTO ended_sessions (id, kept_until) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET kept_until = GREATEST(ended_sessions.kept_until, excluded.kept_until)`, id, ts(until))
	return err
}

// SessionEnded reports whether the session is recorded: a seek in the
// primary key.
func (t txn) SessionEnded(ctx context.Context, id []byte) (bool, error) {
	_, found, err := queryOne(ctx, t.q, pgx.RowTo[int32], `SELECT 1 FROM ended_sessions WHERE id = $1`, id)
	return found, err
}
