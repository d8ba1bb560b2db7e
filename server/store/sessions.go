package store

import (
	"context"
	"time"
)

// SessionStore remembers the dashboard's sessions that ended before their
// time (a sign-out), so that a copy of an ended session's cookie is refused
// by every process sharing the store, after a restart too. A session is
// otherwise held by its cookie alone: this is the one thing about it the
// store keeps, and only for as long as the cookie could still be used.
type SessionStore interface {
	// EndSession records that the session e.ID ended, until e.Until (when
	// the session would have expired anyway). The same call first deletes
	// every record whose Until is at or before e.Now, so the records are
	// never more than the sessions that ended and could still be used; a
	// record whose own Until is at or before e.Now is not kept either.
	// Ending a session twice keeps the later Until.
	EndSession(ctx context.Context, e EndedSession) error
	// SessionEnded reports whether EndSession recorded id and the record
	// was not deleted since.
	SessionEnded(ctx context.Context, id []byte) (bool, error)
}

// SessionIDBytes is the length of a session's ID.
const SessionIDBytes = 32

// EndedSession is a session ended before its time.
type EndedSession struct {
	ID    []byte    // the session's random ID, SessionIDBytes long
	Until time.Time // when the session would have expired anyway
	Now   time.Time // when it ended: the records that lapsed by then are deleted
}

// Validate returns what makes e unfit for EndSession, or nil.
func (e EndedSession) Validate() error {
	switch {
	case len(e.ID) != SessionIDBytes:
		return Invalid("a session ID has %d bytes, got %d", SessionIDBytes, len(e.ID))
	case e.Until.IsZero():
		return Invalid("an ended session needs the time it would have expired")
	case e.Now.IsZero():
		return Invalid("an ended session needs the time it ended")
	}
	return nil
}

// ValidateSessionID returns what makes id unfit for SessionEnded, or nil.
func ValidateSessionID(id []byte) error {
	if len(id) != SessionIDBytes {
		return Invalid("a session ID has %d bytes, got %d", SessionIDBytes, len(id))
	}
	return nil
}
