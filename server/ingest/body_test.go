package ingest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/strictjson"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// An unknown field is answered with the fields of the object it is in:
// each body lists its own, never another body's. (Job and message bodies
// ignore unknown fields; see TestParsePromptIgnoresOtherFields.) The whole
// message is the contract, so the whole message is compared.
func TestUnknownFieldMessagesNameTheBodysOwnFields(t *testing.T) {
	const viewFields = `"path", "userAgent", "accept", "at", "count", "visitor"`
	ingests := []struct{ body, want string }{
		{`{"views": [], "referrer": "x"}`, `unknown field "referrer"; the only field is "views"`},
		{`{"referrer": "x", "views": [{"path": "/a"}]}`, `unknown field "referrer"; the only field is "views"`},
		{`{"views": [{"path": "/a", "referrer": "x"}]}`, `views[0]: unknown field "referrer"; the fields are ` + viewFields},
		{`{"views": [{"path": "/a"}, {"path": "/b", "referrer": "x"}], "extra": 1}`, `views[1]: unknown field "referrer"; the fields are ` + viewFields},
		{`{"extra": 1, "views": [{"path": "/a", "referrer": "x"}]}`, `unknown field "extra"; the only field is "views"`},
		// The unknown field comes first, so it is the one told.
		{`{"views": [{"path": "/a", "referrer": "x", "count": "2"}]}`, `views[0]: unknown field "referrer"; the fields are ` + viewFields},
		// The view that held it was replaced by a later "views": still
		// the field of that view, the first problem in the text.
		{`{"views": [{"x": 1}], "views": []}`, `views[0]: unknown field "x"; the fields are ` + viewFields},
		// The other messages of input.DecodeJSON, through the ingestion body.
		{`{"views": [{"path": "/a", "count": "2"}]}`, `field "views.count" must be a number, not a JSON string`},
		{`{"views": {}}`, `field "views" must be an array, not a JSON object`},
		{`[]`, `request body must be a JSON object, not a JSON array`},
		{`{"views": [`, `request body is not valid JSON: it ends too early`},
		{`{}`, `field "views" is required: an array of {` + viewFields + `}`},
	}
	now := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	for _, tt := range ingests {
		_, _, details := parseIngest([]byte(tt.body), now, traffic.Default())
		if len(details) != 1 || details[0].Message != tt.want {
			t.Errorf("parseIngest(%s) = %+v, want the one detail %q", tt.body, details, tt.want)
		}
	}
}

// The messages list the fields of the types the bodies are decoded into.
func TestBodyJSONFieldsFollowTheType(t *testing.T) {
	tests := []struct {
		t    reflect.Type
		want []string
	}{
		{reflect.TypeFor[ingestBody](), []string{"views"}},
		{reflect.TypeFor[ingestView](), []string{"path", "userAgent", "accept", "at", "count", "visitor"}},
	}
	for _, tt := range tests {
		if got := strictjson.Fields(tt.t); !slices.Equal(got, tt.want) {
			t.Errorf("strictjson.Fields(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}
