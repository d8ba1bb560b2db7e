package store

import (
	"strings"
	"testing"
	"time"
)

func TestViewCountProblem(t *testing.T) {
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	good := ViewCount{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}
	if p := good.Problem(); p != "" {
		t.Fatalf("a good count: %q", p)
	}
	// A whole hour in a zone with a half-hour offset is still whole.
	india := good
	india.Hour = hour.In(time.FixedZone("IST", 5*3600+1800))
	if p := india.Problem(); p != "" {
		t.Fatalf("a whole hour seen from another zone: %q", p)
	}
	for _, tc := range []struct {
		want   string
		mutate func(*ViewCount)
	}{
		{"empty project ID", func(c *ViewCount) { c.ProjectID = "" }},
		{"empty path", func(c *ViewCount) { c.Path = "" }},
		{"is not a whole hour", func(c *ViewCount) { c.Hour = hour.Add(30 * time.Minute) }},
		{"is not a whole hour", func(c *ViewCount) { c.Hour = time.Time{} }},
		{"negative count (human 1, ai 0, bot -1)", func(c *ViewCount) { c.Bot = -1 }},
		{"negative count (human -1, ai 0, bot 0)", func(c *ViewCount) { c.Human = -1 }},
		{"negative count (human 1, ai -2, bot 0)", func(c *ViewCount) { c.AI = -2 }},
	} {
		c := good
		tc.mutate(&c)
		if p := c.Problem(); !strings.Contains(p, tc.want) {
			t.Errorf("Problem() = %q, want it to say %q", p, tc.want)
		}
	}
}

func TestViewsQueryProblem(t *testing.T) {
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	good := ViewsQuery{ProjectID: "p", From: hour, To: hour.Add(time.Hour), Limit: 1}
	if p := good.Problem(); p != "" {
		t.Fatalf("a good query: %q", p)
	}
	open := ViewsQuery{ProjectID: "p", Limit: 250}
	if p := open.Problem(); p != "" {
		t.Fatalf("an open range: %q", p)
	}
	for want, mutate := range map[string]func(*ViewsQuery){
		"empty project ID":          func(q *ViewsQuery) { q.ProjectID = "" },
		"limit 0: must be":          func(q *ViewsQuery) { q.Limit = 0 },
		"offset -1: must be":        func(q *ViewsQuery) { q.Offset = -1 },
		"from 2026-05-01 03:00:01":  func(q *ViewsQuery) { q.From = hour.Add(time.Second) },
		"to 2026-05-01 04:30:00 +0": func(q *ViewsQuery) { q.To = hour.Add(90 * time.Minute) },
	} {
		q := good
		mutate(&q)
		if p := q.Problem(); !strings.Contains(p, want) {
			t.Errorf("Problem() = %q, want it to say %q", p, want)
		}
	}
}
