package server

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/store"
)

func hour(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseViewsQuery(t *testing.T) {
	tests := []struct {
		raw  string
		want store.ViewsQuery
	}{
		{"", store.ViewsQuery{Limit: 50}},
		{"limit=1&offset=0", store.ViewsQuery{Limit: 1}},
		{"limit=250&offset=1000", store.ViewsQuery{Limit: 250, Offset: 1000}},
		{"dateFrom=2026-01-01&dateTo=2026-02-01", store.ViewsQuery{
			From: hour("2026-01-01T00:00:00Z"), To: hour("2026-02-01T00:00:00Z"), Limit: 50}},
		// A mid-hour bound takes in the whole hour it falls in, on both sides.
		{"dateFrom=2026-01-01T10:30:00Z&dateTo=2026-01-01T12:15:00Z", store.ViewsQuery{
			From: hour("2026-01-01T10:00:00Z"), To: hour("2026-01-01T13:00:00Z"), Limit: 50}},
		// A whole-hour dateTo stays exclusive.
		{"dateTo=2026-01-01T12:00:00Z", store.ViewsQuery{To: hour("2026-01-01T12:00:00Z"), Limit: 50}},
		// Offsets are converted to UTC before rounding.
		{"dateFrom=2026-01-01T10:30:00%2B02:00", store.ViewsQuery{From: hour("2026-01-01T08:00:00Z"), Limit: 50}},
		// An empty range stays empty, even inside one hour.
		{"dateFrom=2026-01-01T10:30:00Z&dateTo=2026-01-01T10:30:00Z", store.ViewsQuery{
			From: hour("2026-01-01T10:00:00Z"), To: hour("2026-01-01T10:00:00Z"), Limit: 50}},
		{"dateFrom=2026-01-01&dateTo=2026-01-01", store.ViewsQuery{
			From: hour("2026-01-01T00:00:00Z"), To: hour("2026-01-01T00:00:00Z"), Limit: 50}},
		// Unknown parameters are ignored, as the hosted service does.
		{"utm_source=x&limit=7", store.ViewsQuery{Limit: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, details := parseViewsQuery(tt.raw)
			if len(details) != 0 {
				t.Fatalf("details = %v, want none", details)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseViewsQueryListsEveryProblem(t *testing.T) {
	tests := []struct {
		raw  string
		want []string // substrings, one per detail, in order
	}{
		{"limit=0", []string{`limit must be an integer from 1 to 250, got "0"`}},
		{"limit=251", []string{`got "251"`}},
		{"limit=ten", []string{`got "ten"`}},
		{"limit=99999999999999999999", []string{`got "99999999999999999999"`}},
		{"offset=-1", []string{`offset must be an integer of 0 or more, got "-1"`}},
		{"dateFrom=yesterday", []string{`dateFrom "yesterday" is neither a date nor an ISO 8601 date-time: send, for example, 2026-10-24,`}},
		{"dateTo=2026-13-01", []string{`dateTo "2026-13-01" is neither a date`}},
		{"dateFrom=2026-02-01&dateTo=2026-01-01", []string{"dateFrom (2026-02-01T00:00:00Z) is after dateTo (2026-01-01T00:00:00Z)"}},
		{"limit=1&limit=2", []string{"limit is given 2 times"}},
		{"limit=0&offset=x&dateFrom=bad", []string{`dateFrom "bad" is neither`, "limit must be", "offset must be"}},
		{"%zz", []string{"the query string is malformed"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, details := parseViewsQuery(tt.raw)
			if len(details) != len(tt.want) {
				t.Fatalf("details = %v, want %d of them", details, len(tt.want))
			}
			for i, d := range details {
				if !strings.Contains(d.Message, tt.want[i]) {
					t.Errorf("detail %d = %q, want it to contain %q", i, d.Message, tt.want[i])
				}
			}
		})
	}
}

// FuzzViewsQuery checks that no query string makes the parser panic or
// accept a query the store would refuse: bad input must be a 400 with
// details, never a 500 further down.
func FuzzViewsQuery(f *testing.F) {
	for _, seed := range []string{
		"", "limit=50&offset=0", "dateFrom=2026-01-01&dateTo=2026-02-01",
		"dateFrom=2026-01-01T10:30:00Z&dateTo=2026-01-01T10:30:00Z",
		"limit=-1", "offset=9223372036854775807", "dateFrom=%zz", "limit=1&limit=1",
		"dateFrom=0000-01-01&dateTo=9999-12-31T23:59:59.999999999Z",
		"dateFrom=2026-01-01T00:00:00-23:59", ";;&&==",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, details := parseViewsQuery(raw)
		if len(details) > 0 {
			return
		}
		if q.Limit < 1 || q.Limit > maxViewsLimit || q.Offset < 0 {
			t.Fatalf("accepted %q with limit %d, offset %d", raw, q.Limit, q.Offset)
		}
		if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
			t.Fatalf("accepted %q with To %v before From %v", raw, q.To, q.From)
		}
		for _, b := range []time.Time{q.From, q.To} {
			if !b.IsZero() && (!b.Equal(b.Truncate(time.Hour)) || b.Location() != time.UTC) {
				t.Fatalf("accepted %q with a bound %v that is not a whole UTC hour", raw, b)
			}
		}
	})
}
