package postgres_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// TestConformance runs the suite every backend passes, each subtest on a
// fresh database of its own, empty but for the schema.
func TestConformance(t *testing.T) {
	adminURL(t) // skip before the suite creates a subtest per case
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, newSchemaDatabase(t))
	})
}

// TestConformanceDailyPathCap runs the suite's tests of the cap on paths
// per project and day, on stores opened with a small cap.
func TestConformanceDailyPathCap(t *testing.T) {
	adminURL(t)
	storetest.RunDailyPathCap(t, func(t *testing.T, max int) store.Store {
		return open(t, newSchemaDatabase(t), postgres.WithDailyPathCap(max))
	})
}

// TestVisitorAccuracy checks the visitors' estimates against exact counts.
func TestVisitorAccuracy(t *testing.T) {
	adminURL(t)
	storetest.RunVisitorAccuracy(t, func(t *testing.T) store.Store {
		return open(t, newSchemaDatabase(t))
	})
}

// TestConformanceJobCounts runs the suite's tests of store.JobCounter.
func TestConformanceJobCounts(t *testing.T) {
	adminURL(t)
	storetest.RunJobCounts(t, func(t *testing.T) store.Store {
		return open(t, newSchemaDatabase(t))
	})
}
