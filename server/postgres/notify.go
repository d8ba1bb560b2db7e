package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/store"
)

// Timings of a JobNotifications listener.
const (
	// listenIdle is how long the listener waits for a notification before
	// it pings its connection. A connection that died without a word (a
	// dropped network path, a failover) would otherwise leave it waiting
	// forever, deaf to every notification; the ping finds out.
	listenIdle = 30 * time.Second
	// listenPingTimeout bounds that ping.
	listenPingTimeout = 5 * time.Second
	// The delay before reconnecting grows from the first to the last value,
	// doubling, so a database that is down is not hammered, and one that
	// blinked is back in a tenth of a second.
	listenFirstBackoff = 100 * time.Millisecond
	listenMaxBackoff   = 10 * time.Second
)

// JobNotifications returns a channel that receives a value soon after any
// Store sharing the database creates a job or adds a prompt, as
// store.JobNotifier documents; the engines of every replica use it to start
// such jobs at once instead of at their next poll.
//
// When it returns, the subscription is in place: every job created from
// then on is announced. It holds a connection of its own, outside the pool,
// listening on the channel docsapi_jobs. The returned channel has room for
// one value and a notification that finds it full is dropped: a wake-up
// already pending is enough, as the engine claims until nothing is left. If
// the connection drops, the listener reconnects with a growing delay, and
// sends a value once it is back, since jobs may have been created while it
// was deaf. The channel is closed when ctx ends or the Store is closed.
func (s *Store) JobNotifications(ctx context.Context) (<-chan struct{}, error) {
	const op = "job notifications"
	if s.closed.Load() {
		return nil, opErr(op, store.ErrClosed)
	}
	conn, err := s.subscribe(ctx)
	if err != nil {
		return nil, s.dbErr(op, err)
	}
	// The listener ends with ctx or with the Store, whichever is first.
	lctx, cancel := context.WithCancel(ctx)
	stopWithStore := context.AfterFunc(s.life, cancel)
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		stopWithStore()
		cancel()
		closeConn(conn)
		return nil, opErr(op, store.ErrClosed)
	}
	s.listeners.Add(1)
	s.mu.Unlock()
	ch := make(chan struct{}, 1)
	go func() {
		defer s.listeners.Done()
		defer cancel()
		defer stopWithStore()
		defer close(ch)
		s.forward(lctx, conn, ch)
	}()
	return ch, nil
}

// subscribe opens a dedicated connection and starts listening on it.
func (s *Store) subscribe(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.listen.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		closeConn(conn)
		return nil, err
	}
	return conn, nil
}

// closeConn closes a listener's connection without waiting long for a
// database that may be gone.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// forward turns the notifications of conn into values on ch until ctx ends,
// replacing conn whenever it fails.
func (s *Store) forward(ctx context.Context, conn *pgx.Conn, ch chan<- struct{}) {
	for {
		err := wait(ctx, conn, ch)
		closeConn(conn)
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("postgres: job notifications: connection lost; reconnecting", slog.Any("error", err))
		if conn = s.resubscribe(ctx); conn == nil {
			return
		}
		s.log.Info("postgres: job notifications: listening again")
		wake(ch)
	}
}

// wait forwards conn's notifications to ch until ctx ends or conn fails,
// and returns why it stopped.
func wait(ctx context.Context, conn *pgx.Conn, ch chan<- struct{}) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, listenIdle)
		_, err := conn.WaitForNotification(wctx)
		idle := wctx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case err == nil:
			wake(ch)
		case ctx.Err() != nil:
			return ctx.Err()
		case idle:
			// A timed-out wait leaves pgx's connection usable: check
			// that the server is still there.
			pctx, cancel := context.WithTimeout(ctx, listenPingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
		default:
			return err
		}
	}
}

// resubscribe reconnects until it succeeds or ctx ends (then it returns
// nil), waiting a growing, jittered delay before each try.
func (s *Store) resubscribe(ctx context.Context) *pgx.Conn {
	delay := listenFirstBackoff
	for {
		// Jitter spreads the replicas, which all lost the database at
		// the same moment, over the delay.
		t := time.NewTimer(delay/2 + rand.N(delay/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		conn, err := s.subscribe(ctx)
		if err == nil {
			return conn
		}
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return nil
		}
		s.log.Warn("postgres: job notifications: reconnecting failed", slog.Any("error", err))
		delay = min(2*delay, listenMaxBackoff)
	}
}

// wake puts a value on ch unless one is pending already.
func wake(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
