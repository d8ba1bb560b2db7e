package openapitest

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// These tests read the published document (without the validator's
// self-hosted rules) and check it says what CONTRACT.md says, so that a
// change to the YAML that drifts from the contract fails here.

func TestDocumentOperationsAndStatuses(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"POST /v2/agent/{projectId}/job":              {"201", "400", "401", "403", "404", "409", "413", "429", "500", "503"},
		"GET /v2/agent/{projectId}/job/{id}":          {"200", "401", "403", "404", "429", "500"},
		"POST /v2/agent/{projectId}/job/{id}/message": {"200", "400", "401", "403", "404", "409", "413", "429", "500", "503"},
		"POST /v2/agent/{projectId}/job/{id}/archive": {"200", "401", "403", "404", "429", "500"},
		"GET /v1/analytics/{projectId}/views":         {"200", "400", "401", "403", "404", "429", "500"},
		"POST /v1/analytics/{projectId}/views":        {"202", "400", "401", "403", "404", "413", "429", "500", "503"},
		"GET /v1/analytics/{projectId}/visitors":      {"200", "400", "401", "403", "404", "429", "500"},
		"GET /healthz":                                {"200", "503"},
		"POST /v1/project/update/{projectId}":         {"202", "401", "403", "404", "429", "500"},
		"GET /v1/project/update-status/{statusId}":    {"200", "401", "403", "404", "429", "500"},
		"GET /openapi.yaml":                           {"200", "503"},
	}
	maps.Copy(want, feedbackSearchesOperations)
	maps.Copy(want, operatorOperations)
	maps.Copy(want, discoveryOperations)
	got := map[string][]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			var statuses []string
			for status := range op.Responses.Map() {
				statuses = append(statuses, status)
			}
			sort.Strings(statuses)
			got[method+" "+path] = statuses
		}
	}
	for op, statuses := range want {
		if !slices.Equal(got[op], statuses) {
			t.Errorf("%s: statuses %v, want %v", op, got[op], statuses)
		}
	}
	for op := range got {
		if _, ok := want[op]; !ok {
			t.Errorf("%s is documented but not expected by this test", op)
		}
	}
}

func TestDocumentResponses(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, ref := range op.Responses.Map() {
				where := method + " " + path + " " + status
				r := ref.Value
				if r.Headers["X-Request-Id"] == nil {
					t.Errorf("%s: no X-Request-Id header", where)
				}
				// The ingestion endpoint's 503 (its queue is full) and those
				// of the public endpoints (busy) say when to retry too.
				public := strings.HasPrefix(path, "/v1/site/") || strings.HasPrefix(path, "/discovery/") || path == "/openapi.yaml"
				retry := status == "429" || status == "503" && (where == "POST /v1/analytics/{projectId}/views 503" || public)
				if retry != (r.Headers["Retry-After"] != nil) {
					t.Errorf("%s: Retry-After is documented on exactly the 429 answers and the 503 of the ingestion and of the endpoints without a key; headers %v", where, keys(r.Headers))
				}
				wantType := "application/json"
				switch {
				case path == "/openapi.yaml" && status == "200":
					wantType = "application/yaml"
				case strings.HasSuffix(path, ".js") && status == "200":
					wantType = "text/javascript"
				case strings.HasSuffix(path, ".css") && status == "200":
					wantType = "text/css"
				case path == "/discovery/v2/assistant/{domain}/message" && status == "200":
					wantType = "text/event-stream"
				case status == "204":
					if len(r.Content) != 0 {
						t.Errorf("%s: content types %v, want none", where, keys(r.Content))
					}
					continue
				}
				if len(r.Content) != 1 || r.Content[wantType] == nil || r.Content[wantType].Schema == nil {
					t.Errorf("%s: content types %v, want only %s with a schema", where, keys(r.Content), wantType)
				}
				if status == "409" || status == "413" || status == "503" && path != "/healthz" {
					requireSelfHosted(t, where, r.Extensions, *r.Description)
				}
			}
		}
	}
	for _, op := range []string{"200 GET /v2/agent/{projectId}/job/{id}", "201 POST /v2/agent/{projectId}/job", "200 GET /v1/analytics/{projectId}/views"} {
		status, rest, _ := strings.Cut(op, " ")
		method, path, _ := strings.Cut(rest, " ")
		mt := doc.Paths.Value(path).GetOperation(method).Responses.Value(status).Value.Content["application/json"]
		if len(mt.Examples) == 0 && mt.Example == nil {
			t.Errorf("%s: no example", op)
		}
	}
}

