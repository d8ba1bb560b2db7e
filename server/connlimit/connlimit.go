// Package connlimit bounds the connections an HTTP server holds, so that
// no client, and no one address, can hold them all.
//
// A connection costs a slot from its accept until it closes. What matters
// is what it does with the slot: a connection waiting for a request (in its
// TLS handshake, sending its headers, or idle between requests) costs the
// server nothing but the slot, so it is the cheap way to hold one; a
// connection in a request is being served. The Limiter tells them apart: a
// connection is in a request while a handler runs for it (the request's
// headers are complete), and while net/http says it serves one, from
// StateActive to StateIdle. For HTTP/1.x net/http calls the StateActive
// hook once a request's headers are read (its documentation's "read 1 or
// more bytes" is not when the hook runs), and StateIdle once the answer is
// written; for HTTP/2, when a stream opens on an idle connection and when
// the last one closes. Each alone has a gap (a handler ends before its
// answer is written; an HTTP/2 stream reset before its handler starts
// makes StateIdle come first), so both count.
//
// The bounds, each counted at the accept and at every change of state:
//
//   - Config.Max connections at once.
//   - Config.PerAddress connections of one address (an IPv4 address, an
//     IPv6 /64, which one subscriber usually holds whole), and
//     Config.WaitingPerAddress of them waiting. A connection past either is
//     closed at once, without a byte; a connection going back to waiting
//     past the second is closed (the client opens another when it needs
//     one).
//   - When all Max are open, a new connection takes the place of a
//     waiting one of the address that holds the most connections, if that
//     address holds at least two more than the newcomer's, and is closed
//     otherwise. A connection closing after its answer (which said
//     Connection: close and is written, while net/http reads what is left
//     of the request) is taken first, from any address. So a client that
//     opened few connections gets one even while others hold the rest
//     waiting. Only while every connection is in a request does a new one
//     wait, unanswered, in the kernel's backlog (or held by Accept).
//   - Config.MaxPublic requests that Config.Public says are public (the
//     endpoints anyone may call) in flight at once: past it, 503 and the
//     connection closes. Their bodies must arrive within
//     Config.PublicBodyTimeout. So public requests can never fill the
//     connections that authenticated clients need.
//
// Trusted proxies (Config.TrustedProxies), and peers without an IP address
// (a Unix socket's), are exempt from the per-address bounds: every client
// behind one shares its address, and limiting each client is the proxy's
// job.
//
// What the Limiter cannot do is tell many addresses from many clients: a
// flood from more addresses than Max/PerAddress can still fill the
// connections with requests. That belongs in front of the server, in a
// proxy or firewall that sees them all.
package connlimit

import (
	"container/list"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/clientip"
)

// Defaults of Config.
const (
	// DefaultPerAddress leaves room for an office behind one address, or
	// a few programs on one machine each keeping a pool of connections
	// (the SDK keeps up to 32), and is far below the cap.
	DefaultPerAddress = 128
	// DefaultWaitingPerAddress leaves room for a client that opens
	// connections for 32 requests at once (the SDK's prefetch) twice over.
	DefaultWaitingPerAddress = 64
	// DefaultPublicBodyTimeout is long enough for a body of a few KiB
	// over a slow mobile link, and short enough that trickling one holds
	// a slot for seconds, not minutes.
	DefaultPublicBodyTimeout = 5 * time.Second
)

// refusedGrace is how long the body of a refused public request may keep
// arriving after the 503 is sent: a client that sent it at once has sent
// it by then, and its connection closes cleanly (see server/unread.go).
const refusedGrace = time.Second

// Config configures a Limiter. Max is required; every other zero field
// takes its default.
type Config struct {
	// Max bounds the connections open at once.
	Max int
	// PerAddress bounds the connections of one address (an IPv6
	// address's /64) open at once. DefaultPerAddress by default.
	PerAddress int
	// WaitingPerAddress bounds the connections of one address waiting
	// for a request (in the TLS handshake, sending headers, idle).
	// DefaultWaitingPerAddress by default.
	WaitingPerAddress int
	// TrustedProxies are the networks of reverse proxies in front of the
	// server: their connections are exempt from the per-address bounds, as
	// are those of peers without an IP address (a Unix socket's).
	TrustedProxies []netip.Prefix

	// Public reports whether a request is to an endpoint anyone may call
	// without credentials. Nil: none is.
	Public func(*http.Request) bool
	// MaxPublic bounds the public requests served at once; past it, they
	// are answered 503 and their connections close. A quarter of Max by
	// (at least 1) default; it must be below Max, so that public requests
	// never hold every connection.
	MaxPublic int
	// PublicBodyTimeout bounds the time a public request's body may take
	// to arrive, from the end of its headers. DefaultPublicBodyTimeout by
	// default.
	PublicBodyTimeout time.Duration

	// OnRefuse, if set, is told of every refusal (server/metrics counts
	// them with it). It runs on the accepting or serving goroutine, so it
	// must return quickly.
	OnRefuse func(Refusal)
	// Logger receives a line the first time each kind of refusal happens,
	// then at most one a minute per kind. The default discards them.
	Logger *slog.Logger
	// Now tells the time for the log's pace. Default time.Now.
	Now func() time.Time
}

