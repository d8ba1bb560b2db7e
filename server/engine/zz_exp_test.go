package engine

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

func TestExpSynctestSQLite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "db")
		s, err := sqlite.Open(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := sqlite.Open(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateProject(t.Context(), store.Project{ID: "p", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if _, err := s2.Project(t.Context(), "p"); err != nil {
			t.Fatal(err)
		}
		t.Log(time.Now())
		s.Close()
		s2.Close()
	})
}
