package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// mustProjectByDomain finds a project by its domain.
func mustProjectByDomain(t *testing.T, s store.Store, domain string) store.Project {
	t.Helper()
	p, err := s.ProjectByDomain(t.Context(), domain)
	must(t, "ProjectByDomain "+domain, err)
	checkTimes(t, "ProjectByDomain", p.CreatedAt)
	return p
}

func testDomains(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"DomainRoundTripsAndFindsItsProjectExactly", func(t *testing.T, s store.Store) {
			p := NewProject("p1")
			p.Domain = "acme-docs"
			must(t, "CreateProject", s.CreateProject(t.Context(), p))
			mustProject(t, s, "p2")
			none := NewProject("p3")
			none.Domain = ""
			must(t, "CreateProject without a domain", s.CreateProject(t.Context(), none))
			got, err := s.Project(t.Context(), "p1")
			must(t, "Project", err)
			diff(t, "Project", p, got)
			diff(t, "ProjectByDomain", p, mustProjectByDomain(t, s, "acme-docs"))
			diff(t, "ProjectByDomain of p2", NewProject("p2"), mustProjectByDomain(t, s, "docs-p2"))
			got, err = s.Project(t.Context(), "p3")
			must(t, "Project p3", err)
			diff(t, "Project without a domain", none, got)
			for _, d := range []string{"", "acme", "acme-docs-x", "ACME-DOCS", "p1"} {
				_, err := s.ProjectByDomain(t.Context(), d)
				wantErr(t, "ProjectByDomain "+d, err, store.ErrNotFound)
			}
		}},
		{"TakenDomainConflictsAndEmptyOnesDoNot", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1") // docs-p1
			taken := NewProject("p2")
			taken.Domain = "docs-p1"
			wantErr(t, "CreateProject with a taken domain", s.CreateProject(t.Context(), taken), store.ErrConflict)
			_, err := s.Project(t.Context(), "p2")
			wantErr(t, "Project refused for its domain", err, store.ErrNotFound)
			for _, id := range []string{"p3", "p4"} {
				p := NewProject(id)
				p.Domain = ""
				must(t, "CreateProject without a domain "+id, s.CreateProject(t.Context(), p))
			}
			upd := NewProject("p3")
			upd.Domain = "docs-p1"
			upd.Name = "Renamed"
			wantErr(t, "UpdateProject to a taken domain", s.UpdateProject(t.Context(), upd), store.ErrConflict)
			got, err := s.Project(t.Context(), "p3")
			must(t, "Project p3", err)
			if got.Domain != "" || got.Name != NewProject("p3").Name {
				t.Errorf("a refused UpdateProject changed the project: %+v", got)
			}
			diff(t, "ProjectByDomain after the refusals", NewProject("p1"), mustProjectByDomain(t, s, "docs-p1"))
		}},
		{"UpdateMovesADomainBetweenProjects", func(t *testing.T, s store.Store) {
			p1 := mustProject(t, s, "p1")
			p2 := mustProject(t, s, "p2")
			p1.Domain = "elsewhere"
			must(t, "UpdateProject p1", s.UpdateProject(t.Context(), p1))
			p2.Domain = "docs-p1" // freed by p1's update
			must(t, "UpdateProject p2", s.UpdateProject(t.Context(), p2))
			diff(t, "ProjectByDomain elsewhere", p1, mustProjectByDomain(t, s, "elsewhere"))
			diff(t, "ProjectByDomain docs-p1", p2, mustProjectByDomain(t, s, "docs-p1"))
			_, err := s.ProjectByDomain(t.Context(), "docs-p2")
			wantErr(t, "ProjectByDomain of the domain p2 left", err, store.ErrNotFound)
			p2.Domain = ""
			must(t, "UpdateProject p2 without a domain", s.UpdateProject(t.Context(), p2))
			_, err = s.ProjectByDomain(t.Context(), "docs-p1")
			wantErr(t, "ProjectByDomain of a domain removed", err, store.ErrNotFound)
		}},
		{"InvalidDomainsAreRefusedAndStoreNothing", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			for _, d := range []string{"Docs", "-docs", "docs-", "a.b", "a_b", "dócs", strings.Repeat("a", store.MaxDomainLength+1)} {
				p := NewProject("p2")
				p.Domain = d
				wantErr(t, "CreateProject with domain "+d, s.CreateProject(t.Context(), p), store.ErrInvalid)
				p.ID = "p1"
				wantErr(t, "UpdateProject with domain "+d, s.UpdateProject(t.Context(), p), store.ErrInvalid)
			}
			_, err := s.Project(t.Context(), "p2")
			wantErr(t, "Project after refused creations", err, store.ErrNotFound)
			diff(t, "p1 after refused updates", NewProject("p1"), mustProjectByDomain(t, s, "docs-p1"))
			long := NewProject("p3")
			long.Domain = strings.Repeat("a", store.MaxDomainLength)
			must(t, "CreateProject with a 63-character domain", s.CreateProject(t.Context(), long))
		}},
	})
}