func TestDocumentSecurity(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	scheme := doc.Components.SecuritySchemes["adminKey"]
	if scheme == nil || scheme.Value.Type != "http" || scheme.Value.Scheme != "bearer" {
		t.Fatalf("no HTTP bearer scheme named adminKey: %+v", scheme)
	}
	if len(doc.Security) != 1 || doc.Security[0]["adminKey"] == nil {
		t.Errorf("the document-wide security is %v, want adminKey", doc.Security)
	}
	open := map[string]bool{"GET /healthz": true, "GET /openapi.yaml": true}
	maps.Copy(open, openSiteOperations)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			public := op.Security != nil && len(*op.Security) == 0
			if public != open[method+" "+path] {
				t.Errorf("%s %s: open without a key = %v, want %v", method, path, public, open[method+" "+path])
			}
			if open[method+" "+path] {
				requireSelfHosted(t, method+" "+path, op.Extensions, op.Description)
			}
		}
	}
}

func TestDocumentSelfHostedAdditions(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	key := doc.Components.Parameters["IdempotencyKey"].Value
	if key.Name != "Idempotency-Key" || key.In != "header" || key.Required {
		t.Errorf("Idempotency-Key parameter: %+v", key)
	}
	requireSelfHosted(t, "Idempotency-Key", key.Extensions, key.Description)
	for _, op := range []*openapi3.Operation{
		doc.Paths.Value("/v2/agent/{projectId}/job").Post,
		doc.Paths.Value("/v2/agent/{projectId}/job/{id}/message").Post,
	} {
		found := false
		for _, p := range op.Parameters {
			found = found || p.Value == key
		}
		if !found {
			t.Errorf("%s does not take Idempotency-Key", op.OperationID)
		}
	}
	for _, name := range []string{"X-Request-Id", "Retry-After"} {
		h := doc.Components.Headers[name].Value
		requireSelfHosted(t, name, h.Extensions, h.Description)
	}
	prompt := doc.Components.Schemas["PromptRequest"].Value
	p := prompt.Properties["prompt"].Value
	// Other fields are ignored, as a hosted client may send some.
	if !slices.Equal(prompt.Required, []string{"prompt"}) || prompt.AdditionalProperties.Has == nil || !*prompt.AdditionalProperties.Has ||
		p.MinLength != 1 || p.MaxLength == nil || *p.MaxLength != 32000 {
		t.Errorf("PromptRequest: want prompt required, minLength 1, maxLength 32000, other fields allowed")
	}
}

func TestDocumentSchemasFollowTheContract(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	// CONTRACT.md B: the hosted service marks no job field required.
	for _, name := range []string{"Job", "JobSource"} {
		if r := schemas[name].Value.Required; len(r) != 0 {
			t.Errorf("%s marks %v required; the contract marks none", name, r)
		}
	}
	if got := schemas["JobStatus"].Value.Enum; len(got) != 4 {
		t.Errorf("JobStatus enum = %v, want the four documented statuses", got)
	}
	job := schemas["Job"].Value.Properties
	for _, f := range []string{"prLink", "archivedAt"} {
		if !job[f].Value.Nullable {
			t.Errorf("Job.%s is not nullable", f)
		}
	}
	if !schemas["JobSource"].Value.Properties["ref"].Value.Nullable {
		t.Error("JobSource.ref is not nullable")
	}
	// The hosted service always names the model that ran; so does the
	// server, which the validator checks in every job it sees.
	if m := job["model"].Value; m.MinLength != 1 || m.Nullable {
		t.Errorf("Job.model: minLength %d, nullable %v; want a string of at least 1 character", m.MinLength, m.Nullable)
	}
	if r := schemas["ViewsPage"].Value.Required; !slices.Equal(r, []string{"totals", "views", "hasMore"}) {
		t.Errorf("ViewsPage requires %v", r)
	}
	for _, name := range []string{"Error", "AnalyticsError"} {
		if r := schemas[name].Value.Required; !slices.Equal(r, []string{"error"}) {
			t.Errorf("%s requires %v, want only error", name, r)
		}
	}
	limit := doc.Components.Parameters["Limit"].Value.Schema.Value
	if *limit.Min != 1 || *limit.Max != 250 || limit.Default != 50.0 {
		t.Errorf("limit: min %v max %v default %v", *limit.Min, *limit.Max, limit.Default)
	}
	if !strings.Contains(doc.Components.Parameters["DateTo"].Value.Description, "exclusive") {
		t.Error("dateTo does not say it is exclusive")
	}
}

