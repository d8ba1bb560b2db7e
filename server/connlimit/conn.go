package connlimit

import (
	"container/list"
	"net"
	"net/netip"
	"sync/atomic"
)

// state is what a connection does with its slot.
type state int

const (
	// waiting: for its TLS handshake, its request's headers, or the next
	// request. Listed in its group's waiting list.
	waiting state = iota
	// inRequest: a handler runs, or net/http serves a request (see busy).
	inRequest
	// closing: its answer, which said Connection: close, is written, and
	// net/http only reads what is left of the request before closing.
	// Listed in the Limiter's closing list.
	closing
	// gone: closed, or taken for a newcomer; counted nowhere.
	gone
)

// conn is an admitted connection. Its fields after finishing are guarded
// by the Limiter's mu.
//
// It is in a request while a handler runs (active) or net/http says it is
// busy: for HTTP/1.x, net/http calls the StateActive hook once a request's
// headers are read (despite its documentation's "read 1 or more bytes")
// and StateIdle once the answer is written; for HTTP/2, StateActive when a
// stream opens on an idle connection and StateIdle when the last one
// closes. Each alone has a gap: a handler's end comes before its answer is
// written; an HTTP/2 stream reset before its handler starts makes
// StateIdle come before the handler.
type conn struct {
	net.Conn
	l      *Limiter
	peer   netip.Addr
	group  *group
	exempt bool // a trusted proxy's

	// finishing: an HTTP/1.x handler answered with Connection: close and
	// ended, leaving its body unread; the next read is net/http draining
	// the body after writing the answer.
	finishing atomic.Bool

	state  state
	active int  // handlers running (HTTP/2 runs several at once)
	busy   bool // between net/http's StateActive and StateIdle
	elem   *list.Element
}

// Close closes the connection and gives its slot back, however many times
// it is closed (net/http, TLS and the Limiter may each close it).
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.forget(c)
	c.l.mu.Unlock()
	return err
}

// CloseWrite half-closes the connection where it can (TCP), as net/http
// does before a lingering close, so that the client sees the end of the
// answer at once.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Read reads, and first marks the connection closing if net/http reads
// from it after answering with Connection: close.
func (c *conn) Read(p []byte) (int, error) {
	if c.finishing.Load() {
		c.l.markClosing(c)
	}
	return c.Conn.Read(p)
}

// unlist takes c out of the list it is in. l.mu is held.
func (l *Limiter) unlist(c *conn) {
	switch c.state {
	case waiting:
		c.group.waiting.Remove(c.elem)
		l.waiting--
	case closing:
		l.closing.Remove(c.elem)
	}
	c.elem = nil
}

// listWaiting makes c waiting. l.mu is held.
func (l *Limiter) listWaiting(c *conn) {
	c.state, c.elem = waiting, c.group.waiting.PushBack(c)
	l.waiting++
	l.signalRoom()
}

// forget gives c's slot back, once. l.mu is held.
func (l *Limiter) forget(c *conn) {
	if c.state == gone {
		return
	}
	l.unlist(c)
	c.state = gone
	c.group.open--
	if c.group.open == 0 {
		delete(l.addrs, c.group.key)
	}
	l.open--
	l.signalRoom()
}

// settle moves c between waiting and in a request as its handlers and
// net/http's word say. A connection going back to waiting past its
// address's budget is closed if mayClose (its answers are written: net/http
// said StateIdle), and listed anyway otherwise. It reports whether it
// closed c. l.mu is held.
func (l *Limiter) settle(c *conn, mayClose bool) (closed bool) {
	if c.state == gone {
		return false
	}
	if c.active > 0 || c.busy {
		if c.state != inRequest {
			l.unlist(c)
			c.state = inRequest
		}
		return false
	}
	if c.state == waiting {
		return false
	}
	c.finishing.Store(false)
	if mayClose && !c.exempt && c.group.waiting.Len() >= l.cfg.WaitingPerAddress {
		l.forget(c)
		return true
	}
	l.unlist(c)
	l.listWaiting(c)
	return false
}

// beginRequest marks c in a request: its handler starts, so the request's
// headers are complete.
func (l *Limiter) beginRequest(c *conn) {
	l.mu.Lock()
	c.active++
	l.settle(c, false)
	l.mu.Unlock()
}

// endRequest marks c's handler done. An HTTP/1.x connection whose answer
// closes it, with a body left unread (drains), becomes closing when
// net/http next reads from it (Read): to drain the body, once the answer is
// written.
func (l *Limiter) endRequest(c *conn, drains bool) {
	l.mu.Lock()
	c.active--
	if c.active == 0 && drains {
		c.finishing.Store(true)
	}
	l.settle(c, false)
	l.mu.Unlock()
}

// connState follows net/http's word on c: busy from StateActive to
// StateIdle.
func (l *Limiter) connState(c *conn, busy bool) {
	l.mu.Lock()
	c.busy = busy
	closed := l.settle(c, !busy)
	l.mu.Unlock()
	if closed {
		l.log.refused(AddressWaiting, c.peer) // counted before the client can see it
		c.Conn.Close()
	}
}

// markClosing makes c, whose answer said Connection: close and is
// written, closing: the first connection a newcomer takes the place of.
func (l *Limiter) markClosing(c *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.finishing.Swap(false) || c.state != inRequest || c.active > 0 {
		return
	}
	l.unlist(c)
	c.state, c.elem = closing, l.closing.PushBack(c)
	l.signalRoom()
}
