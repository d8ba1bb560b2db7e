package connlimit

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
)

// Listener wraps inner so that what it accepts is counted and bounded by
// l. With TLS, wrap the TCP listener (http.Server.ServeTLS does the TLS on
// top), so that connections in their handshake are counted as waiting.
func (l *Limiter) Listener(inner net.Listener) net.Listener {
	return &listener{Listener: inner, l: l, closed: make(chan struct{})}
}

type listener struct {
	net.Listener
	l         *Limiter
	closed    chan struct{}
	closeOnce sync.Once
}

// Accept waits until a connection could be admitted (a free slot, or one
// that may be taken), then accepts connections until one is admitted;
// those refused are closed at once. One that arrives while every
// connection is in a request (which may have come about while Accept
// waited in the kernel) is held, unanswered, until there is room.
func (ln *listener) Accept() (net.Conn, error) {
	for {
		if err := ln.waitForRoom(); err != nil {
			return nil, err
		}
		nc, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		for {
			c, hold := ln.l.admit(nc)
			if c != nil {
				return c, nil
			}
			if !hold {
				break
			}
			if err := ln.waitForRoom(); err != nil {
				nc.Close()
				return nil, err
			}
		}
	}
}

// waitForRoom returns once fewer than Max connections are open, or one of
// them is waiting or closing (and so might make way for a newcomer); or
// when the listener is closed. While every connection is in a request, new
// ones stay in the kernel's backlog.
func (ln *listener) waitForRoom() error {
	l := ln.l
	for {
		l.mu.Lock()
		ok := l.open < l.cfg.Max || l.waiting > 0 || l.closing.Len() > 0
		room := l.room
		l.wanted = l.wanted || !ok
		first := !ok && !l.blockedLogged
		if first {
			l.blockedLogged = true
		}
		l.mu.Unlock()
		if ok {
			return nil
		}
		if first {
			l.cfg.Logger.Warn("connlimit: every connection is in a request; new connections wait in the backlog until one is done (raise the limit if this is legitimate traffic)",
				slog.Int("max_connections", l.cfg.Max))
		}
		select {
		case <-room:
		case <-ln.closed:
			return net.ErrClosed
		}
	}
}

// Close closes the listener and ends an Accept waiting for room.
func (ln *listener) Close() error {
	ln.closeOnce.Do(func() { close(ln.closed) })
	return ln.Listener.Close()
}

// admit counts nc in, making room for it if need be; or closes it and
// returns nil; or, when the cap is full and every connection is in a
// request, leaves it and reports hold: nothing can be decided until one is
// done.
func (l *Limiter) admit(nc net.Conn) (_ *conn, hold bool) {
	peer := peerAddr(nc.RemoteAddr())
	// A peer without an IP address (a Unix socket's) is a local program,
	// in practice a proxy: its clients cannot be told apart either.
	exempt := !peer.IsValid() || l.proxies.Trusts(peer)
	key := addressKey(peer)

	l.mu.Lock()
	g := l.addrs[key]
	var open, waiting int
	if g != nil {
		open, waiting = g.open, g.waiting.Len()
	}
	var refuse Reason
	var victim *conn
	switch {
	case !exempt && open >= l.cfg.PerAddress:
		refuse = AddressConnections
	case !exempt && waiting >= l.cfg.WaitingPerAddress:
		refuse = AddressWaiting
	case l.open >= l.cfg.Max && l.waiting == 0 && l.closing.Len() == 0:
		l.mu.Unlock()
		return nil, true
	case l.open >= l.cfg.Max:
		if victim = l.victim(open, exempt); victim != nil {
			l.forget(victim)
		} else {
			refuse = Full
		}
	}
	var c *conn
	logFull := false
	if refuse == "" {
		// Looked up again: the connection whose place the newcomer took
		// may have been its group's last (a proxy's), and the group gone.
		if g = l.addrs[key]; g == nil {
			g = &group{key: key}
			l.addrs[key] = g
		}
		c = &conn{Conn: nc, l: l, peer: peer, group: g, exempt: exempt}
		g.open++
		l.open++
		l.listWaiting(c)
		if l.open == l.cfg.Max && !l.fullLogged {
			l.fullLogged, logFull = true, true
		}
	}
	l.mu.Unlock()

	if logFull {
		l.cfg.Logger.Warn("connlimit: connection limit reached; now a new connection takes the place of a waiting one of the address holding the most, or is refused (raise the limit if this is legitimate traffic)",
			slog.Int("max_connections", l.cfg.Max))
	}
	// Counted before the clients can see it.
	if victim != nil {
		l.log.refused(Evicted, victim.peer)
		victim.Conn.Close()
	}
	if refuse != "" {
		l.log.refused(refuse, peer)
		nc.Close()
		return nil, false
	}
	return c, false
}

// victim picks the connection a newcomer, whose address holds open
// connections, may take the place of: one that is closing anyway, of any
// address; else the longest waiting of the address holding the most, if
// that address holds at least two more (so that the newcomer's never
// ends up holding more than the victim's), or any for a trusted proxy.
// l.mu is held.
func (l *Limiter) victim(open int, exempt bool) *conn {
	if e := l.closing.Front(); e != nil {
		return e.Value.(*conn)
	}
	var most *group
	for _, g := range l.addrs {
		if g.waiting.Len() > 0 && (most == nil || g.open > most.open) {
			most = g
		}
	}
	if most == nil || (!exempt && most.open < open+2) {
		return nil
	}
	return most.waiting.Front().Value.(*conn)
}

// peerAddr is the IP address of a connection's peer; the zero Addr for
// one that has none.
func peerAddr(a net.Addr) netip.Addr {
	if tcp, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(tcp.IP)
		return ip.Unmap().WithZone("")
	}
	if a == nil {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap().WithZone("")
}
