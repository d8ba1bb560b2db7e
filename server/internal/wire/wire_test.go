package wire_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/docsapi/docsapi-go/server/internal/openapitest"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// schemas pairs each wire type with the schema of the document it encodes.
var schemas = map[string]reflect.Type{
	"Job":                        reflect.TypeFor[wire.Job](),
	"JobSource":                  reflect.TypeFor[wire.JobSource](),
	"JobsPage":                   reflect.TypeFor[wire.JobsPage](),
	"ViewsPage":                  reflect.TypeFor[wire.ViewsPage](),
	"ViewCounts":                 reflect.TypeFor[wire.ViewCounts](),
	"PageView":                   reflect.TypeFor[wire.PageView](),
	"VisitorsPage":               reflect.TypeFor[wire.VisitorsPage](),
	"VisitorCounts":              reflect.TypeFor[wire.VisitorCounts](),
	"PageVisitors":               reflect.TypeFor[wire.PageVisitors](),
	"ViewsSeries":                reflect.TypeFor[wire.ViewsSeries](),
	"ViewsPoint":                 reflect.TypeFor[wire.ViewsPoint](),
	"AgentsPage":                 reflect.TypeFor[wire.AgentsPage](),
	"AgentViews":                 reflect.TypeFor[wire.AgentViews](),
	"AgentPage":                  reflect.TypeFor[wire.AgentPage](),
	"FeedbackEntry":              reflect.TypeFor[wire.FeedbackEntry](),
	"FeedbackPage":               reflect.TypeFor[wire.FeedbackPage](),
	"FeedbackByPage":             reflect.TypeFor[wire.FeedbackByPage](),
	"PageFeedback":               reflect.TypeFor[wire.PageFeedback](),
	"SearchesPage":               reflect.TypeFor[wire.SearchesPage](),
	"Search":                     reflect.TypeFor[wire.Search](),
	"AssistantConversationsPage": reflect.TypeFor[wire.AssistantConversationsPage](),
	"AssistantConversation":      reflect.TypeFor[wire.AssistantConversation](),
	"AssistantSource":            reflect.TypeFor[wire.AssistantSource](),
	"AssistantThread":            reflect.TypeFor[wire.AssistantThread](),
	"AssistantMessage":           reflect.TypeFor[wire.AssistantMessage](),
	"AssistantCallerStats":       reflect.TypeFor[wire.AssistantCallerStats](),
	"ErrorDetail":                reflect.TypeFor[wire.ErrorDetail](),
	"UpdateTrigger":              reflect.TypeFor[wire.UpdateTrigger](),
	"UpdateStatus":               reflect.TypeFor[wire.UpdateStatus](),
	"UpdateAuthor":               reflect.TypeFor[wire.UpdateAuthor](),
	"UpdateCommit":               reflect.TypeFor[wire.UpdateCommit](),
	"UpdateFilesChanged":         reflect.TypeFor[wire.UpdateFilesChanged](),
	"GapsReport":                 reflect.TypeFor[wire.GapsReport](),
	"GapGroup":                   reflect.TypeFor[wire.GapGroup](),
	"Gap":                        reflect.TypeFor[wire.Gap](),
	"GapJob":                     reflect.TypeFor[wire.GapJob](),
	"GapRetrieval":               reflect.TypeFor[wire.GapRetrieval](),
}

// groups are the types embedded as a whole in another, which have no
// schema of their own.
var groups = []string{"Vote", "Contextual", "CodeSnippet", "UpdateEnded", "UpdateSite", "UpdateRead", "UpdateScreenshots"}

// field is a JSON property as a wire type encodes it.
type field struct {
	name     string
	typ      reflect.Type
	optional bool // in an embedded group, absent when the group is nil
}

