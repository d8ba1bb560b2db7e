package main

import (
	"log/slog"
	"net"
	"sync"
)

// limitListener caps the connections accepted and not yet closed. Past the
// cap, Accept waits for a connection to close before it accepts another, so
// further clients wait in the kernel's listen backlog (their TCP handshake
// completes there; they get no answer until a slot frees, or are refused once
// the backlog is full) instead of costing the process anything. It is what
// golang.org/x/net/netutil.LimitListener does, with a log line.
type limitListener struct {
	net.Listener
	slots     chan struct{} // one token per open connection
	closed    chan struct{}
	closeOnce sync.Once
	full      sync.Once // logs the first time the cap is reached
	log       *slog.Logger
}

func newLimitListener(ln net.Listener, max int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), closed: make(chan struct{}), log: log}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		l.full.Do(func() {
			l.log.Warn("docsapi: connection limit reached; new connections wait until others close (raise --max-connections if this is legitimate traffic)",
				slog.Int("max_connections", cap(l.slots)))
		})
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

// Close closes the listener and ends an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed, however many times it is
// closed (net/http, TLS and a hijacker may each close it).
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
