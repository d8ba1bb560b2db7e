package metrics_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/connlimit"
	"github.com/docsapi/docsapi-go/server/metrics"
)

// Refusals of the connection limits are counted by reason, each reason's
// series there from the start; a reason is one of connlimit's, never a
// value a client chose.
func TestConnectionRefusals(t *testing.T) {
	m, err := metrics.New(metrics.Config{})
	if err != nil {
		t.Fatal(err)
	}
	before := scrape(t, m.Handler())
	for _, r := range connlimit.Reasons() {
		want(t, before, `docsapi_connections_refused_total{reason="`+string(r)+`"}`, 0)
	}
	for range 3 {
		m.ObserveRefusal(connlimit.Refusal{Reason: connlimit.PublicBusy})
	}
	m.ObserveRefusal(connlimit.Refusal{Reason: connlimit.Evicted})
	got := scrape(t, m.Handler())
	want(t, got, `docsapi_connections_refused_total{reason="public_busy"}`, 3)
	want(t, got, `docsapi_connections_refused_total{reason="evicted"}`, 1)
	want(t, got, `docsapi_connections_refused_total{reason="full"}`, 0)
	if n := len(series(got, "docsapi_connections_refused_total")); n != len(connlimit.Reasons()) {
		t.Errorf("%d series of refusals, want one per reason", n)
	}
}
