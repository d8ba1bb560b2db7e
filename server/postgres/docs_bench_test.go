package postgres_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// BenchmarkDocs measures the documentation index's first index and search
// on 5,000 pages (storetest.BenchmarkDocs), each store on a new database.
func BenchmarkDocs(b *testing.B) {
	storetest.BenchmarkDocs(b, func(b *testing.B) store.Store { return open(b, newDatabase(b)) })
}
