package docsapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// count decodes a view count from any JSON number: 12, 12.0 and 1.2e1 are
// all twelve. Fractions, negatives and values past int64 are errors, since
// they cannot be counts. set records whether the field was present.
type count struct {
	n   int64
	set bool
}

func (c *count) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || f >= math.MaxInt64 || f <= math.MinInt64 {
			return fmt.Errorf("docsapi: view count %s is not a whole number", b)
		}
		n = int64(f)
	}
	if n < 0 {
		return fmt.Errorf("docsapi: view count %s is negative", b)
	}
	*c = count{n: n, set: true}
	return nil
}

// counts is the wire form shared by totals and rows.
type counts struct {
	Human count `json:"human"`
	AI    count `json:"ai"`
	Total count `json:"total"`
}

func (c counts) values() (human, ai, total int64) {
	total = c.Total.n
	if !c.Total.set {
		total = c.Human.n + c.AI.n // the contract defines total as human + ai
	}
	return c.Human.n, c.AI.n, total
}

// pageViewWire is PageView on the wire. Decoding a page goes through these
// types in one pass over the body, rather than through an UnmarshalJSON per
// row, which would scan each row twice.
type pageViewWire struct {
	Path string `json:"path"`
	counts
}

type viewsPageWire struct {
	Totals  *counts        `json:"totals"`
	Views   []pageViewWire `json:"views"`
	HasMore *bool          `json:"hasMore"`
}

// UnmarshalJSON decodes a page, accepting counts in any JSON number form.
// The three fields are required: a 200 answer without them (a proxy's "{}",
// another endpoint's body) is an error rather than an empty page, which
// would end an export early and silently.
func (p *ViewsPage) UnmarshalJSON(b []byte) error { return p.decodeBody(b) }

// decodeBody is UnmarshalJSON without the validation pass json.Unmarshal
// makes before calling it; the pipeline calls it directly.
func (p *ViewsPage) decodeBody(b []byte) error {
	var w viewsPageWire
	if err := decodeWire("views page", b, &w); err != nil {
		return err
	}
	switch {
	case w.Totals == nil:
		return missingField("views page", "totals")
	case w.Views == nil:
		return missingField("views page", "views")
	case w.HasMore == nil:
		return missingField("views page", "hasMore")
	}
	page := ViewsPage{HasMore: *w.HasMore, Views: make([]PageView, len(w.Views))}
	page.Totals.Human, page.Totals.AI, page.Totals.Total = w.Totals.values()
	for i, v := range w.Views {
		row := &page.Views[i]
		row.Path = v.Path
		row.Human, row.AI, row.Total = v.values()
	}
	*p = page
	return nil
}

// MarshalJSON encodes the page in the API's shape, with an empty array, never
// null, for a page without rows.
func (p ViewsPage) MarshalJSON() ([]byte, error) {
	type plain ViewsPage // the same fields without these methods
	if p.Views == nil {
		p.Views = []PageView{}
	}
	return json.Marshal(plain(p))
}

// UnmarshalJSON decodes counts in any JSON number form.
func (c *ViewCounts) UnmarshalJSON(b []byte) error {
	var w counts
	if err := decodeWire("view counts", b, &w); err != nil {
		return err
	}
	c.Human, c.AI, c.Total = w.values()
	return nil
}

// UnmarshalJSON decodes a row, accepting counts in any JSON number form.
func (v *PageView) UnmarshalJSON(b []byte) error {
	var w pageViewWire
	if err := decodeWire("page view", b, &w); err != nil {
		return err
	}
	v.Path = w.Path
	v.Human, v.AI, v.Total = w.values()
	return nil
}