// WithDefaults checks c and returns it with its zero fields set to their
// defaults, so that a program can show the values in effect.
func (c Config) WithDefaults() (Config, error) {
	if c.Max < 1 {
		return c, fmt.Errorf("connlimit: Config.Max must be at least 1, got %d", c.Max)
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"PerAddress", &c.PerAddress, DefaultPerAddress},
		{"WaitingPerAddress", &c.WaitingPerAddress, DefaultWaitingPerAddress},
		{"MaxPublic", &c.MaxPublic, max(c.Max/4, 1)},
	} {
		switch {
		case *f.v < 0:
			return c, fmt.Errorf("connlimit: Config.%s must not be negative, got %d", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	if c.MaxPublic >= c.Max && c.Max > 1 {
		return c, fmt.Errorf("connlimit: Config.MaxPublic (%d) must be below Config.Max (%d), so that public requests cannot hold every connection", c.MaxPublic, c.Max)
	}
	switch {
	case c.PublicBodyTimeout < 0:
		return c, fmt.Errorf("connlimit: Config.PublicBodyTimeout must not be negative, got %s", c.PublicBodyTimeout)
	case c.PublicBodyTimeout == 0:
		c.PublicBodyTimeout = DefaultPublicBodyTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Limiter holds the accounting of one server's connections: wrap its
// listener with Listener and its http.Server with Install. It is safe for
// concurrent use.
type Limiter struct {
	cfg     Config
	proxies clientip.Proxies
	log     *refusalLog

	mu      sync.Mutex
	open    int                     // connections accepted and not yet closed
	waiting int                     // connections in their address's waiting list
	closing list.List               // of *conn: done, answered with Connection: close
	addrs   map[netip.Prefix]*group // addresses holding at least one connection
	room    chan struct{}           // closed, and replaced, when a slot may be free
	wanted  bool                    // an Accept waits for room
	public  int                     // public requests being served

	fullLogged, blockedLogged bool // the cap was reached; Accept waited for room
}

// group is one address's (or one /64's) connections.
type group struct {
	key     netip.Prefix
	open    int
	waiting list.List // of *conn, longest waiting first
}

// New checks cfg and returns a Limiter.
func New(cfg Config) (*Limiter, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Limiter{
		cfg:     cfg,
		proxies: clientip.NewProxies(cfg.TrustedProxies),
		log:     newRefusalLog(cfg),
		addrs:   map[netip.Prefix]*group{},
		room:    make(chan struct{}),
	}, nil
}

// Stats is a Limiter's state at one moment.
type Stats struct {
	// Open counts the connections open; Waiting those waiting for a
	// request, and Closing those done and about to close.
	Open, Waiting, Closing int
	// Addresses counts the addresses (IPv6: /64s) holding connections:
	// at most Open, so a flood of addresses costs nothing once it ends.
	Addresses int
	// Public counts the public requests being served.
	Public int
	// Refused counts the refusals so far, by reason.
	Refused map[Reason]int64
}

// Stats returns the Limiter's state now.
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	s := Stats{Open: l.open, Waiting: l.waiting, Closing: l.closing.Len(), Addresses: len(l.addrs), Public: l.public}
	l.mu.Unlock()
	s.Refused = l.log.counts()
	return s
}

// signalRoom wakes the Accept calls waiting for a slot, if any. l.mu is
// held.
func (l *Limiter) signalRoom() {
	if !l.wanted {
		return
	}
	l.wanted = false
	close(l.room)
	l.room = make(chan struct{})
}

// addressKey is the unit the per-address bounds count: an IPv4 address, or
// an IPv6 address's /64. An address that is not IP (a Unix socket's peer,
// exempt from the bounds) is the zero Prefix.
func addressKey(a netip.Addr) netip.Prefix {
	switch {
	case !a.IsValid():
		return netip.Prefix{}
	case a.Is4():
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}
