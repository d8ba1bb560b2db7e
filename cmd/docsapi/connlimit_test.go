package main

import (
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// accepted collects what a listener accepts, and counts the connections
// open at once.
type accepted struct {
	mu        sync.Mutex
	open, max int
	conns     chan net.Conn
	done      chan error
}

// acceptAll accepts from ln until it fails, counting the connections open
// (accepted and not yet closed by the test through close).
func acceptAll(ln net.Listener) *accepted {
	a := &accepted{conns: make(chan net.Conn, 16), done: make(chan error, 1)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				a.done <- err
				return
			}
			a.mu.Lock()
			a.open++
			a.max = max(a.max, a.open)
			a.mu.Unlock()
			a.conns <- c
		}
	}()
	return a
}

func (a *accepted) close(c net.Conn) {
	a.mu.Lock()
	a.open--
	a.mu.Unlock()
	c.Close()
}

func (a *accepted) next(t *testing.T, within time.Duration) net.Conn {
	t.Helper()
	select {
	case c := <-a.conns:
		return c
	case <-time.After(within):
		t.Fatalf("no connection was accepted within %s", within)
		return nil
	}
}

func (a *accepted) none(t *testing.T, during time.Duration, why string) {
	t.Helper()
	select {
	case <-a.conns:
		t.Fatalf("a connection was accepted %s", why)
	case <-time.After(during):
	}
}

func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	const capacity = 3
	ln := newLimitListener(inner, capacity, slog.New(slog.NewTextHandler(&logs, nil)))
	a := acceptAll(ln)

	// 5 clients: 3 are accepted, 2 wait in the backlog.
	for range capacity + 2 {
		c, err := net.DialTimeout("tcp", inner.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	var open []net.Conn
	for range capacity {
		open = append(open, a.next(t, 5*time.Second))
	}
	a.none(t, 300*time.Millisecond, "past the cap")

	// Closing one lets one more through, and only one, even when it is
	// closed twice.
	a.close(open[0])
	open[0].Close()
	open = append(open[1:], a.next(t, 5*time.Second))
	a.none(t, 300*time.Millisecond, "past the cap after a connection was closed twice")

	a.close(open[0])
	open = append(open[1:], a.next(t, 5*time.Second))

	if got := strings.Count(logs.String(), "connection limit reached"); got != 1 {
		t.Errorf("the cap's warning was logged %d times, want once:\n%s", got, logs.String())
	}
	a.mu.Lock()
	if a.max > capacity {
		t.Errorf("%d connections were open at once, over the cap of %d", a.max, capacity)
	}
	a.mu.Unlock()

	// Closing the listener ends an Accept waiting for a slot.
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waits for a slot after the listener was closed")
	}
	for _, c := range open {
		a.close(c)
	}
}
