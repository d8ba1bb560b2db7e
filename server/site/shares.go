package site

import (
	"net/netip"
	"sync"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
)

// shares keeps what each client address, and each network, added to a
// project's UTC day through the public site endpoints, so that none takes
// more than its share of the day's cap (Limits.MaxFeedbackPerAddress and
// the like): without shares, whoever fills the cap first closes the site
// for every reader until the next day.
//
// An address is counted as ratelimit.PerAddress counts it (IPv6 per /64),
// and its network is its IPv4 /24 or IPv6 /48. Counts are of this process
// only (each replica keeps its own) and last until the day's change by
// Config.Now, when they all start again from zero.
//
// Memory is bounded without forgetting: an entry is never dropped during
// its day, since forgetting an address would hand it a fresh share, so a
// flood of addresses could reset its own counts. Instead, each table
// (addresses, networks) holds at most capacity entries, and what it cannot
// hold shares one entry: the addresses of a network beyond the table share
// one address's allowance within their network's entry, and the networks
// beyond it share one network's allowance per project and kind. Only a
// charge that stands makes an entry (refusals make none, and a charge
// given back to zero drops its entry), so the entries of a project's day
// are also bounded by what its caps let it store.
type shares struct {
	limits   [shareKinds]shareLimits
	capacity int // of each table

	mu       sync.Mutex
	day      time.Time // the UTC day counted, its midnight
	addrs    map[shareKey]int64
	nets     map[shareKey]*netShare
	overflow map[projectKind]*netShare // the networks the table cannot hold
	today    map[projectKind]*shareDay
}

// shareKind is what a share is of: feedback entries, or searches that
// add a query or opened result new to the day.
type shareKind uint8

const (
	shareFeedback shareKind = iota
	shareSearches
	shareKinds
)

// String is the kind's label, as Config.OnLimit is told it.
func (k shareKind) String() string {
	if k == shareFeedback {
		return KindFeedback
	}
	return KindSearches
}

// shareLimits are the shares of one kind.
type shareLimits struct{ perAddress, perNetwork int64 }

type projectKind struct {
	project string
	kind    shareKind
}

type shareKey struct {
	projectKind
	prefix netip.Prefix
}

// netShare is what a network took today: used by all its addresses, and
// pooled by those of them the address table cannot hold, which share one
// address's allowance.
type netShare struct {
	used, pooled int64
}

// shareDay is what a project's kind met today: for the dashboard, and so
// that each is logged once.
type shareDay struct {
	capReached   bool
	shareRefused int64
	shareLogged  bool
}

// shareRefusal says which share refused a charge.
type shareRefusal uint8

const (
	shareTaken         shareRefusal = iota // none: the charge stands
	shareAddress                           // the address's
	shareNetwork                           // its network's
	sharePooledAddress                     // the one the addresses the table cannot hold share
	sharePooledNetwork                     // the one the networks the table cannot hold share
)

// shareHold is a charge that stands, to give back (release) if what it
// was for was not stored.
type shareHold struct {
	day                   time.Time
	key                   projectKind
	addr, net             netip.Prefix
	addrPooled, netPooled bool
}

func newShares(c Limits) *shares {
	s := &shares{capacity: max(c.MaxAddresses, 1)}
	s.limits[shareFeedback] = shareLimits{int64(c.MaxFeedbackPerAddress), int64(c.MaxFeedbackPerNetwork)}
	s.limits[shareSearches] = shareLimits{int64(c.MaxQueriesPerAddress), int64(c.MaxQueriesPerNetwork)}
	s.reset(time.Time{})
	return s
}

// netKey is the network an address belongs to for its share: its /24 for
// IPv4, its /48 for IPv6 (a site's usual allocation). A request without
// an address (some tests) has the zero key.
func netKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	bits := 48
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p
}

// reset forgets every count, for the day starting at day.
func (s *shares) reset(day time.Time) {
	s.day = day
	s.addrs = make(map[shareKey]int64)
	s.nets = make(map[shareKey]*netShare)
	s.overflow = make(map[projectKind]*netShare)
	s.today = make(map[projectKind]*shareDay)
}

