package pageviews

import (
	"github.com/docsapi/docsapi-go/server/internal/hll"
)

// pendingVisitorCost is what a pending entry costs besides its sketches'
// bytes: the entry, its map slot with the slack of a map's growth, and the
// rounding of the bytes' allocation, with a margin above their sum.
const pendingVisitorCost = 256

// encodedVisitors are one key's sketches as AddVisitors takes them; nil
// for a class without visitors. Pending sketches are kept encoded: that is
// the smallest form, the one a retry sends, and its size is exact.
type encodedVisitors struct {
	human, ai []byte
	charged   int64 // bytes charged against MaxVisitorBytes
	// acc holds the sketches decoded while a flush merges into them, so
	// that the thousands of sketches a flush may fold into one overflow
	// key are merged into it at the cost of their own size, not of a
	// decoding and an encoding of the target each; seal encodes it again.
	acc *[2]hll.Sketch
}

func sizeOf(human, ai []byte) int64 {
	return pendingVisitorCost + int64(len(human)+len(ai))
}

// pendingVisitors holds the sketches of failed flushes (the view or the
// visitor write failed), bounded like pendingCounts: at most max entries,
// plus one per project (its catch-all), and within the recorder's
// MaxVisitorBytes. Past a bound, a key's visitors are merged into the
// overflow key of its project and hour, and past that into the project's
// catch-all, the overflow key of the first hour folded there: a visitor
// may lose its path, then its hour, but is never dropped.
type pendingVisitors struct {
	m        map[key]*encodedVisitors
	catchAll map[string]key
	max      int // Config.MaxPendingKeys
	reserve  int // of max, kept for overflow keys: max/16
	overflow string
	// charge reserves bytes of MaxVisitorBytes if they fit; force takes
	// them whatever the bound (a catch-all, which must take what comes),
	// and gives back with a negative n.
	charge func(n int64) bool
	force  func(n int64)
	opened []*encodedVisitors // entries with acc, until seal
}

func newPendingVisitors(max int, overflowPath string, charge func(int64) bool, force func(int64)) *pendingVisitors {
	return &pendingVisitors{m: map[key]*encodedVisitors{}, catchAll: map[string]key{}, max: max, reserve: max / 16,
		overflow: overflowPath, charge: charge, force: force}
}

func (p *pendingVisitors) held() int { return len(p.m) - len(p.catchAll) }

// merge adds the visitors of k (encoded: human, ai) to what is pending and
// reports whether they were folded: kept under another key than k. The
// steps are those of pendingCounts.merge, each also within
// MaxVisitorBytes. Call seal once done merging.
func (p *pendingVisitors) merge(k key, human, ai []byte) (folded bool, err error) {
	size := sizeOf(human, ai)
	if have := p.m[k]; have != nil {
		if ok, err := p.mergeInto(have, human, ai, false); ok || err != nil {
			return false, err
		}
	} else if k.path != p.overflow && p.held() < p.max-p.reserve && p.charge(size) {
		p.m[k] = &encodedVisitors{human: human, ai: ai, charged: size}
		return false, nil
	}
	to := key{project: k.project, path: p.overflow, hour: k.hour}
	folded = to != k
	if have := p.m[to]; have != nil {
		if ok, err := p.mergeInto(have, human, ai, false); ok || err != nil {
			return folded, err
		}
	} else if p.held() < p.max && p.charge(size) {
		p.m[to] = &encodedVisitors{human: human, ai: ai, charged: size}
		return folded, nil
	}
	ca, ok := p.catchAll[k.project]
	if !ok {
		ca = to
		p.catchAll[k.project] = ca
		if p.m[ca] == nil {
			p.force(size)
			p.m[ca] = &encodedVisitors{human: human, ai: ai, charged: size}
			return folded, nil
		}
	}
	_, err = p.mergeInto(p.m[ca], human, ai, true)
	return ca != k, err
}

// mergeInto merges the sketches into have if what they add fits
// MaxVisitorBytes (or whatever it is, with force) and reports whether it
// did. What they add is charged at their own size, more than they can
// grow the merged encoding by; seal charges the exact size.
func (p *pendingVisitors) mergeInto(have *encodedVisitors, human, ai []byte, force bool) (bool, error) {
	grow := int64(len(human) + len(ai))
	if force {
		p.force(grow)
	} else if !p.charge(grow) {
		return false, nil
	}
	if have.acc == nil {
		have.acc = new([2]hll.Sketch)
		p.opened = append(p.opened, have)
		for i, b := range [...][]byte{have.human, have.ai} {
			if err := mergeInto(&have.acc[i], b); err != nil {
				return false, err
			}
		}
	}
	have.charged += grow
	for i, b := range [...][]byte{human, ai} {
		if err := mergeInto(&have.acc[i], b); err != nil {
			return false, err
		}
	}
	return true, nil
}

// seal encodes the entries merged into since the last seal, charging
// their exact size.
func (p *pendingVisitors) seal() {
	for _, e := range p.opened {
		e.human, e.ai = encode(&e.acc[0]), encode(&e.acc[1])
		e.acc = nil
		size := sizeOf(e.human, e.ai)
		p.force(size - e.charged)
		e.charged = size
	}
	clear(p.opened)
	p.opened = p.opened[:0]
}

// remove forgets k's sketches, once written, and gives back their bytes.
func (p *pendingVisitors) remove(k key) {
	if e := p.m[k]; e != nil {
		p.force(-e.charged)
	}
	delete(p.m, k)
	if ca, ok := p.catchAll[k.project]; ok && ca == k {
		delete(p.catchAll, k.project)
	}
}

// mergeInto merges the encoded sketch b, if any, into s.
func mergeInto(s *hll.Sketch, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return s.MergeBinary(b)
}

// encode returns the encoding of s, or nil if it is empty.
func encode(s *hll.Sketch) []byte {
	if s.Estimate() == 0 {
		return nil
	}
	return s.AppendBinary(nil)
}
