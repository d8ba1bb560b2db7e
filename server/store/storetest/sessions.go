package storetest

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// sessionID returns a session ID made of b repeated, with its last byte
// last: IDs that differ in their last byte only, so that a backend that
// matches a prefix is caught.
func sessionID(b, last byte) []byte {
	id := bytes.Repeat([]byte{b}, store.SessionIDBytes)
	id[len(id)-1] = last
	return id
}

// mustEndSession ends the session id until "until", at now.
func mustEndSession(t *testing.T, s store.Store, id []byte, until, now time.Time) {
	t.Helper()
	must(t, "EndSession", s.EndSession(t.Context(), store.EndedSession{ID: bytes.Clone(id), Until: until, Now: now}))
}

// wantEnded checks whether the session id is ended.
func wantEnded(t *testing.T, s store.Store, what string, id []byte, want bool) {
	t.Helper()
	got, err := s.SessionEnded(t.Context(), bytes.Clone(id))
	must(t, "SessionEnded", err)
	if got != want {
		t.Errorf("%s: SessionEnded = %v, want %v", what, got, want)
	}
}

func testSessions(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"EndedSessionIsRememberedAndNoOther", func(t *testing.T, s store.Store) {
			a := sessionID(1, 1)
			wantEnded(t, s, "a session never ended", a, false)
			mustEndSession(t, s, a, At(12*time.Hour), At(time.Hour).In(elsewhere))
			wantEnded(t, s, "the session ended", a, true)
			wantEnded(t, s, "a session whose ID differs in its last byte", sessionID(1, 2), false)
			wantEnded(t, s, "another session", sessionID(2, 1), false)
		}},
		{"RecordsLapseAtTheirUntilWhenTheNextSessionEnds", func(t *testing.T, s store.Store) {
			a, b, c := sessionID(1, 0), sessionID(2, 0), sessionID(3, 0)
			mustEndSession(t, s, a, At(2*time.Hour), At(0))
			// A microsecond before a's until, a holds.
			mustEndSession(t, s, b, At(10*time.Hour), At(2*time.Hour-time.Microsecond))
			wantEnded(t, s, "a session whose record holds", a, true)
			// At its until, it lapses: the session has expired anyway.
			mustEndSession(t, s, c, At(10*time.Hour), At(2*time.Hour).In(elsewhere))
			wantEnded(t, s, "a session whose record lapsed", a, false)
			wantEnded(t, s, "a session ended before, whose record holds", b, true)
			wantEnded(t, s, "the session ended last", c, true)
		}},
		{"EndingTwiceKeepsTheLaterUntil", func(t *testing.T, s store.Store) {
			a, b := sessionID(1, 0), sessionID(2, 0)
			// An earlier until does not shorten a record...
			mustEndSession(t, s, a, At(5*time.Hour), At(0))
			mustEndSession(t, s, a, At(3*time.Hour), At(time.Hour))
			// ...and a later one lengthens it.
			mustEndSession(t, s, b, At(3*time.Hour), At(0))
			mustEndSession(t, s, b, At(6*time.Hour), At(time.Hour))
			mustEndSession(t, s, sessionID(3, 0), At(9*time.Hour), At(4*time.Hour))
			wantEnded(t, s, "a session ended until 5h, then until 3h, at 4h", a, true)
			wantEnded(t, s, "a session ended until 3h, then until 6h, at 4h", b, true)
			mustEndSession(t, s, sessionID(4, 0), At(9*time.Hour), At(6*time.Hour))
			wantEnded(t, s, "a session ended until 5h, at 6h", a, false)
			wantEnded(t, s, "a session ended until 6h, at 6h", b, false)
		}},
		{"ARecordLapsedAlreadyIsNotKept", func(t *testing.T, s store.Store) {
			a, b := sessionID(1, 0), sessionID(2, 0)
			mustEndSession(t, s, a, At(time.Hour), At(time.Hour))
			mustEndSession(t, s, b, At(time.Hour), At(2*time.Hour))
			wantEnded(t, s, "a session ended at its until", a, false)
			wantEnded(t, s, "a session ended after its until", b, false)
		}},
		{"ConcurrentEndsAreAllRecorded", func(t *testing.T, s store.Store) {
			const workers = 8
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					// Each ends a session of its own, and all end one
					// session together, as replicas may.
					for _, id := range [][]byte{sessionID(byte(w+1), 0), sessionID(0xff, 0)} {
						if err := s.EndSession(t.Context(), store.EndedSession{ID: id, Until: At(time.Duration(w+1) * time.Hour), Now: At(0)}); err != nil {
							t.Errorf("EndSession: %v", err)
						}
					}
				})
			}
			wg.Wait()
			for w := range workers {
				wantEnded(t, s, "a session ended by one of several at once", sessionID(byte(w+1), 0), true)
			}
			wantEnded(t, s, "a session every one ended", sessionID(0xff, 0), true)
			// The later until won: at 7h30 only the last worker's holds.
			mustEndSession(t, s, sessionID(0xfe, 0), At(9*time.Hour), At(7*time.Hour+30*time.Minute))
			wantEnded(t, s, "a session ended by all, until the latest of their untils", sessionID(0xff, 0), true)
			wantEnded(t, s, "a session ended until 7h, at 7h30", sessionID(byte(workers-1), 0), false)
		}},
		{"InvalidArgumentsAreRefusedAndStoreNothing", func(t *testing.T, s store.Store) {
			ctx := t.Context()
			a := sessionID(1, 0)
			end := func(f func(*store.EndedSession)) error {
				e := store.EndedSession{ID: bytes.Clone(a), Until: At(time.Hour), Now: At(0)}
				f(&e)
				return s.EndSession(ctx, e)
			}
			ignore := func(_ bool, err error) error { return err }
			for name, err := range map[string]error{
				"an ID one byte short":    end(func(e *store.EndedSession) { e.ID = e.ID[1:] }),
				"an ID one byte long":     end(func(e *store.EndedSession) { e.ID = append(e.ID, 0) }),
				"no ID":                   end(func(e *store.EndedSession) { e.ID = nil }),
				"no until":                end(func(e *store.EndedSession) { e.Until = time.Time{} }),
				"no now":                  end(func(e *store.EndedSession) { e.Now = time.Time{} }),
				"SessionEnded of a short": ignore(s.SessionEnded(ctx, a[1:])),
				"SessionEnded of no ID":   ignore(s.SessionEnded(ctx, nil)),
			} {
				wantErr(t, name, err, store.ErrInvalid)
			}
			wantEnded(t, s, "a session after refused calls", a, false)
		}},
	})
}
