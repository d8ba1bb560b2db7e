package sqlite

import (
	"context"
	"time"
)

// DeleteEndedSessions deletes the records that lapsed by now: a range of
// the index on kept_until.
func (t txn) DeleteEndedSessions(ctx context.Context, now time.Time) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM ended_sessions WHERE kept_until <= ?`, micros(now))
	return err
}

// EndSession records the session, keeping the later until of two.
func (t txn) EndSession(ctx context.Context, id []byte, until time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO ended_sessions (id, kept_until) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET kept_until = max(kept_until, excluded.kept_until)`, id, micros(until))
	return err
}

// SessionEnded reports whether the session is recorded: a seek in the
// primary key.
func (t txn) SessionEnded(ctx context.Context, id []byte) (bool, error) {
	return exists(ctx, t.tx, `SELECT 1 FROM ended_sessions WHERE id = ?`, id)
}
