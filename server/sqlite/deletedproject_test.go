package sqlite

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// A project's row deleted by another program: see
// storetest.CreateJobOfAProjectDeletedByHand.
func TestCreateJobOfAProjectDeletedByHand(t *testing.T) {
	path := dbPath(t)
	s := open(t, path)
	raw := rawOpen(t, path)
	storetest.CreateJobOfAProjectDeletedByHand(t, s,
		func(q string) error { _, err := raw.Exec(q); return err },
		func(q string) (n int, err error) { return n, raw.QueryRow(q).Scan(&n) })
}
