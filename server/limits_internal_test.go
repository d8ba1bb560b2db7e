package server

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/internal/openapitest"
)

// Each page size the server enforces is its own constant, written once, and
// the document states the same bounds: a limit changed on one side only
// fails here.
func TestPageSizesAreTheDocuments(t *testing.T) {
	doc := openapitest.Document(t)
	for _, tc := range []struct {
		parameter string
		def, max  int
	}{
		{"Limit", defaultViewsLimit, maxViewsLimit}, // views and visitors
		{"JobsLimit", defaultJobsLimit, maxJobsLimit},
		{"FeedbackLimit", defaultFeedbackLimit, maxFeedbackLimit},
		{"FeedbackByPageLimit", defaultFeedbackByPageLimit, maxFeedbackLimit},
		{"SearchesLimit", defaultSearchesLimit, maxSearchesLimit},
	} {
		p := doc.Components.Parameters[tc.parameter]
		if p == nil {
			t.Errorf("the document has no parameter %s", tc.parameter)
			continue
		}
		s := p.Value.Schema.Value
		if s.Min == nil || *s.Min != 1 || s.Max == nil || *s.Max != float64(tc.max) || s.Default != float64(tc.def) {
			t.Errorf("%s: the document says minimum %v, maximum %v, default %v; the server 1, %d, %d",
				tc.parameter, orNil(s.Min), orNil(s.Max), s.Default, tc.max, tc.def)
		}
	}
}

func orNil(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