// roll starts a new day's counts once now is past the day counted. A
// request that read the clock before the change and arrives after it is
// counted in the new day: the store's cap still holds for the old one.
func (s *shares) roll(now time.Time) {
	if d := now.UTC().Truncate(24 * time.Hour); d.After(s.day) {
		s.reset(d)
	}
}

// take charges one unit of kind to addr's share and its network's in
// project's day at now, or reports the share that refuses it (and charges
// nothing).
func (s *shares) take(project string, kind shareKind, addr netip.Addr, now time.Time) (shareHold, shareRefusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roll(now)
	lim := s.limits[kind]
	h := shareHold{day: s.day, key: projectKind{project, kind}, addr: ratelimit.AddrKey(addr), net: netKey(addr)}
	nk, ak := shareKey{h.key, h.net}, shareKey{h.key, h.addr}
	net, tracked := s.nets[nk]
	if !tracked {
		if len(s.nets) < s.capacity {
			net = &netShare{}
		} else {
			net, h.netPooled = s.overflowOf(h.key), true
		}
	}
	used, known := s.addrs[ak]
	h.addrPooled = !known && len(s.addrs) >= s.capacity
	switch {
	case h.addrPooled && net.pooled >= lim.perAddress:
		return h, sharePooledAddress
	case !h.addrPooled && used >= lim.perAddress:
		return h, shareAddress
	case net.used >= lim.perNetwork && h.netPooled:
		return h, sharePooledNetwork
	case net.used >= lim.perNetwork:
		return h, shareNetwork
	}
	if !tracked && !h.netPooled {
		s.nets[nk] = net
	}
	net.used++
	if h.addrPooled {
		net.pooled++
	} else {
		s.addrs[ak] = used + 1
	}
	return h, shareTaken
}

// overflowOf returns the entry the networks the table cannot hold share
// in key's day.
func (s *shares) overflowOf(key projectKind) *netShare {
	o := s.overflow[key]
	if o == nil {
		o = &netShare{}
		s.overflow[key] = o
	}
	return o
}

// release gives back the unit h charged, whose submission stored nothing:
// an entry back at zero is dropped, so that charges given back take no
// room. A hold of a day already over is gone with its day.
func (s *shares) release(h shareHold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !h.day.Equal(s.day) {
		return
	}
	nk, ak := shareKey{h.key, h.net}, shareKey{h.key, h.addr}
	net := s.overflow[h.key]
	if !h.netPooled {
		net = s.nets[nk]
	}
	if net == nil {
		return // cannot happen: entries live as long as their day
	}
	net.used--
	if h.addrPooled {
		net.pooled--
	} else if s.addrs[ak]--; s.addrs[ak] <= 0 {
		delete(s.addrs, ak)
	}
	if !h.netPooled && net.used <= 0 {
		delete(s.nets, nk)
	}
}

// noteCap records that project's day met the cap of kind, and reports
// whether it is the first time this day (to log it once).
func (s *shares) noteCap(project string, kind shareKind, now time.Time) (first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dayOf(project, kind, now)
	first = !d.capReached
	d.capReached = true
	return first
}

// noteShare counts a submission a share refused (feedback) or folded
// (searches), and reports whether it is the first this day.
func (s *shares) noteShare(project string, kind shareKind, now time.Time) (first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dayOf(project, kind, now)
	d.shareRefused++
	first = !d.shareLogged
	d.shareLogged = true
	return first
}

func (s *shares) dayOf(project string, kind shareKind, now time.Time) *shareDay {
	s.roll(now)
	k := projectKind{project, kind}
	d := s.today[k]
	if d == nil {
		d = &shareDay{}
		s.today[k] = d
	}
	return d
}

// todayOf returns what project's feedback and searches met on the day of
// now, in that order.
func (s *shares) todayOf(project string, now time.Time) [shareKinds]Met {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roll(now)
	var out [shareKinds]Met
	for k := range shareKinds {
		if d := s.today[projectKind{project, k}]; d != nil {
			out[k] = Met{CapReached: d.capReached, ShareRefused: d.shareRefused}
		}
	}
	return out
}

// size returns the addresses and networks whose shares are remembered.
func (s *shares) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.addrs) + len(s.nets)
}
