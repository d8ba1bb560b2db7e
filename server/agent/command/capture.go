package command

import (
	"fmt"
	"sync"
)

// capture keeps a bounded part of a program's output: the first half of
// the bound and the most recent half. The start shows how the program was
// set up and the end how it finished, which is what an operator reads.
type capture struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte // a ring of at most tailMax bytes once full
	next  int    // where the ring writes next, once full
	max   int
	total int64
}

func newCapture(max int) *capture {
	return &capture{max: max}
}

func (c *capture) headMax() int { return c.max / 2 }
func (c *capture) tailMax() int { return c.max - c.max/2 }

// Write keeps what fits and counts the rest; it never fails, so a program
// that prints a lot is never blocked or broken by it.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := c.headMax() - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailMax := c.tailMax()
	if tailMax == 0 {
		return n, nil
	}
	if len(p) >= tailMax {
		// Only the newest tailMax bytes can survive.
		c.tail = append(c.tail[:0], p[len(p)-tailMax:]...)
		c.next = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(c.tail) < tailMax {
			k := min(tailMax-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(c.tail[c.next:], p)
		c.next = (c.next + k) % tailMax
		p = p[k:]
	}
	return n, nil
}

// dropped returns how many bytes were counted but not kept.
func (c *capture) dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total - int64(len(c.head)+len(c.tail))
}

// String returns the kept output in order, with a marker where bytes were
// dropped.
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]byte(nil), c.head...)
	if dropped := c.total - int64(len(c.head)+len(c.tail)); dropped > 0 {
		out = fmt.Appendf(out, "\n[… %d bytes of output dropped …]\n", dropped)
	}
	out = append(out, c.tail[c.next:]...)
	out = append(out, c.tail[:c.next]...)
	return string(out)
}
