package docsapi

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// count decodes a count from any JSON number: 12, 12.0 and 1.2e1 are all
// twelve. The value is read from the number's digits, never through a
// float64, so every count up to the largest int64 is exact in every
// spelling: 9007199254740993.0 is 9007199254740993, not the nearest
// float64. Fractions, negatives and values past int64 are errors, since
// they cannot be counts. set records whether the field was present.
type count struct {
	n   int64
	set bool
}

func (c *count) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	n, reason := parseCount(string(b))
	if reason != "" {
		// encoding/json adds the field's path to an *UnmarshalTypeError
		// (and to no other error), so decodeWire can name the API field:
		// "views.human", not just "a count".
		return &json.UnmarshalTypeError{Value: string(b) + " " + reason, Type: countType}
	}
	*c = count{n: n, set: true}
	return nil
}

var countType = reflect.TypeFor[count]()

// parseCount returns the whole number that the JSON value s spells, exactly,
// or why it is not a count. It works on the decimal digits: the mantissa
// without its trailing zeros, scaled by the exponent, must be a whole
// number that fits an int64.
func parseCount(s string) (n int64, reason string) {
	// The common spelling, a plain integer, needs none of the work below.
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return n, ""
	}
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return 0, "is not a number"
	}
	negative := s[0] == '-'
	mantissa, exponent := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mantissa, exponent = s[:i], s[i+1:]
	}
	mantissa = strings.TrimPrefix(mantissa, "-")
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return 0, "" // any spelling of zero, -0 and 0e99 included
	}
	var exp int64
	if exponent != "" {
		var err error
		// The exponent can be any size in JSON; past ±2^31 it only says
		// "enormous" or "tiny", which a clamp keeps.
		if exp, err = strconv.ParseInt(exponent, 10, 32); err != nil {
			exp = math.MaxInt32
			if strings.HasPrefix(exponent, "-") {
				exp = math.MinInt32
			}
		}
	}
	exp -= int64(len(frac))
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp++
	}
	switch {
	case exp < 0:
		return 0, "is not a whole number" // the last digit is not zero
	case negative:
		return 0, "is negative"
	case int64(len(digits))+exp > 19: // more digits than any int64 has
		return 0, "is out of range"
	}
	n, err := strconv.ParseInt(digits+strings.Repeat("0", int(exp)), 10, 64)
	if err != nil {
		return 0, "is out of range"
	}
	return n, ""
}

// counts is the wire form of views totals and rows.
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
// row, which would scan each row twice. The counts are fields of their own,
// not an embedded counts, so that an error names "views.human" and not
// "views.counts.human".
type pageViewWire struct {
	Path  string `json:"path"`
	Human count  `json:"human"`
	AI    count  `json:"ai"`
	Total count  `json:"total"`
}

func (v pageViewWire) counts() counts { return counts{v.Human, v.AI, v.Total} }

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
		row.Human, row.AI, row.Total = v.counts().values()
	}
	*p = page
	return nil
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
	v.Human, v.AI, v.Total = w.counts().values()
	return nil
}
