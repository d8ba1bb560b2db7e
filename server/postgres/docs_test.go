package postgres_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// TestDocsAnalyzedAfterLargeUpdate checks that an update writing many
// pages leaves the index's tables analyzed (their statistics make the
// search's plan use the GIN index), and that a small one does not spend
// an ANALYZE. last_analyze is set by an explicit ANALYZE only, never by
// autovacuum, so the test does not depend on autovacuum's timing.
func TestDocsAnalyzedAfterLargeUpdate(t *testing.T) {
	for _, c := range []struct {
		pages    int
		analyzed bool
	}{{10, false}, {60, true}} {
		dbURL := newDatabase(t)
		s := open(t, dbURL)
		if err := s.CreateProject(t.Context(), storetest.NewProject("p1")); err != nil {
			t.Fatal(err)
		}
		pages := storetest.DocsCorpus(c.pages)
		var files []store.DocFile
		for _, p := range pages {
			files = append(files, store.DocFile{Path: p.File, Blob: "blob:" + p.File})
		}
		if err := s.UpdateDocs(t.Context(), store.DocsUpdate{ProjectID: "p1", Commit: "c1", At: storetest.At(0), Files: files, Pages: pages, Replace: true}); err != nil {
			t.Fatal(err)
		}
		conn := connect(t, dbURL)
		for _, table := range []string{"doc_pages", "doc_sections"} {
			var analyzed bool
			if err := conn.QueryRow(t.Context(),
				`SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = $1`, table).Scan(&analyzed); err != nil {
				t.Fatal(err)
			}
			if analyzed != c.analyzed {
				t.Errorf("after an update of %d pages into an empty index, %s analyzed: %v, want %v", c.pages, table, analyzed, c.analyzed)
			}
		}
	}
}