// newAssistantKey returns an assistant key of projectID with every field
// set, created at At(0). Its hash is Hash("dsc " + id), which no NewKey
// shares.
func newAssistantKey(projectID, id string) store.AssistantKey {
	return store.AssistantKey{
		ID: id, Hash: Hash("dsc " + id), Hint: "mint_dsc_" + id[:min(len(id), 4)], ProjectID: projectID,
		Name: "assistant " + id, Origins: []string{"http://localhost:3000", "https://docs.example.com"}, CreatedAt: At(0),
	}
}

// mustAssistantKeyByHash looks an assistant key up by its hash.
func mustAssistantKeyByHash(t *testing.T, s store.Store, hash []byte) store.AssistantKey {
	t.Helper()
	k, err := s.AssistantKeyByHash(t.Context(), hash)
	must(t, "AssistantKeyByHash", err)
	checkTimes(t, "AssistantKeyByHash", k.CreatedAt, k.RevokedAt)
	return k
}

func testAssistantKeys(t *testing.T, open opener) {
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
	}
	runAll(t, open, []subtest{
		{"CreateThenByHashRoundTripsWithOriginsSorted", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := newAssistantKey("p1", "ak1")
			k.Origins = []string{"https://b.example", "https://a.example", "https://b.example"}
			k.CreatedAt = At(time.Hour).In(elsewhere)
			must(t, "CreateAssistantKey", s.CreateAssistantKey(t.Context(), k))
			want := k
			want.Origins = []string{"https://a.example", "https://b.example"}
			want.CreatedAt = At(time.Hour)
			// A copy of the hash, so that a backend cannot match by
			// slice identity.
			diff(t, "AssistantKeyByHash", want, mustAssistantKeyByHash(t, s, append([]byte(nil), k.Hash...)))
			none := newAssistantKey("p1", "ak2")
			none.Origins = nil
			must(t, "CreateAssistantKey without origins", s.CreateAssistantKey(t.Context(), none))
			diff(t, "AssistantKeyByHash without origins", none, mustAssistantKeyByHash(t, s, none.Hash))
		}},
		{"UnknownHashesAndAdminKeysAreNotFound", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := newAssistantKey("p1", "ak1")
			must(t, "CreateAssistantKey", s.CreateAssistantKey(t.Context(), k))
			admin := NewKey("k1")
			must(t, "CreateKey", s.CreateKey(t.Context(), admin))
			for what, hash := range map[string][]byte{
				"an unknown hash":       Hash("nope"),
				"a prefix of the hash":  k.Hash[:16],
				"an admin key's hash":   admin.Hash,
				"an empty hash":         {},
				"the hash and one more": append(append([]byte(nil), k.Hash...), 0),
			} {
				_, err := s.AssistantKeyByHash(t.Context(), hash)
				wantErr(t, "AssistantKeyByHash of "+what, err, store.ErrNotFound)
			}
			_, err := s.KeyByHash(t.Context(), k.Hash)
			wantErr(t, "KeyByHash of an assistant key's hash", err, store.ErrNotFound)
			keys, err := s.Keys(t.Context())
			must(t, "Keys", err)
			if len(keys) != 1 || keys[0].ID != "k1" {
				t.Errorf("Keys = %v, want the admin key alone", keys)
			}
			wantErr(t, "RevokeKey of an assistant key", s.RevokeKey(t.Context(), "ak1", At(time.Hour)), store.ErrNotFound)
			wantErr(t, "RevokeAssistantKey of an admin key", s.RevokeAssistantKey(t.Context(), "k1", At(time.Hour)), store.ErrNotFound)
			diff(t, "AssistantKeyByHash", k, mustAssistantKeyByHash(t, s, k.Hash))
			diff(t, "KeyByHash", admin, mustKeyByHash(t, s, admin.Hash))
		}},
		{"TakenIDOrHashConflictsAndMissingProjectIsNotFound", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			first := newAssistantKey("p1", "ak1")
			must(t, "CreateAssistantKey", s.CreateAssistantKey(t.Context(), first))
			sameID := newAssistantKey("p2", "ak1")
			sameID.Hash = Hash("other")
			wantErr(t, "CreateAssistantKey with a taken ID", s.CreateAssistantKey(t.Context(), sameID), store.ErrConflict)
			sameHash := newAssistantKey("p2", "ak2")
			sameHash.Hash = first.Hash
			wantErr(t, "CreateAssistantKey with a taken hash", s.CreateAssistantKey(t.Context(), sameHash), store.ErrConflict)
			wantErr(t, "CreateAssistantKey for a missing project", s.CreateAssistantKey(t.Context(), newAssistantKey("nope", "ak3")), store.ErrNotFound)
			diff(t, "AssistantKeyByHash", first, mustAssistantKeyByHash(t, s, first.Hash))
			for _, hash := range [][]byte{Hash("other"), newAssistantKey("nope", "ak3").Hash} {
				_, err := s.AssistantKeyByHash(t.Context(), hash)
				wantErr(t, "AssistantKeyByHash of a refused key", err, store.ErrNotFound)
			}
			all, err := s.AssistantKeys(t.Context(), "")
			must(t, "AssistantKeys", err)
			diff(t, "AssistantKeys after the refusals", []store.AssistantKey{first}, all)
		}},
		{"KeysAreListedPerProjectByCreatedAtThenID", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			for _, tc := range []struct {
				project, id string
				at          time.Duration
			}{{"p1", "ak_c", 0}, {"p1", "ak_a", time.Hour}, {"p2", "ak_b", 0}, {"p1", "ak_b2", 0}} {
				k := newAssistantKey(tc.project, tc.id)
				k.CreatedAt = At(tc.at)
				must(t, "CreateAssistantKey", s.CreateAssistantKey(t.Context(), k))
			}
			list := func(project string) []string {
				ks, err := s.AssistantKeys(t.Context(), project)
				must(t, "AssistantKeys", err)
				if ks == nil {
					t.Errorf("AssistantKeys(%q) is nil, want an empty, non-nil slice", project)
				}
				out := []string{}
				for _, k := range ks {
					checkTimes(t, "AssistantKeys", k.CreatedAt, k.RevokedAt)
					out = append(out, k.ID)
				}
				return out
			}
			diff(t, "p1", []string{"ak_b2", "ak_c", "ak_a"}, list("p1"))
			diff(t, "p2", []string{"ak_b"}, list("p2"))
			diff(t, "every project", []string{"ak_b", "ak_b2", "ak_c", "ak_a"}, list(""))
			diff(t, "unknown project", []string{}, list("p3"))
		}},
		{"RevokeKeepsTheFirstRevocationAndByHashStillFindsIt", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			k := newAssistantKey("p1", "ak1")
			must(t, "CreateAssistantKey", s.CreateAssistantKey(t.Context(), k))
			must(t, "CreateAssistantKey ak2", s.CreateAssistantKey(t.Context(), newAssistantKey("p1", "ak2")))
			must(t, "RevokeAssistantKey", s.RevokeAssistantKey(t.Context(), "ak1", At(time.Hour).In(elsewhere)))
			must(t, "RevokeAssistantKey again", s.RevokeAssistantKey(t.Context(), "ak1", At(2*time.Hour)))
			want := k
			want.RevokedAt = At(time.Hour)
			diff(t, "AssistantKeyByHash", want, mustAssistantKeyByHash(t, s, k.Hash))
			diff(t, "the other key", newAssistantKey("p1", "ak2"), mustAssistantKeyByHash(t, s, newAssistantKey("p1", "ak2").Hash))
			wantErr(t, "RevokeAssistantKey of a missing key", s.RevokeAssistantKey(t.Context(), "ak3", At(time.Hour)), store.ErrNotFound)
		}},
		{"InvalidArgumentsAreRefusedAndStoreNothing", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			with := func(f func(*store.AssistantKey)) store.AssistantKey {
				k := newAssistantKey("p1", "ak1")
				f(&k)
				return k
			}
			for name, err := range map[string]error{
				"a key without ID":          s.CreateAssistantKey(ctx, with(func(k *store.AssistantKey) { k.ID = "" })),
				"a key without hash":        s.CreateAssistantKey(ctx, with(func(k *store.AssistantKey) { k.Hash = nil })),
				"a key without project":     s.CreateAssistantKey(ctx, with(func(k *store.AssistantKey) { k.ProjectID = "" })),
				"an origin with a space":    s.CreateAssistantKey(ctx, with(func(k *store.AssistantKey) { k.Origins = []string{"https://a b"} })),
				"an empty origin":           s.CreateAssistantKey(ctx, with(func(k *store.AssistantKey) { k.Origins = []string{""} })),
				"a name with NUL":           s.CreateAssistantKey(ctx, with(func(k *store.AssistantKey) { k.Name = "a\x00b" })),
				"a name of invalid UTF-8":   s.CreateAssistantKey(ctx, with(func(k *store.AssistantKey) { k.Name = "a\xffb" })),
				"revoke at zero time":       s.RevokeAssistantKey(ctx, "ak1", time.Time{}),
				"revoke of an empty key ID": s.RevokeAssistantKey(ctx, "", At(0)),
			} {
				wantErr(t, name, err, store.ErrInvalid)
			}
			all, err := s.AssistantKeys(ctx, "")
			must(t, "AssistantKeys", err)
			diff(t, "AssistantKeys after refused calls", []store.AssistantKey{}, all)
		}},
	})
}
