package dashboard_test

import (
	"path/filepath"
	"testing"

	"github.com/docsapi/docsapi-go/server/internal/sessiontest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// A signed-out cookie is refused by another server on the same SQLite
// database and by a server started afterwards: the sign-out lives in the
// database, not in the memory of the process that took it.
// (server/postgres runs the same scenario on replicas of one PostgreSQL
// database.)
func TestDashboardSignOutLastsOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docsapi.db")
	sessiontest.SignOutLasts(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), path)
		return storetest.Opened(t, s, err)
	})
}
