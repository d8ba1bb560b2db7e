package pageviews

// pendingCounts holds the counters of failed flushes, bounded: at most max
// counters, plus one per project (its catch-all, below). Views of counters
// past the bound are folded into overflow counters, so every view stays
// counted exactly once, under its project and class; what folding gives up
// is the path and, once no overflow counter fits in the bound, the hour.
type pendingCounts struct {
	m map[key]*counts
	// catchAll holds, per project, the counter made past the bound when a
	// view had nowhere else to go; it stays in m until flushed.
	catchAll map[string]key
	max      int    // Config.MaxPendingKeys
	reserve  int    // of max, kept for overflow counters: max/16
	overflow string // Config.OverflowPath
}

func newPendingCounts(max int, overflowPath string) *pendingCounts {
	return &pendingCounts{m: map[key]*counts{}, catchAll: map[string]key{}, max: max, reserve: max / 16, overflow: overflowPath}
}

// len returns the number of counters held: at most max + len(catchAll).
func (p *pendingCounts) len() int { return len(p.m) }

// merge adds c, the counts of k, to what is pending and returns the views
// it folded: counted under another key than k. It keeps c for a new key,
// so the caller must not use c afterwards. Below the bound, k keeps its
// counts as they are. Past it, the counts go to the first of these that
// exists or may be made:
//
//  1. k's counter, if pending;
//  2. a new counter for k, if k is not an overflow counter and fewer than
//     max-reserve counters are held;
//  3. the overflow counter of k's project and hour, if pending, or new if
//     fewer than max counters are held (the reserve: folded views keep
//     their hour while there is room);
//  4. the project's catch-all, made for the first view of the project
//     that reaches this step, as the overflow counter of that view's hour
//     (a counter beyond max: one per project).
//
// The number of counters held, catch-alls aside, never passes max, and no
// view is lost or counted twice: each of c's views is added to exactly one
// counter.
func (p *pendingCounts) merge(k key, c *counts) (folded int64) {
	if have := p.m[k]; have != nil {
		have.add(c)
		return 0
	}
	held := len(p.m) - len(p.catchAll)
	if k.path != p.overflow && held < p.max-p.reserve {
		p.m[k] = c
		return 0
	}
	to := key{project: k.project, path: p.overflow, hour: k.hour}
	if to != k {
		folded = c.total()
	}
	if have := p.m[to]; have != nil { // never k's: k is not pending
		have.add(c)
		return folded
	}
	if held < p.max {
		p.m[to] = c
		return folded
	}
	if ca, ok := p.catchAll[k.project]; ok {
		p.m[ca].add(c) // not k's: k is not pending
		return c.total()
	}
	p.catchAll[k.project] = to
	p.m[to] = c
	return folded
}

// remove forgets k's counter, once written.
func (p *pendingCounts) remove(k key) {
	delete(p.m, k)
	if ca, ok := p.catchAll[k.project]; ok && ca == k {
		delete(p.catchAll, k.project)
	}
}

func (c *counts) add(d *counts) {
	c.human += d.human
	c.ai += d.ai
	c.bot += d.bot
	for _, a := range d.agents {
		c.addAgent(a.name, a.class, a.n)
	}
}

func (c *counts) total() int64 { return c.human + c.ai + c.bot }
