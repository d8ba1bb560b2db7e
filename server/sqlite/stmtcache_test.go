package sqlite

import (
	"fmt"
	"testing"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// A read or write the store has run once runs from prepared statements the
// next time: nothing is left to parse (no statement missed the cache).
func TestStatementsArePreparedOnce(t *testing.T) {
	s := open(t, dbPath(t))
	ctx := t.Context()
	mustProject(t, s, "p")
	job := func(i int) store.NewJob {
		id := fmt.Sprintf("job_%020d", i)
		return store.NewJob{ID: id, ProjectID: "p", Prompt: "Document the limits.", Branch: "docs-agent/" + id, CreatedAt: t0}
	}
	run := func(i int) {
		t.Helper()
		if _, _, err := s.CreateJob(ctx, job(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Job(ctx, "p", job(i).ID); err != nil {
			t.Fatal(err)
		}
	}
	run(1)
	if len(*s.writes.stmts.Load()) == 0 || len(*s.reads.stmts.Load()) == 0 {
		t.Fatalf("after a create and a read: %d writer statements, %d reader ones cached", len(*s.writes.stmts.Load()), len(*s.reads.stmts.Load()))
	}
	// The next read runs every statement from the cache.
	var missed []string
	err := backend{s}.Read(ctx, "probe", func(tx sqlstore.Tx) error {
		_, _, err := tx.Job(ctx, "p", job(1).ID)
		missed = tx.(txn).tx.missed
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missed) != 0 {
		t.Errorf("reading a job again parsed %d statements: %q", len(missed), missed)
	}
	// And a second create and read still answer right from them.
	run(2)
}

// However many distinct statements run, the cache holds at most
// maxCachedStmts: a query built with a varying number of parameters cannot
// grow it without bound.
func TestStatementCacheIsBounded(t *testing.T) {
	s := open(t, dbPath(t))
	ctx := t.Context()
	for i := range maxCachedStmts + 50 {
		tx, err := s.r.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		ct := s.reads.wrap(tx)
		var n int
		if err := ct.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d: %d, %v", i, n, err)
		}
		tx.Rollback()
		s.reads.learn(ctx, ct)
	}
	if n := len(*s.reads.stmts.Load()); n != maxCachedStmts {
		t.Errorf("%d statements cached, want the bound, %d", n, maxCachedStmts)
	}
	// Close closes them, and a store closed learns nothing more.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(*s.reads.stmts.Load()); n != 0 {
		t.Errorf("%d statements left after Close", n)
	}
}
