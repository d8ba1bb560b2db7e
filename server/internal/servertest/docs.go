package servertest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/store"
)

// IndexDocs makes project projectID, with the domain identifier domain,
// and writes its documentation index: the pages of package docs' test
// site (server/docs/testdata/site), then extra (pages read with
// docs.Read, as tests that add their own make them), at commit "c1".
func (e *Env) IndexDocs(t testing.TB, projectID, domain string, extra ...store.DocPage) {
	t.Helper()
	ctx := t.Context()
	if _, err := e.Server.CreateProject(ctx, store.Project{ID: projectID, Domain: domain}); err != nil {
		t.Fatal(err)
	}
	_, here, _, _ := runtime.Caller(0)
	root, err := os.OpenRoot(filepath.Join(filepath.Dir(here), "..", "..", "docs", "testdata", "site"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	site, err := docs.Read(root.FS(), docs.Options{ProjectID: projectID, Root: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	pages := append(site.Pages, extra...)
	u := store.DocsUpdate{ProjectID: projectID, Commit: "c1", At: e.Clock.Now(), Pages: pages, Replace: true}
	for _, p := range pages {
		u.Files = append(u.Files, store.DocFile{Path: p.File, Blob: "blob-" + p.File})
	}
	if err := e.Store.UpdateDocs(ctx, u); err != nil {
		t.Fatal(err)
	}
}
