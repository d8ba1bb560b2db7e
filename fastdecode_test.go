package docsapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fastCase is a body for one of the results with a hand decoder.
type fastCase struct {
	kind string // "views", "visitors" or "job"
	body string
	fast bool // whether the hand decoder must take it
}

// decodeBoth decodes body with the hand decoder and with the wire types,
// into fresh results of its kind.
func decodeBoth(kind, body string) (fast, wire any, accepted bool, wireErr error) {
	switch kind {
	case "views":
		var f, w ViewsPage
		accepted = f.decodeFast([]byte(body))
		wireErr = w.decodeBody([]byte(body))
		return f, w, accepted, wireErr
	case "visitors":
		var f, w VisitorsPage
		accepted = f.decodeFast([]byte(body))
		wireErr = w.decodeBody([]byte(body))
		return f, w, accepted, wireErr
	default:
		var f, w Job
		accepted = f.decodeFast([]byte(body))
		wireErr = w.decodeBody([]byte(body))
		return f, w, accepted, wireErr
	}
}

const (
	plainViews = `{"totals":{"human":24,"ai":18,"total":42},"views":[` +
		`{"path":"/quickstart","human":12,"ai":8,"total":20},{"path":"/api","human":12,"ai":0,"total":12}],"hasMore":true}`
	plainJob = `{"id":"aj_1","status":"completed","source":{"repository":"acme/docs","ref":"main"},` +
		`"model":"m","prLink":"https://example.test/pr/1","createdAt":"2026-08-14T09:21:07.482Z","archivedAt":null}`
)

var fastCases = []fastCase{
	// Taken: the plain forms servers write.
	{"views", plainViews, true},
	{"views", " \n{ \"hasMore\" : false ,\t\"views\" : [ ] , \"totals\" : { } } \r\n", true},
	{"views", `{"totals":{"human":1,"ai":2},"views":[{"path":"/a","human":3,"ai":4}],"hasMore":false}`, true}, // total = human + ai
	{"views", `{"totals":{"total":0},"views":[{}],"hasMore":true}`, true},
	{"views", `{"totals":{},"views":[{"path":"/café ü 日本"}],"hasMore":false}`, true},
	{"views", `{"totals":{"human":999999999999999999},"views":[],"hasMore":false}`, true},
	{"visitors", `{"totals":{"human":7,"ai":5,"total":10},"visitors":[{"path":"/q","human":7,"ai":5,"total":10},{"path":"/r","human":1,"ai":2}],"hasMore":true}`, true},
	{"job", plainJob, true},
	{"job", `{"id":"j","status":"active","source":null,"model":null,"prLink":null,"createdAt":null,"archivedAt":null}`, true},
	{"job", `{}`, true},
	{"job", `{"status":"paused","source":{},"createdAt":"2026-08-14 09:21:07.482+00","archivedAt":""}`, true},
	{"job", `{"status":"archived","source":{"repository":null,"ref":null},"archivedAt":"2026-08-15T00:00:00Z"}`, true},

	// Declined: the wire types decide, and give the same result or error.
	{"views", `{"totals":{"human":12.0},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{"human":1.2e1},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{"human":-0},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{"human":012},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{"human":1234567890123456789},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{"human":null},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{},"views":[null],"hasMore":false}`, false},
	{"views", `{"totals":{},"views":null,"hasMore":false}`, false},
	{"views", `{"totals":{},"views":[],"hasMore":null}`, false},
	{"views", `{"totals":{},"views":[]}`, false},
	{"views", `{"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{},"views":[],"hasMore":false,"extra":1}`, false},
	{"views", `{"totals":{},"views":[],"hasMore":false,"hasMore":true}`, false},
	{"views", `{"totals":{},"views":[{"path":"/a","path":"/b"}],"hasMore":false}`, false},
	{"views", `{"totals":{},"views":[{"Path":"/a"}],"hasMore":false}`, false},
	{"views", `{"totals":{"path":"/a"},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{},"views":[{"path":"/a\"b"}],"hasMore":false}`, false},
	{"views", `{"totals":{},"views":[{"path":"/a\u00e9"}],"hasMore":false}`, false},
	{"views", "{\"totals\":{},\"views\":[{\"path\":\"/\xff\"}],\"hasMore\":false}", false},
	{"views", "{\"totals\":{},\"views\":[{\"path\":\"/a\tb\"}],\"hasMore\":false}", false},
	{"views", `{"totals":{},"views":[],"hasMore":false} x`, false},
	{"views", `{"totals":{},"views":[],"hasMore":false}{}`, false},
	{"views", `{"totals":{},"views":[,],"hasMore":false}`, false},
	{"views", `{"totals":{},"views":[{},],"hasMore":false}`, false},
	{"views", `{"totals":{},"views":[],"hasMore":tru}`, false},
	{"views", `{"totals":{},"views":[],"hasMore":falsey}`, false},
	{"views", `{"totals":{"human":1 2},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":{"human":"1"},"views":[],"hasMore":false}`, false},
	{"views", `{"totals":[],"views":[],"hasMore":false}`, false},
	{"views", "\ufeff{\"totals\":{},\"views\":[],\"hasMore\":false}", false},
	{"views", `null`, false},
	{"views", ``, false},
	{"views", `{"totals":{},"views":[],"hasMore":false`, false},
	{"visitors", `{"totals":{},"views":[],"hasMore":false}`, false},
	{"job", `{"id":"j","id":"k"}`, false},
	{"job", `{"id":"j","branch":"b"}`, false},
	{"job", `{"ID":"j"}`, false},
	{"job", `{"id":1}`, false},
	{"job", `{"source":"acme/docs"}`, false},
	{"job", `{"source":{"repository":"r","sha":"s"}}`, false},
	{"job", `{"source":{"repository":"r","repository":"s"}}`, false},
	{"job", `{"createdAt":"yesterday"}`, false},
	{"job", `{"prLink":"https:\/\/example.test"}`, false},
	{"job", `[]`, false},
}