// jsonFields lists the properties t encodes, in order, through embedded
// groups.
func jsonFields(t *testing.T, typ reflect.Type, optional bool) []field {
	var out []field
	for _, sf := range reflect.VisibleFields(typ) {
		if len(sf.Index) > 1 {
			continue // reached through its group below
		}
		if sf.Anonymous {
			out = append(out, jsonFields(t, sf.Type.Elem(), sf.Type.Kind() == reflect.Pointer)...)
			continue
		}
		// Every property is named, and no tag option leaves one out:
		// whether a property is sent is its group's business alone.
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" || opts != "" {
			t.Errorf("%s.%s has the tag %q: want the property's name alone", typ.Name(), sf.Name, sf.Tag.Get("json"))
		}
		out = append(out, field{name: name, typ: sf.Type, optional: optional})
	}
	return out
}

// Each wire type has exactly its schema's properties; a pointer exactly
// where the schema allows null; a property the server may leave out
// exactly where the schema does not require it (with the self-hosted
// guarantees); and the JSON type, or the schema named, that the schema
// says. The validation of every response in the server's tests sees the
// answers the tests make; this sees every field, those no test fills in
// included.
func TestTypesMatchTheDocument(t *testing.T) {
	doc := openapitest.Document(t)
	for name, typ := range schemas {
		t.Run(name, func(t *testing.T) {
			ref := doc.Components.Schemas[name]
			if ref == nil {
				t.Fatalf("the document has no schema %s", name)
			}
			s := ref.Value
			fields := jsonFields(t, typ, false)
			names := make([]string, len(fields))
			for i, f := range fields {
				names[i] = f.name
			}
			if want := slices.Sorted(maps.Keys(s.Properties)); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
				t.Fatalf("properties %v, the schema has %v", names, want)
			}
			for _, f := range fields {
				prop := s.Properties[f.name]
				if got, want := f.typ.Kind() == reflect.Pointer, prop.Value.Nullable; got != want {
					t.Errorf("%s: a pointer is %v, nullable in the schema is %v", f.name, got, want)
				}
				if got, want := f.optional, !slices.Contains(s.Required, f.name); got != want {
					t.Errorf("%s: may be absent is %v, not required in the schema is %v", f.name, got, want)
				}
				if problem := typeProblem(f.typ, prop); problem != "" {
					t.Errorf("%s: %s", f.name, problem)
				}
			}
		})
	}
}

// typeProblem says how the Go type t differs from the schema of a property,
// or "".
func typeProblem(t reflect.Type, prop *openapi3.SchemaRef) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	v := prop.Value
	switch t.Kind() {
	case reflect.String:
		if !v.Type.Is("string") {
			return "a string in Go, " + strings.Join(v.Type.Slice(), "|") + " in the schema"
		}
	case reflect.Int64, reflect.Float64:
		if !v.Type.Is("number") && !v.Type.Is("integer") {
			return "a number in Go, " + strings.Join(v.Type.Slice(), "|") + " in the schema"
		}
	case reflect.Bool:
		if !v.Type.Is("boolean") {
			return "a boolean in Go, " + strings.Join(v.Type.Slice(), "|") + " in the schema"
		}
	case reflect.Slice:
		if !v.Type.Is("array") {
			return "a slice in Go, " + strings.Join(v.Type.Slice(), "|") + " in the schema"
		}
		return typeProblem(t.Elem(), v.Items)
	case reflect.Struct:
		if want := "#/components/schemas/" + t.Name(); prop.Ref != want {
			return "the Go type " + t.Name() + ", the schema " + prop.Ref
		}
	default:
		return "the Go kind " + t.Kind().String() + " has no JSON type here"
	}
	return ""
}

// Every exported struct type of the package is a schema's, or a group of
// one: a type added without its schema fails here rather than going
// unchecked.
func TestEveryTypeHasItsSchema(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				if ts := spec.(*ast.TypeSpec); ts.Name.IsExported() {
					found = append(found, ts.Name.Name)
				}
			}
		}
	}
	want := slices.Concat(slices.Collect(maps.Keys(schemas)), groups)
	if slices.Sort(found); !slices.Equal(found, slices.Sorted(slices.Values(want))) {
		t.Fatalf("the package declares %v; the test knows %v", found, slices.Sorted(slices.Values(want)))
	}
}

