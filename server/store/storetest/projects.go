package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// elsewhere is a zone east of UTC by a non-whole hour, so a backend that
// keeps the caller's zone, or converts through the local zone, is caught.
var elsewhere = time.FixedZone("UTC+05:30", 5*3600+30*60)

func testProjects(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"CreateThenGetRoundTripsEveryField", func(t *testing.T, s store.Store) {
			p := NewProject("p1")
			p.CreatedAt = At(time.Hour).In(elsewhere)
			must(t, "CreateProject", s.CreateProject(t.Context(), p))
			got, err := s.Project(t.Context(), "p1")
			must(t, "Project", err)
			diff(t, "Project", p, got)
			checkTimes(t, "Project", got.CreatedAt)
		}},
		{"EmptyRefRoundTripsAsEmpty", func(t *testing.T, s store.Store) {
			p := NewProject("p1")
			p.Ref = ""
			must(t, "CreateProject", s.CreateProject(t.Context(), p))
			got, err := s.Project(t.Context(), "p1")
			must(t, "Project", err)
			diff(t, "Project", p, got)
		}},
		{"CreateWithTakenIDConflicts", func(t *testing.T, s store.Store) {
			p := mustProject(t, s, "p1")
			other := NewProject("p1")
			other.Name = "Impostor"
			other.Repository = "https://git.example.com/impostor.git"
			wantErr(t, "second CreateProject p1", s.CreateProject(t.Context(), other), store.ErrConflict)
			got, err := s.Project(t.Context(), "p1")
			must(t, "Project", err)
			diff(t, "Project after conflict", p, got)
		}},
		{"MissingProjectIsNotFound", func(t *testing.T, s store.Store) {
			_, err := s.Project(t.Context(), "nope")
			wantErr(t, "Project nope", err, store.ErrNotFound)
			wantErr(t, "UpdateProject nope", s.UpdateProject(t.Context(), NewProject("nope")), store.ErrNotFound)
			// An update must not create the project it did not find.
			_, err = s.Project(t.Context(), "nope")
			wantErr(t, "Project nope after UpdateProject", err, store.ErrNotFound)
		}},
		{"UpdateReplacesFieldsButKeepsCreatedAt", func(t *testing.T, s store.Store) {
			p := mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			upd := store.Project{
				ID:         "p1",
				Name:       "Renamed",
				Repository: "https://git.example.com/moved.git",
				Ref:        "", // replacing means an empty field empties it
				Model:      "other-model",
				CreatedAt:  At(48 * time.Hour),
			}
			must(t, "UpdateProject", s.UpdateProject(t.Context(), upd))
			want := upd
			want.CreatedAt = p.CreatedAt
			got, err := s.Project(t.Context(), "p1")
			must(t, "Project p1", err)
			diff(t, "Project p1 after update", want, got)
			got2, err := s.Project(t.Context(), "p2")
			must(t, "Project p2", err)
			diff(t, "Project p2 (not updated)", NewProject("p2"), got2)
		}},
		{"ProjectsAreListedByID", func(t *testing.T, s store.Store) {
			got, err := s.Projects(t.Context())
			must(t, "Projects of an empty store", err)
			if len(got) != 0 {
				t.Errorf("Projects of an empty store = %v, want none", got)
			}
			// Created out of order, and with CreatedAt against the ID
			// order, so neither insertion nor creation order passes.
			var want []store.Project
			for i, id := range []string{"p-c", "p-a", "p-b"} {
				p := NewProject(id)
				p.CreatedAt = At(time.Duration(-i) * time.Hour)
				must(t, "CreateProject "+id, s.CreateProject(t.Context(), p))
				want = append(want, p)
			}
			want[0], want[1], want[2] = want[1], want[2], want[0]
			got, err = s.Projects(t.Context())
			must(t, "Projects", err)
			diff(t, "Projects", want, got)
			for _, p := range got {
				checkTimes(t, "Projects", p.CreatedAt)
			}
		}},
	})
}
