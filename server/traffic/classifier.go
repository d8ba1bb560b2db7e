package traffic

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// MaxUserAgentScan is how many bytes of a user agent Classify examines.
// Real user agents, even in-app browsers that append a long bracketed
// suffix, typically stay under 512 bytes; the bound keeps the classifier's
// cost fixed (it runs on every page request) when a client sends a huge
// header.
// A token that the bound cuts in two is not matched, so that a prefix of
// a long token can never pass for a rule token.
const MaxUserAgentScan = 1024

// Classifier sorts requests into classes by an ordered rule table: the
// first rule that matches wins, in table order, and a request that no rule
// matches is Human. It is immutable once built, so one Classifier can be
// shared by every goroutine of a server.
type Classifier struct {
	version int
	rules   []Rule
	// names holds each rule's agent name (Rule.Name), "" for a rule of
	// class Human and, at index none, for no match: ClassifyAgent reads
	// it by the deciding index, so naming costs one load.
	names []string

	// none is len(rules): the "no rule matched" index, larger than any
	// real one so that "keep the smallest index" needs no special case.
	none int32
	// firstToken is the smallest index of any token rule; once the scan
	// has matched it nothing in the user agent can beat it.
	firstToken int32
	// features holds, for each feature, the index of the first rule that
	// names it (later ones can never win), or none.
	features [numFeatures]int32

	// Token lookup without hashing or allocation: lens[b] has bit n set
	// when some rule token starting with (folded) byte b is n bytes long
	// (n capped at 63), and lasts[b] has bit l&63 set when one ends with
	// folded byte l. Together they reject nearly every token of a browser
	// user agents with two loads; the survivors are compared against
	// entries[start[b]:start[b+1]], the rule tokens starting with b.
	lens    [256]uint64
	lasts   [256]uint64
	start   [257]int32
	entries []entry
}

// entry is one distinct rule token, lower-cased, with the index of the
// first rule that names it.
type entry struct {
	tok  string
	rule int32
}

// New builds a classifier from rules, in order. It refuses a rule with an
// unknown class or feature, with neither or both of a token and a feature,
// or with a token containing a byte outside the token alphabet; the error
// names the rule by index and token. A token or feature that an earlier
// rule already names is allowed (the earlier rule wins), which is what
// lets With override the default table. Version is 0: the table is not a
// published one.
func New(rules []Rule) (*Classifier, error) {
	if len(rules) >= math.MaxInt32 {
		return nil, fmt.Errorf("traffic: %d rules is too many", len(rules))
	}
	for i, r := range rules {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("traffic: rule %d (%s): %w", i, r.label(), err)
		}
	}
	c := &Classifier{rules: slices.Clone(rules), none: int32(len(rules))}
	c.names = make([]string, len(rules)+1)
	for i, r := range c.rules {
		if r.Class != Human {
			c.names[i] = r.Name()
		}
	}
	c.firstToken = c.none
	for f := range c.features {
		c.features[f] = c.none
	}

	seen := make(map[string]bool)
	for i, r := range c.rules {
		if r.Feature != NoFeature {
			if c.features[r.Feature] == c.none {
				c.features[r.Feature] = int32(i)
			}
			continue
		}
		lower := strings.ToLower(r.Token) // tokens are ASCII: validated above
		if seen[lower] {
			continue
		}
		seen[lower] = true
		c.entries = append(c.entries, entry{tok: lower, rule: int32(i)})
		c.lens[lower[0]] |= lenBit(len(lower))
		c.lasts[lower[0]] |= lastBit(lower[len(lower)-1])
		c.firstToken = min(c.firstToken, int32(i))
	}
	// Group the entries by first byte; within a group keep table order,
	// which does not matter for correctness (tokens are distinct) but
	// makes the structure easy to reason about.
	slices.SortStableFunc(c.entries, func(a, b entry) int { return int(a.tok[0]) - int(b.tok[0]) })
	n := int32(0)
	for b := 0; b < 256; b++ {
		c.start[b] = n
		for int(n) < len(c.entries) && int(c.entries[n].tok[0]) == b {
			n++
		}
	}
	c.start[256] = n
	return c, nil
}

