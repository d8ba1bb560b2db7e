package connlimit

import (
	"log/slog"
	"net/netip"
	"sync"
	"time"
)

// Reason says why a connection was refused or closed, or a request
// refused.
type Reason string

// The reasons, each a bounded label value of the refusals' metric.
const (
	// AddressConnections: a new connection of an address that holds
	// Config.PerAddress connections already.
	AddressConnections Reason = "address_connections"
	// AddressWaiting: a new connection, or one going back to waiting, of
	// an address that holds Config.WaitingPerAddress waiting connections.
	AddressWaiting Reason = "address_waiting"
	// Full: a new connection while Config.Max are open, none of them
	// waiting of an address holding at least two more than the
	// newcomer's.
	Full Reason = "full"
	// Evicted: a waiting connection closed to make room for a new one of
	// an address holding fewer.
	Evicted Reason = "evicted"
	// PublicBusy: a public request answered 503 because Config.MaxPublic
	// were being served.
	PublicBusy Reason = "public_busy"
)

// Reasons lists every Reason.
func Reasons() []Reason {
	return []Reason{AddressConnections, AddressWaiting, Full, Evicted, PublicBusy}
}

// Refusal is what Config.OnRefuse is told.
type Refusal struct {
	Reason Reason
	// Addr is the peer address of the connection refused or closed.
	Addr netip.Addr
}

// logEvery is the pace of the log's lines about one Reason after the
// first: an attack refused ten thousand times a second logs once a minute.
const logEvery = time.Minute

// refusalLog counts refusals, tells Config.OnRefuse, and logs them without
// flooding the log.
type refusalLog struct {
	cfg Config

	mu      sync.Mutex
	total   map[Reason]int64
	last    map[Reason]time.Time // when a line about the reason was logged
	skipped map[Reason]int64     // refusals not logged since
}

func newRefusalLog(cfg Config) *refusalLog {
	return &refusalLog{cfg: cfg, total: map[Reason]int64{}, last: map[Reason]time.Time{}, skipped: map[Reason]int64{}}
}

// messages says what each refusal means, and what an operator might do.
var messages = map[Reason]string{
	AddressConnections: "connlimit: refused a connection: its address holds as many connections as one address may (perAddress)",
	AddressWaiting:     "connlimit: closed a connection: its address holds as many connections waiting for a request as one address may (waitingPerAddress)",
	Full:               "connlimit: refused a connection: the connection limit is reached, and no address holds waiting connections enough to give one up",
	Evicted:            "connlimit: closed a waiting connection of the address holding the most, to make room for a client holding fewer",
	PublicBusy:         "connlimit: answered a public request 503: the public endpoints' share of the connections is in use",
}

func (g *refusalLog) refused(reason Reason, addr netip.Addr) {
	if g.cfg.OnRefuse != nil {
		g.cfg.OnRefuse(Refusal{Reason: reason, Addr: addr})
	}
	now := g.cfg.Now()
	g.mu.Lock()
	g.total[reason]++
	last, logged := g.last[reason]
	if logged && now.Sub(last) < logEvery {
		g.skipped[reason]++
		g.mu.Unlock()
		return
	}
	skipped := g.skipped[reason]
	g.last[reason], g.skipped[reason] = now, 0
	g.mu.Unlock()
	// not_logged: the refusals of this reason since the last line,
	// which the pace kept out of the log.
	g.cfg.Logger.Warn(messages[reason]+" (logged at most once a minute)", slog.String("reason", string(reason)),
		slog.String("addr", addr.String()), slog.Int64("not_logged", skipped))
}

func (g *refusalLog) counts() map[Reason]int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[Reason]int64, len(g.total))
	for k, v := range g.total {
		out[k] = v
	}
	return out
}
