package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// receive waits for a value on ch, failing the test if none comes within a
// few seconds or ch is closed.
func receive(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the channel was closed", what)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no notification", what)
	}
}

// waitClosed waits for ch to be closed, draining values sent before.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("%s: the channel is still open", what)
		}
	}
}

// rawListener listens on the job channel with a plain connection, to see
// the payloads and the order of every notification the database delivers.
type rawListener struct {
	t    *testing.T
	conn *pgx.Conn
}

func listenRaw(t *testing.T, dbURL string) *rawListener {
	t.Helper()
	conn := connect(t, dbURL)
	if _, err := conn.Exec(t.Context(), "LISTEN docsapi_jobs"); err != nil {
		t.Fatalf("LISTEN: %v", err)
	}
	return &rawListener{t: t, conn: conn}
}

// next returns the payload of the next notification.
func (l *rawListener) next(what string) string {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		l.t.Fatalf("%s: no notification: %v", what, err)
	}
	return n.Payload
}

// marker sends a notification with payload "marker" from a connection of
// its own. PostgreSQL delivers notifications in the order their transactions
// commit, so if the next one a listener gets is the marker, nothing was
// delivered between: this is how the tests see that a write sent nothing,
// without waiting for a time and hoping.
func marker(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	if _, err := conn.Exec(t.Context(), "NOTIFY docsapi_jobs, 'marker'"); err != nil {
		t.Fatalf("NOTIFY: %v", err)
	}
}

// Another Store's CreateJob and AddPrompt wake a listener; writes that roll
// back, replays and reads send nothing; the channel closes with ctx.
func TestJobNotifications(t *testing.T) {
	db := newDatabase(t)
	a, b := open(t, db), open(t, db)
	ctx := t.Context()
	must(t, b.CreateProject(ctx, storetest.NewProject("p1")))

	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := a.JobNotifications(lctx)
	if err != nil {
		t.Fatalf("JobNotifications: %v", err)
	}
	if cap(ch) != 1 {
		t.Errorf("channel capacity %d, want 1: one pending wake-up is enough, and senders never block", cap(ch))
	}
	raw := listenRaw(t, db)
	other := connect(t, db)

	nj := storetest.NewJob("p1", "j1", storetest.At(0))
	nj.Idempotency = &store.Idempotency{Key: "k", RequestHash: storetest.Hash("req")}
	if _, _, err := b.CreateJob(ctx, nj); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	receive(t, ch, "after CreateJob")
	if p := raw.next("after CreateJob"); p != "" {
		t.Errorf("payload %q, want empty", p)
	}

	// A create that fails after queueing its notification (the ID is
	// taken) rolls it back with everything else.
	again := storetest.NewJob("p1", "j1", storetest.At(time.Minute))
	if _, _, err := b.CreateJob(ctx, again); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("CreateJob with a taken ID: %v, want ErrConflict", err)
	}
	// A replay creates nothing, so it announces nothing; nor does a read.
	if _, replayed, err := b.CreateJob(ctx, nj); err != nil || !replayed {
		t.Fatalf("CreateJob replay: replayed %v, %v", replayed, err)
	}
	if _, err := b.Job(ctx, "p1", "j1"); err != nil {
		t.Fatal(err)
	}
	marker(t, other)
	if p := raw.next("after the refused create"); p != "marker" {
		t.Errorf("a notification with payload %q came before the marker: a write that committed nothing sent one", p)
	}
	receive(t, ch, "the marker")

	if _, _, err := b.AddPrompt(ctx, store.NewPrompt{ProjectID: "p1", JobID: "j1", Prompt: "more", At: storetest.At(time.Hour)}); err != nil {
		t.Fatalf("AddPrompt: %v", err)
	}
	receive(t, ch, "after AddPrompt")
	if p := raw.next("after AddPrompt"); p != "" {
		t.Errorf("payload %q, want empty", p)
	}

	// A create without a key wakes it too.
	if _, _, err := b.CreateJob(ctx, storetest.NewJob("p1", "j2", storetest.At(2*time.Hour))); err != nil {
		t.Fatalf("CreateJob without a key: %v", err)
	}
	receive(t, ch, "after a create without a key")
	if p := raw.next("after a create without a key"); p != "" {
		t.Errorf("payload %q, want empty", p)
	}

	cancel()
	waitClosed(t, ch, "after ctx ended")
}

// A listener whose connection dies reconnects, wakes its engine (jobs may
// have been created meanwhile), and hears later jobs again.
func TestJobNotificationsReconnect(t *testing.T) {
	db := newDatabase(t)
	a, b := open(t, db), open(t, db)
	ctx := t.Context()
	must(t, b.CreateProject(ctx, storetest.NewProject("p1")))
	ch, err := a.JobNotifications(ctx)
	if err != nil {
		t.Fatalf("JobNotifications: %v", err)
	}
	admin := connect(t, db)
	var killed int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN docsapi_jobs'`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminating the listener: %d terminated, %v; want 1", killed, err)
	}
	receive(t, ch, "after reconnecting")
	waitListeners(t, db, 1)
	if _, _, err := b.CreateJob(ctx, storetest.NewJob("p1", "j1", storetest.At(0))); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	receive(t, ch, "after CreateJob on the new connection")
}

// Closing the Store ends its listeners: their channels close and their
// connections go.
func TestJobNotificationsEndWithStore(t *testing.T) {
	db := newDatabase(t)
	s, err := postgres.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.JobNotifications(context.Background())
	if err != nil {
		t.Fatalf("JobNotifications: %v", err)
	}
	waitListeners(t, db, 1)
	must(t, s.Close())
	waitClosed(t, ch, "after Close")
	waitListeners(t, db, 0)
	if _, err := s.JobNotifications(context.Background()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("JobNotifications after Close: %v, want ErrClosed", err)
	}
}