// lenBit is the bit of Classifier.lens for a token of length n. Lengths
// from 63 up share a bit: a false positive there only costs a comparison.
func lenBit(n int) uint64 {
	return 1 << min(n, 63)
}

// lastBit is the bit of Classifier.lasts for a token whose folded last
// byte is b. Bytes 64 apart share a bit ('a' and '!'), which only costs a
// comparison.
func lastBit(b byte) uint64 {
	return 1 << (b & 63)
}

// defaultClassifier parses the embedded table once, on first use.
var defaultClassifier = sync.OnceValue(func() *Classifier {
	c, err := Parse(rulesJSON)
	if err != nil {
		// The embedded table is fixed at build time and its tests parse
		// it, so this is a programming error, not a runtime condition.
		panic(err)
	}
	return c
})

// Default returns the classifier for the embedded rule table (rules.json).
// It is built once and shared; it must not be modified, and nothing in
// its API modifies it.
func Default() *Classifier {
	return defaultClassifier()
}

// With returns a new classifier whose table is extra followed by c's
// rules, so the extra rules take precedence: a deployment can recognise
// its own monitoring agent, or reclassify a token, without copying the
// table. The result keeps c's Version, since the published table it is
// based on is still c's; c itself is unchanged.
func (c *Classifier) With(extra ...Rule) (*Classifier, error) {
	n, err := New(slices.Concat(extra, c.rules))
	if err != nil {
		return nil, err
	}
	n.version = c.version
	return n, nil
}

// Version returns the version of the rule table: the "version" of a
// parsed table (Default, Parse), the base's for With, 0 for New. Stored
// with counts, it tells which table classified them.
func (c *Classifier) Version() int {
	return c.version
}

// Rules returns a copy of the rule table, in precedence order.
func (c *Classifier) Rules() []Rule {
	return slices.Clone(c.rules)
}

// Classify returns the class of a request with the given User-Agent
// header, URL path and Accept header. The user agent is split into tokens
// (maximal runs of bytes for which IsTokenByte holds) and each token is
// compared case-insensitively with the rule tokens as a whole; the
// features are checked against path, accept and the emptiness of the user
// agent. Of all the rules that match, the first in table order decides;
// if none does, the request is Human. Classify does not allocate.
func (c *Classifier) Classify(userAgent, path, accept string) Class {
	return c.classify(userAgent, path, acceptHeader{one: accept})
}

// ClassifyRequest classifies r by its first User-Agent header, its URL
// path and all of its Accept headers (several Accept lines mean the same
// as one joined by commas).
func (c *Classifier) ClassifyRequest(r *http.Request) Class {
	var ua string
	if v := r.Header["User-Agent"]; len(v) > 0 {
		ua = v[0]
	}
	var path string
	if r.URL != nil {
		path = r.URL.Path
	}
	return c.classify(ua, path, acceptHeader{many: r.Header["Accept"]})
}

// ClassifyAgent is Classify that also names the agent: the Name of the
// rule that decided, which is "" for Human. Names come only from c's rule
// table, never from the user agent, so however many distinct user agents
// are sent, they fall into at most Agents() names. It does not allocate.
func (c *Classifier) ClassifyAgent(userAgent, path, accept string) (Class, string) {
	best := c.decide(userAgent, path, acceptHeader{one: accept}, c.scanAll)
	return c.classOf(best), c.names[best]
}

// Agents returns every name ClassifyAgent can give, with its class, in
// table order: the whole vocabulary of agent names of c, at most one per
// rule. Rules that an earlier rule shadows give no name.
func (c *Classifier) Agents() []Agent {
	var out []Agent
	seen := make(map[Agent]bool)
	for i, r := range c.rules {
		a := Agent{Name: c.names[i], Class: r.Class}
		live := c.features[r.Feature] == int32(i)
		if r.Feature == NoFeature {
			lower := strings.ToLower(r.Token)
			live = c.find(lower[0], lower) == int32(i)
		}
		if a.Name == "" || !live || seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, a)
	}
	return out
}

// Agent is an agent name and the class it is counted in.
type Agent struct {
	Name  string
	Class Class
}