// TestSelfHostedGuarantees checks that the validator's document is stricter
// than the published one exactly where the document says, and that a
// malformed mark is refused rather than ignored.
func TestSelfHostedGuarantees(t *testing.T) {
	v := New(t)
	if r := v.doc.Components.Schemas["Job"].Value.Required; len(r) != 7 {
		t.Errorf("Job requires %v in the validator, want all seven fields", r)
	}
	if !v.doc.Components.Headers["X-Request-Id"].Value.Required {
		t.Error("X-Request-Id is not required by the validator")
	}

	schemaWith := func(ext any) *openapi3.T {
		s := openapi3.NewObjectSchema().WithProperty("a", openapi3.NewStringSchema())
		s.Extensions = map[string]any{extRequired: ext}
		return &openapi3.T{Components: &openapi3.Components{Schemas: openapi3.Schemas{"S": {Value: s}}}}
	}
	for _, bad := range []any{"a", []any{"a", 1}, []any{"b"}} {
		if err := applySelfHostedGuarantees(schemaWith(bad)); err == nil {
			t.Errorf("%s = %#v was accepted", extRequired, bad)
		}
	}
	doc := schemaWith([]any{"a", "a"})
	if err := applySelfHostedGuarantees(doc); err != nil {
		t.Fatal(err)
	}
	if r := doc.Components.Schemas["S"].Value.Required; !slices.Equal(r, []string{"a"}) {
		t.Errorf("required = %v, want [a] once", r)
	}
	header := &openapi3.T{Components: &openapi3.Components{Headers: openapi3.Headers{"H": {Value: &openapi3.Header{
		Parameter: openapi3.Parameter{Extensions: map[string]any{extRequired: "yes"}},
	}}}}}
	if err := applySelfHostedGuarantees(header); err == nil {
		t.Error("a header with a non-boolean mark was accepted")
	}
}

func TestHelpers(t *testing.T) {
	for _, c := range []struct {
		path, rest string
		ok         bool
	}{
		{"/api/v2/x", "/v2/x", true},
		{"/api", "", true},
		{"/apiary/v2", "", false},
		{"/v2/x", "", false},
	} {
		rest, ok := cutPrefix(c.path, "/api")
		if rest != c.rest || ok != c.ok {
			t.Errorf("cutPrefix(%q) = %q, %v; want %q, %v", c.path, rest, ok, c.rest, c.ok)
		}
	}
	for _, s := range []string{"https://github.com/acme/docs/pull/1", "http://gitlab.local/a/-/merge_requests/2"} {
		if err := validateURI(s); err != nil {
			t.Errorf("validateURI(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", "github.com/acme/docs/pull/1", "ftp://host/x", "https://", "::"} {
		if err := validateURI(s); err == nil {
			t.Errorf("validateURI(%q) accepted it", s)
		}
	}
	long := strings.Repeat("é", 400) // 800 bytes, cut inside no rune
	if got := excerpt([]byte(long)); !strings.HasSuffix(got, "(800 bytes in all)") || !strings.HasPrefix(got, strings.Repeat("é", 256)+"...") {
		t.Errorf("excerpt = %q", got)
	}
	if got := excerpt([]byte("short")); got != "short" {
		t.Errorf("excerpt(short) = %q", got)
	}
}

func requireSelfHosted(t *testing.T, where string, ext map[string]any, description string) {
	t.Helper()
	if ext["x-self-hosted"] != true {
		t.Errorf("%s: not marked x-self-hosted: true", where)
	}
	if !strings.Contains(description, "Self-hosted addition") {
		t.Errorf("%s: the description does not say it is a self-hosted addition", where)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