// The hand decoder takes the plain forms, and whatever it takes decodes to
// exactly what the wire types give; what it declines, they decide.
func TestFastDecodeAgreesWithTheWireTypes(t *testing.T) {
	for _, tc := range fastCases {
		fast, wire, accepted, wireErr := decodeBoth(tc.kind, tc.body)
		if accepted != tc.fast {
			t.Errorf("%s %s: hand decoder took it %v, want %v", tc.kind, tc.body, accepted, tc.fast)
		}
		if !accepted {
			continue
		}
		if wireErr != nil {
			t.Errorf("%s %s: the hand decoder took a body the wire types refuse: %v", tc.kind, tc.body, wireErr)
			continue
		}
		if diff := cmp.Diff(wire, fast); diff != "" {
			t.Errorf("%s %s: decoded differently (-wire +fast):\n%s", tc.kind, tc.body, diff)
		}
	}
}

// A declined body leaves the result as it was, so that the wire types start
// from a clean one.
func TestFastDecodeDeclinesWithoutTouchingItsResult(t *testing.T) {
	page := ViewsPage{Views: []PageView{{Path: "/kept"}}, HasMore: true}
	want := page
	if page.decodeFast([]byte(`{"totals":{},"views":[{"path":"/a"},{"path":"/b","human":1.5}],"hasMore":false}`)) {
		t.Fatal("took a count of 1.5")
	}
	if diff := cmp.Diff(want, page); diff != "" {
		t.Errorf("page changed (-want +got):\n%s", diff)
	}
	job := Job{ID: "kept"}
	if job.decodeFast([]byte(`{"id":"j","status":"active","createdAt":"not a time"}`)) {
		t.Fatal("took a malformed timestamp")
	}
	if job.ID != "kept" || job.Status != "" {
		t.Errorf("job changed: %+v", job)
	}
}

// Every fixture either goes through the hand decoder to the same result, or
// is declined.
func TestFastDecodeOfFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		kind := ""
		switch {
		case strings.HasPrefix(name, "views_page"), strings.HasPrefix(name, "views_empty"):
			kind = "views"
		case strings.HasPrefix(name, "visitors_page"):
			kind = "visitors"
		case strings.HasPrefix(name, "job_"):
			kind = "job"
		default:
			continue
		}
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		fast, wire, accepted, wireErr := decodeBoth(kind, string(body))
		if !accepted {
			continue
		}
		if wireErr != nil {
			t.Errorf("%s: taken by the hand decoder, refused by the wire types: %v", name, wireErr)
		} else if diff := cmp.Diff(wire, fast); diff != "" {
			t.Errorf("%s: decoded differently (-wire +fast):\n%s", name, diff)
		}
	}
}

func FuzzFastDecodeAgreesWithTheWireTypes(f *testing.F) {
	kinds := []string{"views", "visitors", "job"}
	for i, tc := range fastCases {
		for k, kind := range kinds {
			if kind == tc.kind {
				f.Add(uint8(k), tc.body)
			}
		}
		if i == 0 {
			f.Add(uint8(1), strings.Replace(tc.body, `"views"`, `"visitors"`, 1))
		}
	}
	f.Fuzz(func(t *testing.T, k uint8, body string) {
		kind := kinds[int(k)%len(kinds)]
		fast, wire, accepted, wireErr := decodeBoth(kind, body)
		if !accepted {
			return
		}
		if wireErr != nil {
			t.Fatalf("%s %q: taken by the hand decoder, refused by the wire types: %v", kind, body, wireErr)
		}
		if diff := cmp.Diff(wire, fast); diff != "" {
			t.Fatalf("%s %q: decoded differently (-wire +fast):\n%s", kind, body, diff)
		}
	})
}