// classify is Classify with the Accept header in either shape.
func (c *Classifier) classify(ua, path string, accept acceptHeader) Class {
	return c.classOf(c.decide(ua, path, accept, c.scanAll))
}

// classOf returns the class of the deciding rule index best.
func (c *Classifier) classOf(best int32) Class {
	if best == c.none {
		return Human
	}
	return c.rules[best].Class
}

// scanAll is scan of ua from no match.
func (c *Classifier) scanAll(ua string) int32 { return c.scan(ua, c.none) }

// decide returns the index of the rule that decides a request, or none,
// with the scan of the user agent from no match done by scan, which a Memo
// remembers.
func (c *Classifier) decide(ua, path string, accept acceptHeader, scan func(string) int32) int32 {
	best := c.none
	if isBlank(ua) {
		best = c.features[EmptyUserAgent]
	} else if c.firstToken < best {
		best = scan(ua)
	}
	// Each feature is only evaluated when its rule would beat the best
	// match so far, so a known crawler costs nothing more than its scan.
	if c.features[MarkdownPath] < best || c.features[LLMsTxt] < best {
		seg := lastSegment(path)
		if f := c.features[MarkdownPath]; f < best && isMarkdownFile(seg) {
			best = f
		}
		if f := c.features[LLMsTxt]; f < best && isLLMsTxt(seg) {
			best = f
		}
	}
	if f := c.features[AcceptMarkdown]; f < best && accept.prefersMarkdown() {
		best = f
	}
	return best
}

// scan tokenises ua in place and returns the smallest rule index among
// its tokens and best.
//
// It runs two tight loops, over a run of separators and over a token,
// rather than one loop with a branch per byte, which would be mispredicted
// at every token boundary, and a browser's user agent has dozens.
func (c *Classifier) scan(ua string, best int32) int32 {
	cut := false
	if len(ua) > MaxUserAgentScan {
		cut = IsTokenByte(ua[MaxUserAgentScan])
		ua = ua[:MaxUserAgentScan]
	}
	n := len(ua)
	i := 0
	for {
		for i < n && foldTable[ua[i]] == 0 {
			i++
		}
		if i == n {
			return best
		}
		start, first := i, foldTable[ua[i]]
		for i++; i < n && foldTable[ua[i]] != 0; i++ {
		}
		if i == n && cut {
			return best // the bound split this token: it is not whole
		}
		if c.lens[first]&lenBit(i-start) == 0 || c.lasts[first]&lastBit(foldTable[ua[i-1]]) == 0 {
			continue // no rule token has this first byte and length, or last byte
		}
		if r := c.find(first, ua[start:i]); r < best {
			best = r
			if best == c.firstToken {
				return best // no token can beat the first token rule
			}
		}
	}
}

// find returns the rule index of tok, whose folded first byte is first,
// or c.none.
func (c *Classifier) find(first byte, tok string) int32 {
	for _, e := range c.entries[c.start[first]:c.start[int(first)+1]] {
		if len(e.tok) == len(tok) && equalFoldLower(tok, e.tok) {
			return e.rule
		}
	}
	return c.none
}

// equalFoldLower reports whether s equals lower, which is already lower
// case, ignoring ASCII case. It exists because strings.EqualFold also
// folds Unicode, which is slower and not what a byte-level table needs.
func equalFoldLower(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != lower[i] {
			return false
		}
	}
	return true
}

// isBlank reports whether s has nothing but spaces and tabs.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\t' {
			return false
		}
	}
	return true
}

// lastSegment returns the part of a path after its last '/', with any
// query or fragment removed (Classify may be given a request target
// rather than a parsed path).
func lastSegment(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path = path[:i]
	}
	return path[strings.LastIndexByte(path, '/')+1:]
}

// isMarkdownFile reports whether a last path segment names a Markdown
// file: a name, then ".md".
func isMarkdownFile(seg string) bool {
	return len(seg) > len(".md") && equalFoldLower(seg[len(seg)-len(".md"):], ".md")
}

// isLLMsTxt reports whether a last path segment names an llms.txt index.
func isLLMsTxt(seg string) bool {
	return equalFoldLower(seg, "llms.txt") || equalFoldLower(seg, "llms-full.txt")
}
