package storetest_test

import (
	"context"
	"maps"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// sessionState is what the reference store keeps for SessionStore, behind
// memStore's mutex: each ended session's until, by ID.
type sessionState struct {
	until map[string]time.Time
}

// sessionMutants are the reference store's deliberate bugs in the methods
// of this file, and the subtests (area/name) that must fail with each; see
// TestMutantsFail.
var sessionMutants = map[string][]string{
	"sessionsPruneAll":         {"Sessions/RecordsLapseAtTheirUntilWhenTheNextSessionEnds"},
	"sessionsPruneBeforeUntil": {"Sessions/RecordsLapseAtTheirUntilWhenTheNextSessionEnds"},
	"sessionsNeverPruned":      {"Sessions/RecordsLapseAtTheirUntilWhenTheNextSessionEnds", "Sessions/EndingTwiceKeepsTheLaterUntil"},
	"sessionsMatchPrefix":      {"Sessions/EndedSessionIsRememberedAndNoOther"},
	"sessionsUntilOverwritten": {"Sessions/EndingTwiceKeepsTheLaterUntil"},
	"sessionsUntilKeptFirst":   {"Sessions/EndingTwiceKeepsTheLaterUntil"},
	"sessionsKeepLapsed":       {"Sessions/ARecordLapsedAlreadyIsNotKept"},
	"sessionsRacy":             {"Sessions/ConcurrentEndsAreAllRecorded"},
	"sessionChecksSkipped":     {"Sessions/InvalidArgumentsAreRefusedAndStoreNothing"},
}

func (m *memStore) ended() map[string]time.Time {
	if m.sessions.until == nil {
		m.sessions.until = map[string]time.Time{}
	}
	return m.sessions.until
}

func (m *memStore) EndSession(_ context.Context, e store.EndedSession) error {
	if err := e.Validate(); err != nil && !m.is("sessionChecksSkipped") {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now, until := m.norm(e.Now), m.norm(e.Until)
	ended := m.ended()
	if m.is("sessionsRacy") {
		// The records are copied, then written back under another hold
		// of the lock: concurrent ends overwrite each other's.
		copied := maps.Clone(ended)
		m.mu.Unlock()
		time.Sleep(time.Millisecond) // long enough for every concurrent caller to copy
		m.mu.Lock()
		m.sessions.until, ended = copied, copied
	}
	for id, u := range ended {
		switch {
		case m.is("sessionsNeverPruned"):
		case m.is("sessionsPruneAll"),
			m.is("sessionsPruneBeforeUntil") && u.Before(now.Add(time.Hour)),
			!u.After(now):
			delete(ended, id)
		}
	}
	if !until.After(now) && !m.is("sessionsKeepLapsed") {
		return nil
	}
	key := string(e.ID)
	if m.is("sessionsMatchPrefix") {
		key = key[:len(key)-1]
	}
	if old, ok := ended[key]; ok && (old.After(until) && !m.is("sessionsUntilOverwritten") || m.is("sessionsUntilKeptFirst")) {
		return nil
	}
	ended[key] = until
	return nil
}

func (m *memStore) SessionEnded(_ context.Context, id []byte) (bool, error) {
	if err := store.ValidateSessionID(id); err != nil && !m.is("sessionChecksSkipped") {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := string(id)
	if m.is("sessionsMatchPrefix") && len(key) > 0 {
		key = key[:len(key)-1]
	}
	_, ok := m.ended()[key]
	return ok, nil
}
