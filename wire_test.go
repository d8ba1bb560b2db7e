package docsapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
)

// A 200 that is not a views page must not end an export as if it were an
// empty one: the contract makes totals, views and hasMore required.
func TestViewsPageRequiresEveryField(t *testing.T) {
	tests := []struct {
		name, body, field string
	}{
		{"empty object", `{}`, "totals"},
		{"null", `null`, "totals"},
		{"no views", `{"totals":{"human":1,"ai":0,"total":1},"hasMore":false}`, "views"},
		{"null views", `{"totals":{"human":1,"ai":0,"total":1},"views":null,"hasMore":false}`, "views"},
		{"no hasMore", `{"totals":{"human":1,"ai":0,"total":1},"views":[]}`, "hasMore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var page ViewsPage
			err := json.Unmarshal([]byte(tt.body), &page)
			if err == nil || !strings.Contains(err.Error(), `required field "`+tt.field+`"`) {
				t.Fatalf("Unmarshal(%s) error = %v, want one naming the required field %q", tt.body, err, tt.field)
			}
		})
	}
}

func TestAllViewsStopsWithAnErrorOnAnEmptyObject(t *testing.T) {
	c, mt := newTestClient(t)
	mt.RegisterResponder(http.MethodGet, testBaseURL+"/v1/analytics/proj/views",
		httpmock.NewStringResponder(http.StatusOK, `{}`))
	rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{}))
	if len(rows) != 0 || err == nil || !strings.Contains(err.Error(), `"totals"`) {
		t.Fatalf("Collect = %v, %v; want no rows and an error naming totals", rows, err)
	}
}

// Decoding errors name the API's fields and JSON kinds, never the SDK's
// internal wire types.
func TestDecodeErrorsNameAPIFieldsNotInternalTypes(t *testing.T) {
	tests := []struct {
		name string
		into any
		body string
		want string
	}{
		{"views not an array", new(ViewsPage), `{"totals":{},"views":3,"hasMore":false}`,
			`docsapi: views page field "views": expected an array, got JSON number`},
		{"path not a string", new(ViewsPage), `{"totals":{},"views":[{"path":1}],"hasMore":false}`,
			`docsapi: views page field "views.path": expected a string, got JSON number`},
		{"hasMore not a boolean", new(ViewsPage), `{"totals":{},"views":[],"hasMore":"yes"}`,
			`docsapi: views page field "hasMore": expected a boolean, got JSON string`},
		{"page is an array", new(ViewsPage), `[]`,
			`docsapi: views page: expected an object, got JSON array`},
		{"row path", new(PageView), `{"path":false}`,
			`docsapi: page view field "path": expected a string, got JSON bool`},
		{"totals not an object", new(ViewCounts), `"12"`,
			`docsapi: view counts: expected an object, got JSON string`},
		{"job id a number", new(Job), `{"id":5}`,
			`docsapi: job field "id": expected a string, got JSON number`},
		{"job source a string", new(Job), `{"id":"j","source":"repo"}`,
			`docsapi: job field "source": expected an object, got JSON string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tt.body), tt.into)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Unmarshal(%s) error = %v\nwant %s", tt.body, err, tt.want)
			}
			if strings.Contains(err.Error(), "Wire") || strings.Contains(err.Error(), "docsapi.") {
				t.Errorf("error %q names an internal type", err)
			}
		})
	}
}

// January 1 of year 1 is time.Time's zero instant, but as a date it is set
// and must be sent, not silently dropped.
func TestDayOfYearOneIsNotZero(t *testing.T) {
	b := Day(1, 1, 1)
	if b.IsZero() {
		t.Fatal("Day(1, 1, 1).IsZero() = true, want false")
	}
	if got := (ViewsParams{DateFrom: b}).query(); got != "dateFrom=0001-01-01" {
		t.Fatalf("query = %q, want dateFrom=0001-01-01", got)
	}
	if !(DateBound{}).IsZero() || !Instant(b.Time()).IsZero() {
		t.Fatal("the zero bound and the zero instant must stay zero")
	}
}
