package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// NewKey returns a key for the projects p1 and p2 with both scopes, created
// at At(0), that never expires and is not revoked. Its hash is Hash(id).
func NewKey(id string) store.APIKey {
	return store.APIKey{
		ID:        id,
		Hash:      Hash(id),
		Hint:      "mint_" + id[:min(len(id), 4)],
		Name:      "key " + id,
		Projects:  []string{"p1", "p2"},
		Scopes:    []store.Scope{store.ScopeRead, store.ScopeWrite},
		CreatedAt: At(0),
	}
}

// keyTimes lists every time of k.
func keyTimes(k store.APIKey) []time.Time {
	return []time.Time{k.CreatedAt, k.ExpiresAt, k.RevokedAt}
}

// mustKeyByHash looks a key up by its hash.
func mustKeyByHash(t *testing.T, s store.Store, hash []byte) store.APIKey {
	t.Helper()
	k, err := s.KeyByHash(t.Context(), hash)
	must(t, "KeyByHash", err)
	checkTimes(t, "KeyByHash", keyTimes(k)...)
	return k
}

func testKeys(t *testing.T, open opener) {
	// Keys name projects; every test creates them first, so that a backend
	// that ties keys to existing projects passes too (store.go says
	// nothing either way).
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		for _, id := range []string{"p1", "p2", "p3"} {
			mustProject(t, s, id)
		}
	}
	runAll(t, open, []subtest{
		{"CreateThenKeyByHashRoundTripsEveryField", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := NewKey("k1")
			k.CreatedAt = At(time.Hour).In(elsewhere)
			k.ExpiresAt = At(90 * 24 * time.Hour).In(elsewhere)
			must(t, "CreateKey", s.CreateKey(t.Context(), k))
			// A copy of the hash, so that a backend cannot match by
			// slice identity.
			got := mustKeyByHash(t, s, append([]byte(nil), k.Hash...))
			diff(t, "KeyByHash", k, got)
		}},
		{"ZeroExpiresAtAndRevokedAtStayZero", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := NewKey("k1")
			must(t, "CreateKey", s.CreateKey(t.Context(), k))
			got := mustKeyByHash(t, s, k.Hash)
			if !got.ExpiresAt.IsZero() || !got.RevokedAt.IsZero() {
				t.Errorf("KeyByHash: ExpiresAt = %v, RevokedAt = %v; want both zero", got.ExpiresAt, got.RevokedAt)
			}
			diff(t, "KeyByHash", k, got)
		}},
		{"ProjectsAndScopesReadBackSorted", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := NewKey("k1")
			k.Projects = []string{"p3", "p1", "p2"}
			k.Scopes = []store.Scope{store.ScopeWrite, store.ScopeRead}
			must(t, "CreateKey", s.CreateKey(t.Context(), k))
			want := k
			want.Projects = []string{"p1", "p2", "p3"}
			want.Scopes = []store.Scope{store.ScopeRead, store.ScopeWrite}
			diff(t, "KeyByHash", want, mustKeyByHash(t, s, k.Hash))
			keys, err := s.Keys(t.Context())
			must(t, "Keys", err)
			diff(t, "Keys", []store.APIKey{want}, keys)
		}},
		{"KeyByHashOfUnknownHashIsNotFound", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := NewKey("k1")
			must(t, "CreateKey", s.CreateKey(t.Context(), k))
			for name, h := range map[string][]byte{
				"unknown hash":         Hash("k2"),
				"prefix of a hash":     k.Hash[:16],
				"hash with extra byte": append(append([]byte(nil), k.Hash...), 0),
				"empty hash":           {},
			} {
				_, err := s.KeyByHash(t.Context(), h)
				wantErr(t, "KeyByHash of "+name, err, store.ErrNotFound)
			}
		}},
		{"KeyByHashFindsEachKey", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k1, k2 := NewKey("k1"), NewKey("k2")
			k2.Projects = []string{"p3"}
			k2.Scopes = []store.Scope{store.ScopeRead}
			must(t, "CreateKey k1", s.CreateKey(t.Context(), k1))
			must(t, "CreateKey k2", s.CreateKey(t.Context(), k2))
			diff(t, "KeyByHash k1", k1, mustKeyByHash(t, s, k1.Hash))
			diff(t, "KeyByHash k2", k2, mustKeyByHash(t, s, k2.Hash))
		}},
		{"KeyByHashReturnsRevokedAndExpiredKeys", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			expired := NewKey("k-expired")
			expired.ExpiresAt = At(-time.Hour) // before every other time used
			revoked := NewKey("k-revoked")
			must(t, "CreateKey expired", s.CreateKey(t.Context(), expired))
			must(t, "CreateKey revoked", s.CreateKey(t.Context(), revoked))
			must(t, "RevokeKey", s.RevokeKey(t.Context(), revoked.ID, At(time.Minute)))
			revoked.RevokedAt = At(time.Minute)
			diff(t, "KeyByHash expired", expired, mustKeyByHash(t, s, expired.Hash))
			diff(t, "KeyByHash revoked", revoked, mustKeyByHash(t, s, revoked.Hash))
		}},
		{"DuplicateIDOrHashConflicts", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := NewKey("k1")
			must(t, "CreateKey", s.CreateKey(t.Context(), k))
			sameID := NewKey("k1")
			sameID.Hash = Hash("another secret")
			wantErr(t, "CreateKey with taken ID", s.CreateKey(t.Context(), sameID), store.ErrConflict)
			sameHash := NewKey("k2")
			sameHash.Hash = k.Hash
			wantErr(t, "CreateKey with taken hash", s.CreateKey(t.Context(), sameHash), store.ErrConflict)
			keys, err := s.Keys(t.Context())
			must(t, "Keys", err)
			diff(t, "Keys after conflicts", []store.APIKey{k}, keys)
			_, err = s.KeyByHash(t.Context(), sameID.Hash)
			wantErr(t, "KeyByHash of the refused key's hash", err, store.ErrNotFound)
		}},
		{"KeysAreListedByCreatedAtThenID", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			got, err := s.Keys(t.Context())
			must(t, "Keys of an empty store", err)
			if len(got) != 0 {
				t.Errorf("Keys of an empty store = %v, want none", got)
			}
			// Insertion order, ID order and the wanted order all differ.
			byCreation := map[string]time.Duration{"k-a": 2 * time.Hour, "k-d": 0, "k-c": time.Hour, "k-b": time.Hour}
			for _, id := range []string{"k-a", "k-c", "k-d", "k-b"} {
				k := NewKey(id)
				k.CreatedAt = At(byCreation[id])
				must(t, "CreateKey "+id, s.CreateKey(t.Context(), k))
			}
			got, err = s.Keys(t.Context())
			must(t, "Keys", err)
			var ids []string
			for _, k := range got {
				ids = append(ids, k.ID)
				checkTimes(t, "Keys", keyTimes(k)...)
			}
			diff(t, "Keys order", []string{"k-d", "k-b", "k-c", "k-a"}, ids)
		}},
		{"RevokeKeyKeepsFirstRevocation", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := NewKey("k1")
			must(t, "CreateKey", s.CreateKey(t.Context(), k))
			must(t, "first RevokeKey", s.RevokeKey(t.Context(), "k1", At(time.Hour).In(elsewhere)))
			must(t, "second RevokeKey", s.RevokeKey(t.Context(), "k1", At(2*time.Hour)))
			k.RevokedAt = At(time.Hour)
			diff(t, "KeyByHash after two revocations", k, mustKeyByHash(t, s, k.Hash))
			keys, err := s.Keys(t.Context())
			must(t, "Keys", err)
			diff(t, "Keys after two revocations", []store.APIKey{k}, keys)
		}},
		{"RevokeKeyRevokesOnlyThatKey", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k1, k2 := NewKey("k1"), NewKey("k2")
			must(t, "CreateKey k1", s.CreateKey(t.Context(), k1))
			must(t, "CreateKey k2", s.CreateKey(t.Context(), k2))
			must(t, "RevokeKey k1", s.RevokeKey(t.Context(), "k1", At(time.Hour)))
			diff(t, "KeyByHash k2", k2, mustKeyByHash(t, s, k2.Hash))
		}},
		{"RevokeMissingKeyIsNotFound", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			wantErr(t, "RevokeKey nope", s.RevokeKey(t.Context(), "nope", At(0)), store.ErrNotFound)
			keys, err := s.Keys(t.Context())
			must(t, "Keys", err)
			if len(keys) != 0 {
				t.Errorf("Keys after revoking a missing key = %v, want none", keys)
			}
		}},
	})
}
