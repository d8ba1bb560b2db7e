package docsapi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fixtures mimic what the hosted service sends: counts are "JSON
// numbers" with no promise of integer spelling, unknown fields appear as the
// export grows, and total may be left out since it is defined as human + ai.
func TestViewsPageDecodesFixtures(t *testing.T) {
	tests := []struct {
		fixture string
		want    ViewsPage
	}{
		{
			// 12, 12.0, 1.2e1 and 2e1 spellings; unknown fields at every level.
			fixture: "views_page1.json",
			want: ViewsPage{
				Totals: ViewCounts{Human: 24, AI: 18, Total: 42},
				Views: []PageView{
					{Path: "/quickstart", Human: 12, AI: 8, Total: 20},
					{Path: "/api-reference/auth", Human: 12, AI: 0, Total: 12},
				},
				HasMore: true,
			},
		},
		{
			// The only row has no total: it must become human + ai, not 0.
			fixture: "views_page2.json",
			want: ViewsPage{
				Totals:  ViewCounts{Human: 24, AI: 18, Total: 42},
				Views:   []PageView{{Path: "/guides/llms-txt", Human: 0, AI: 10, Total: 10}},
				HasMore: false,
			},
		},
		{
			fixture: "views_empty.json",
			want:    ViewsPage{Views: []PageView{}},
		},
		{
			fixture: "views_empty_hasmore.json",
			want: ViewsPage{
				Totals:  ViewCounts{Human: 24, AI: 18, Total: 42},
				Views:   []PageView{},
				HasMore: true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			var got ViewsPage
			if err := json.Unmarshal(fixture(t, tt.fixture), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded page mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// An empty page must decode to an empty, non-nil slice so that callers who
// re-encode it write "views": [] (the field is required by the contract)
// rather than null.
func TestViewsPageEmptyViewsIsNonNil(t *testing.T) {
	var got ViewsPage
	if err := json.Unmarshal(fixture(t, "views_empty.json"), &got); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if got.Views == nil {
		t.Fatal("Views is nil, want an empty slice")
	}
}

func TestViewsPageRejectsCountsThatCannotBeCounts(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{
			name:    "fraction in a row",
			body:    `{"totals":{},"views":[{"path":"/a","human":12.5}],"hasMore":false}`,
			wantErr: `docsapi: views page field "views.human": 12.5 is not a whole number`,
		},
		{
			name:    "negative in totals",
			body:    `{"totals":{"human":-1},"views":[],"hasMore":false}`,
			wantErr: `docsapi: views page field "totals.human": -1 is negative`,
		},
		{
			name:    "number written as a string",
			body:    `{"totals":{"ai":"12"},"views":[],"hasMore":false}`,
			wantErr: `docsapi: views page field "totals.ai": "12" is not a number`,
		},
		{
			name:    "beyond int64 in exponent form",
			body:    `{"totals":{"total":1e30},"views":[],"hasMore":false}`,
			wantErr: `docsapi: views page field "totals.total": 1e30 is out of range`,
		},
		{
			name:    "one past the largest int64",
			body:    `{"views":[{"path":"/a","ai":9223372036854775808}]}`,
			wantErr: `docsapi: views page field "views.ai": 9223372036854775808 is out of range`,
		},
		{
			name:    "boolean",
			body:    `{"views":[{"path":"/a","human":true}]}`,
			wantErr: `docsapi: views page field "views.human": true is not a number`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got ViewsPage
			err := json.Unmarshal([]byte(tt.body), &got)
			if err == nil {
				t.Fatalf("Unmarshal succeeded with %+v, want error %q", got, tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error = %q, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestViewCountsUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		body string
		want ViewCounts
	}{
		{"integers", `{"human":3,"ai":4,"total":7}`, ViewCounts{Human: 3, AI: 4, Total: 7}},
		{"float and exponent spellings", `{"human":3.0,"ai":4e0,"total":0.7e1}`, ViewCounts{Human: 3, AI: 4, Total: 7}},
		{"total missing is human plus ai", `{"human":1.2e1,"ai":3}`, ViewCounts{Human: 12, AI: 3, Total: 15}},
		{"total null is human plus ai", `{"human":2,"ai":3,"total":null}`, ViewCounts{Human: 2, AI: 3, Total: 5}},
		// The visitors export de-duplicates total, so a total that differs
		// from human + ai is data, not an error to correct.
		{"total sent is kept as sent", `{"human":5,"ai":5,"total":7}`, ViewCounts{Human: 5, AI: 5, Total: 7}},
		{"unknown fields ignored", `{"human":1,"ai":1,"total":2,"bots":9}`, ViewCounts{Human: 1, AI: 1, Total: 2}},
		{"largest int64", `{"human":9223372036854775807,"ai":0}`, ViewCounts{Human: 9223372036854775807, Total: 9223372036854775807}},
		{"negative zero is zero", `{"human":-0,"ai":0,"total":0}`, ViewCounts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ViewCounts{Human: 99, AI: 99, Total: 99} // stale values must not survive
			if err := json.Unmarshal([]byte(tt.body), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestViewCountsUnmarshalJSONRejectsBadCounts(t *testing.T) {
	tests := []struct {
		body    string
		wantErr string
	}{
		{`{"human":12.5}`, `docsapi: view counts field "human": 12.5 is not a whole number`},
		{`{"ai":-1}`, `docsapi: view counts field "ai": -1 is negative`},
		{`{"total":"12"}`, `docsapi: view counts field "total": "12" is not a number`},
		{`{"human":1e30}`, `docsapi: view counts field "human": 1e30 is out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			var got ViewCounts
			err := json.Unmarshal([]byte(tt.body), &got)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestPageViewUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		body string
		want PageView
	}{
		{"all fields", `{"path":"/a","human":1,"ai":2.0,"total":3}`, PageView{Path: "/a", Human: 1, AI: 2, Total: 3}},
		{"exponent counts", `{"path":"/b","human":1.2e1,"ai":1e0,"total":1.3e1}`, PageView{Path: "/b", Human: 12, AI: 1, Total: 13}},
		{"total missing", `{"path":"/c","human":4,"ai":6}`, PageView{Path: "/c", Human: 4, AI: 6, Total: 10}},
		{"unknown field", `{"path":"/d","human":0,"ai":0,"total":0,"title":"D"}`, PageView{Path: "/d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PageView{Path: "stale", Human: 99, AI: 99, Total: 99}
			if err := json.Unmarshal([]byte(tt.body), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPageViewUnmarshalJSONRejectsBadCounts(t *testing.T) {
	tests := []struct {
		body    string
		wantErr string
	}{
		{`{"path":"/a","ai":1.5}`, `docsapi: page view field "ai": 1.5 is not a whole number`},
		{`{"path":"/a","human":-3}`, `docsapi: page view field "human": -3 is negative`},
		{`{"path":"/a","total":"3"}`, `docsapi: page view field "total": "3" is not a number`},
		{`{"path":"/a","total":1e30}`, `docsapi: page view field "total": 1e30 is out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			var got PageView
			err := json.Unmarshal([]byte(tt.body), &got)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// parseCount is pure: every spelling rule is a row.
func TestParseCount(t *testing.T) {
	tests := []struct {
		in         string
		want       int64
		wantReason string
	}{
		{"0", 0, ""},
		{"-0", 0, ""},
		{"0.000", 0, ""},
		{"0e999999999999", 0, ""},
		{"-0.0e-5", 0, ""},
		{"7", 7, ""},
		{"7.0", 7, ""},
		{"70e-1", 7, ""},
		{"0.7e1", 7, ""},
		{"7E+0", 7, ""},
		{"1.2e1", 12, ""},
		{"1200e-2", 12, ""},
		{"9007199254740993.0", 9007199254740993, ""},
		{"999999999999999999", 999999999999999999, ""},
		{"1000000000000000000", 1000000000000000000, ""},
		{"9223372036854775807", 9223372036854775807, ""},
		{"9223372036854775807.0e0", 9223372036854775807, ""},
		{"0.9223372036854775807e19", 9223372036854775807, ""},
		{"12.5", 0, "is not a whole number"},
		{"1e-1", 0, "is not a whole number"},
		{"1e-99999999999", 0, "is not a whole number"},
		{"-1.5", 0, "is not a whole number"},
		{"-1", 0, "is negative"},
		{"-1e3", 0, "is negative"},
		{"9223372036854775808", 0, "is out of range"},
		{"1e19", 0, "is out of range"},
		{"1e30", 0, "is out of range"},
		{"1e99999999999", 0, "is out of range"},
		{"10000000000000000000000000000e-10", 1000000000000000000, ""},
		{"100000000000000000000000000000e-10", 0, "is out of range"},
		{`"12"`, 0, "is not a number"},
		{"true", 0, "is not a number"},
		{"{}", 0, "is not a number"},
		{"[1]", 0, "is not a number"},
		{"", 0, "is not a number"},
	}
	for _, tt := range tests {
		got, reason := parseCount(tt.in)
		if got != tt.want || reason != tt.wantReason {
			t.Errorf("parseCount(%s) = %d, %q; want %d, %q", tt.in, got, reason, tt.want, tt.wantReason)
		}
	}
}
