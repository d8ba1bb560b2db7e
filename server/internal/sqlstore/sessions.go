package sqlstore

import (
	"context"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// SessionTx is the statements of the ended sessions' methods.
type SessionTx interface {
	// DeleteEndedSessions deletes the records whose until is at or before
	// now.
	DeleteEndedSessions(ctx context.Context, now time.Time) error
	// EndSession records the session id as ended until "until", or keeps
	// the later of two untils if it is recorded already.
	EndSession(ctx context.Context, id []byte, until time.Time) error
	// SessionEnded reports whether the session id is recorded.
	SessionEnded(ctx context.Context, id []byte) (bool, error)
}

// EndSession records e, after deleting the records that lapsed by e.Now,
// as store.SessionStore documents.
func (s *Store) EndSession(ctx context.Context, e store.EndedSession) error {
	return s.exec(ctx, "end session", e.Validate(), func(tx Tx) error {
		if err := tx.DeleteEndedSessions(ctx, e.Now); err != nil {
			return err
		}
		// Compared as stored, to the microsecond.
		if !e.Until.Truncate(time.Microsecond).After(e.Now.Truncate(time.Microsecond)) {
			return nil
		}
		return tx.EndSession(ctx, e.ID, e.Until)
	})
}

// SessionEnded reports whether the session id is recorded as ended.
func (s *Store) SessionEnded(ctx context.Context, id []byte) (bool, error) {
	if err := store.ValidateSessionID(id); err != nil {
		return false, s.db.Fail("session ended", err)
	}
	return read(ctx, s, "session ended", func(tx Tx) (bool, error) {
		return tx.SessionEnded(ctx, id)
	})
}
