package traffic

import (
	"hash/maphash"
	"sync/atomic"
)

// memoSlots is how many user agents a Memo remembers: more than the
// distinct browsers, agents and crawlers a site sees in an hour, and with
// user agents of at most MaxUserAgentScan bytes kept, at most a few MiB.
const memoSlots = 4096

// Memo classifies as its Classifier does, remembering the scan of each
// recent user agent. Scanning the user agent is most of a classification,
// and a site's requests come from a few thousand distinct user agents, so
// a page request, whose user agent is most often one seen before, skips
// it: the scan becomes a hash and a comparison.
//
// Its memory is bounded whatever the traffic: a slot per hash of the user
// agent, the newest scan replacing the older, so a flood of made-up user
// agents only evicts entries, each miss costing what a plain Classify does
// plus one small allocation. A user agent longer than MaxUserAgentScan is
// never kept. Safe for concurrent use; the zero Memo is not usable: make
// one with NewMemo.
type Memo struct {
	c     *Classifier
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[scanned]
}

// scanned is a user agent and the rule its scan found.
type scanned struct {
	ua   string
	rule int32
}

// NewMemo returns a Memo over c.
func NewMemo(c *Classifier) *Memo {
	return &Memo{c: c, seed: maphash.MakeSeed()}
}

// Classifier returns the Classifier m remembers the scans of.
func (m *Memo) Classifier() *Classifier { return m.c }

// Classify returns what m's Classifier's Classify returns.
func (m *Memo) Classify(userAgent, path, accept string) Class {
	return m.c.classOf(m.c.decide(userAgent, path, acceptHeader{one: accept}, m.scan))
}

// ClassifyAgent returns what m's Classifier's ClassifyAgent returns.
func (m *Memo) ClassifyAgent(userAgent, path, accept string) (Class, string) {
	best := m.c.decide(userAgent, path, acceptHeader{one: accept}, m.scan)
	return m.c.classOf(best), m.c.names[best]
}

// scan is Classifier.scan of ua from no match, remembered.
func (m *Memo) scan(ua string) int32 {
	if len(ua) > MaxUserAgentScan {
		return m.c.scan(ua, m.c.none)
	}
	slot := &m.slots[maphash.String(m.seed, ua)%memoSlots]
	if s := slot.Load(); s != nil && s.ua == ua {
		return s.rule
	}
	rule := m.c.scan(ua, m.c.none)
	slot.Store(&scanned{ua: ua, rule: rule})
	return rule
}
