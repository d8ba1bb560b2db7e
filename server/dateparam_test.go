package server

import (
	"net/url"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/internal/isodate/isodatetest"
)

// The date parameters accept and refuse the forms of the list the SDK's
// tests read too, through the parsers the handlers use: the views query
// (whose bounds widen to whole hours) and the exports' (exact instants).
func TestDateParametersFollowTheSharedCases(t *testing.T) {
	for _, tt := range isodatetest.Accepted {
		t.Run(tt.Name, func(t *testing.T) {
			raw := url.Values{"dateFrom": {tt.In}, "dateTo": {tt.In}}.Encode()
			q, details := parseViewsQuery(raw)
			if len(details) != 0 {
				t.Fatalf("views query %s: %v", raw, details)
			}
			if h := tt.Want.Truncate(time.Hour); !q.From.Equal(h) {
				t.Errorf("views query %s: From = %v, want the hour %v", raw, q.From, h)
			}
			qs := newExportQuery(raw)
			from, to := qs.dates()
			if len(qs.details) != 0 || !from.Equal(tt.Want) || !to.Equal(tt.Want) || from.Location() != time.UTC {
				t.Errorf("export query %s: %v, %v, %v; want %v in UTC twice", raw, from, to, qs.details, tt.Want)
			}
		})
	}
	for _, tt := range isodatetest.Refused {
		t.Run(tt.Name, func(t *testing.T) {
			raw := url.Values{"dateTo": {tt.In}}.Encode()
			want := "dateTo " + isodatetest.Refusal(tt.In)
			if tt.In == unescapedPlus {
				want += plusHint
			}
			if _, details := parseViewsQuery(raw); len(details) != 1 || details[0].Message != want {
				t.Errorf("views query %s: %v, want the one detail %q", raw, details, want)
			}
			qs := newExportQuery(raw)
			if qs.dates(); len(qs.details) != 1 || qs.details[0].Message != want {
				t.Errorf("export query %s: %v, want the one detail %q", raw, qs.details, want)
			}
		})
	}
}

// unescapedPlus is the one refused value of the shared list that would be
// accepted with a "+" for its space, so its message ends with plusHint.
const (
	unescapedPlus = "2026-10-24T11:30:00 02:00"
	plusHint      = `; a "+" in a query string means a space: send it as %2B`
)

// An offset whose "+" was not escaped reaches the server as a space; the
// message says what to send instead.
func TestDateParameterWithASpaceTellsHowToSendAPlus(t *testing.T) {
	_, details := parseViewsQuery("dateFrom=2026-10-24T11:30:00+02:00")
	want := "dateFrom " + isodatetest.Refusal(unescapedPlus) + plusHint
	if len(details) != 1 || details[0].Message != want {
		t.Errorf("details = %v, want the one detail %q", details, want)
	}
}