// The bytes the server writes: properties in the order of the types,
// null for an empty nullable value, a source's group present or absent as
// a whole, timestamps in UTC with their fraction, and the encoder's HTML
// escaping.
func TestEncoding(t *testing.T) {
	at := time.Date(2026, 8, 14, 11, 21, 7, 482000000, time.FixedZone("CEST", 2*3600))
	comment := "Unclear <b>."
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"active job", wire.Job{ID: "job_1", Status: "active", Source: wire.JobSource{Repository: "acme/docs", Ref: wire.NullString("docs-agent/job_1")},
			Model: "claude", PRLink: wire.NullString(""), CreatedAt: wire.Time(at), ArchivedAt: wire.NullTime(time.Time{})},
			`{"id":"job_1","status":"active","source":{"repository":"acme/docs","ref":"docs-agent/job_1"},"model":"claude","prLink":null,"createdAt":"2026-08-14T09:21:07.482Z","archivedAt":null}`},
		{"archived job", wire.Job{ID: "job_2", Status: "archived", Source: wire.JobSource{Repository: "acme/docs"},
			Model: "claude", PRLink: wire.NullString("https://git.example.com/pr/1?a&b"), CreatedAt: wire.Time(at.Add(-time.Hour)), ArchivedAt: wire.NullTime(at.Truncate(time.Second))},
			`{"id":"job_2","status":"archived","source":{"repository":"acme/docs","ref":null},"model":"claude","prLink":"https://git.example.com/pr/1?a\u0026b","createdAt":"2026-08-14T08:21:07.482Z","archivedAt":"2026-08-14T09:21:07Z"}`},
		{"jobs page", wire.JobsPage{Jobs: []wire.Job{}, NextCursor: wire.NullString("")},
			`{"jobs":[],"nextCursor":null,"hasMore":false}`},
		{"views page", wire.ViewsPage{Totals: wire.ViewCounts{Human: 3, AI: 1 << 53, Total: 1<<53 + 3}, Views: []wire.PageView{{Path: "/a", Human: 3, AI: 1 << 53, Total: 1<<53 + 3}}, HasMore: true},
			`{"totals":{"human":3,"ai":9007199254740992,"total":9007199254740995},"views":[{"path":"/a","human":3,"ai":9007199254740992,"total":9007199254740995}],"hasMore":true}`},
		{"visitors page", wire.VisitorsPage{Visitors: []wire.PageVisitors{}},
			`{"totals":{"human":0,"ai":0,"total":0},"visitors":[],"hasMore":false}`},
		{"series", wire.ViewsSeries{Interval: "hour", DateFrom: wire.Time(at.Truncate(time.Hour)), DateTo: wire.Time(at.Truncate(time.Hour).Add(time.Hour)),
			Points: []wire.ViewsPoint{{At: wire.Time(at.Truncate(time.Hour)), Human: 1, AI: 2, Bots: 4, Total: 3}}},
			`{"interval":"hour","dateFrom":"2026-08-14T09:00:00Z","dateTo":"2026-08-14T10:00:00Z","path":null,"points":[{"at":"2026-08-14T09:00:00Z","human":1,"ai":2,"bots":4,"total":3}]}`},
		{"feedback page", wire.FeedbackPage{Feedback: []wire.FeedbackEntry{
			{ID: "a", Path: "/a", CreatedAt: wire.NullTime(at), Source: "thumbs_only", Status: "pending", Vote: &wire.Vote{Helpful: true}},
			{ID: "b", Path: "/b", Comment: &comment, CreatedAt: wire.NullTime(at), Source: "contextual", Status: "resolved",
				Vote: &wire.Vote{}, Contextual: &wire.Contextual{Contact: wire.NullString("")}},
			{ID: "d", Path: "/d", CreatedAt: wire.NullTime(at), Source: "agent", Status: "pending"},
			{ID: "c", Path: "/c", Comment: new(string), CreatedAt: wire.NullTime(at), Source: "code_snippet", Status: "dismissed",
				CodeSnippet: &wire.CodeSnippet{Code: "x := 1", Filename: wire.NullString("main.go"), Lang: wire.NullString("")}},
		}, NextCursor: wire.NullString("c1"), HasMore: true},
			`{"feedback":[` +
				`{"id":"a","path":"/a","comment":null,"createdAt":"2026-08-14T09:21:07.482Z","source":"thumbs_only","status":"pending","helpful":true},` +
				`{"id":"b","path":"/b","comment":"Unclear \u003cb\u003e.","createdAt":"2026-08-14T09:21:07.482Z","source":"contextual","status":"resolved","helpful":false,"contact":null},` +
				`{"id":"d","path":"/d","comment":null,"createdAt":"2026-08-14T09:21:07.482Z","source":"agent","status":"pending"},` +
				`{"id":"c","path":"/c","comment":"","createdAt":"2026-08-14T09:21:07.482Z","source":"code_snippet","status":"dismissed","code":"x := 1","filename":"main.go","lang":null}` +
				`],"nextCursor":"c1","hasMore":true}`},
		{"feedback by page", wire.FeedbackByPage{Feedback: []wire.PageFeedback{{Path: "/a", ThumbsUp: 1, ThumbsDown: 2, Code: 3, Total: 7}}},
			`{"feedback":[{"path":"/a","thumbsUp":1,"thumbsDown":2,"code":3,"total":7}],"hasMore":false}`},
		{"searches page", wire.SearchesPage{Searches: []wire.Search{
			{SearchQuery: "install", Hits: 3, CTR: 2.0 / 3, TopClickedPage: wire.NullString("/guide"), LastSearchedAt: wire.Time(at)},
			{SearchQuery: "tls", Hits: 1, LastSearchedAt: wire.Time(at)},
		}, TotalSearches: 4},
			`{"searches":[{"searchQuery":"install","hits":3,"ctr":0.6666666666666666,"topClickedPage":"/guide","lastSearchedAt":"2026-08-14T09:21:07.482Z"},` +
				`{"searchQuery":"tls","hits":1,"ctr":0,"topClickedPage":null,"lastSearchedAt":"2026-08-14T09:21:07.482Z"}],"totalSearches":4,"nextCursor":null}`},
		{"assistant page", wire.AssistantConversationsPage{Conversations: []wire.AssistantConversation{
			{ID: "01K2M0000000000000000000AB", Timestamp: wire.Time(at), Query: "How <do> I?", Response: "Like this.", ResponseType: "answer",
				Sources: []wire.AssistantSource{{Title: "Install", URL: "/guide/install"}}, ResolutionStatus: "answered", PageURL: wire.NullString("/guide")},
			{ID: "01K2M0000000000000000000AC", Timestamp: wire.Time(at), Query: "Why?", Response: "", ResponseType: "answer",
				Sources: []wire.AssistantSource{}, ResolutionStatus: "unanswered", PageURL: wire.NullString("")},
		}, NextCursor: wire.NullString("01K2M0000000000000000000AC"), HasMore: true},
			`{"conversations":[{"id":"01K2M0000000000000000000AB","timestamp":"2026-08-14T09:21:07.482Z","query":"How \u003cdo\u003e I?","response":"Like this.","responseType":"answer",` +
				`"sources":[{"title":"Install","url":"/guide/install"}],"resolutionStatus":"answered","queryCategory":null,"pageUrl":"/guide"},` +
				`{"id":"01K2M0000000000000000000AC","timestamp":"2026-08-14T09:21:07.482Z","query":"Why?","response":"","responseType":"answer",` +
				`"sources":[],"resolutionStatus":"unanswered","queryCategory":null,"pageUrl":null}],"nextCursor":"01K2M0000000000000000000AC","hasMore":true}`},
		{"assistant thread", wire.AssistantThread{ThreadID: "T", CreatedAt: wire.Time(at), Messages: []wire.AssistantMessage{{ID: "q", Role: "user", Content: "Hi", CreatedAt: wire.Time(at)}}},
			`{"threadId":"T","createdAt":"2026-08-14T09:21:07.482Z","messages":[{"id":"q","role":"user","content":"Hi","createdAt":"2026-08-14T09:21:07.482Z"}]}`},
		{"caller stats", wire.AssistantCallerStats{Web: 2, API: 1, Total: 3}, `{"web":2,"api":1,"other":0,"total":3}`},
		{"error detail", wire.ErrorDetail{Message: "limit must be <= 100"}, `{"message":"limit must be \u003c= 100"}`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
