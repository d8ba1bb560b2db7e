package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// countingQuerier counts the statements sent to it and answers none.
type countingQuerier struct{ sent int }

func (c *countingQuerier) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	c.sent++
	return pgconn.CommandTag{}, nil
}

func (c *countingQuerier) Query(context.Context, string, ...any) (pgx.Rows, error) {
	c.sent++
	return nil, nil
}

func (c *countingQuerier) QueryRow(context.Context, string, ...any) pgx.Row {
	c.sent++
	return nil
}

// A write of one statement is one transaction only while it is one
// statement: alone refuses, before sending it, a second statement (it
// would commit apart from the first) and a statement that leaves the
// write's wake-up queued (it would never be sent).
func TestAloneSendsOneStatementAndItsWakeUp(t *testing.T) {
	send := map[string]func(a *alone){
		"Exec":     func(a *alone) { _, _ = a.Exec(t.Context(), "SELECT 1") },
		"Query":    func(a *alone) { _, _ = a.Query(t.Context(), "SELECT 1") },
		"QueryRow": func(a *alone) { _ = a.QueryRow(t.Context(), "SELECT 1") },
	}
	for name, second := range send {
		t.Run("second "+name, func(t *testing.T) {
			q := &countingQuerier{}
			var announce bool
			a := &alone{q: q, announce: &announce}
			send["Exec"](a)
			mustPanic(t, "a second statement", func() { second(a) })
			if q.sent != 1 {
				t.Errorf("%d statements reached the database, want 1", q.sent)
			}
		})
		t.Run("wake-up left by "+name, func(t *testing.T) {
			q := &countingQuerier{}
			announce := true
			mustPanic(t, "does not carry its wake-up", func() { send[name](&alone{q: q, announce: &announce}) })
			if q.sent != 0 {
				t.Errorf("%d statements reached the database, want 0", q.sent)
			}
		})
	}
}

// mustPanic runs f and fails unless it panics with a message containing want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if msg, _ := r.(string); !strings.Contains(msg, want) {
			t.Errorf("panic %v, want one saying %q", r, want)
		}
	}()
	f()
}
