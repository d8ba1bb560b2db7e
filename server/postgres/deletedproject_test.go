package postgres_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// A project's row deleted by an operator: see
// storetest.CreateJobOfAProjectDeletedByHand.
func TestCreateJobOfAProjectDeletedByHand(t *testing.T) {
	db := newDatabase(t)
	s := open(t, db)
	conn := connect(t, db)
	ctx := t.Context()
	storetest.CreateJobOfAProjectDeletedByHand(t, s,
		func(q string) error { _, err := conn.Exec(ctx, q); return err },
		func(q string) (n int, err error) { return n, conn.QueryRow(ctx, q).Scan(&n) })
}
