package postgres_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// TestConformance runs the suite every backend passes, each subtest on a
// fresh, empty database of its own.
func TestConformance(t *testing.T) {
	adminURL(t) // skip before the suite creates a subtest per case
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, newDatabase(t))
	})
}
