package api

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func loadAndValidate(t *testing.T, data []byte) (*openapi3.T, error) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background(), openapi3.EnableExamplesValidation())
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, err := loadAndValidate(t, OpenAPI())
	if err != nil {
		t.Fatalf("the embedded document does not validate: %v", err)
	}
	// The hosted service publishes OpenAPI 3.0.x; 3.1 would change how
	// nullable is written and break tools that read the hosted documents.
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		t.Errorf("openapi = %q, want 3.0.x", doc.OpenAPI)
	}
	if len(doc.Servers) == 0 || doc.Servers[0].URL != "https://api.mintlify.com" {
		t.Errorf("first server is not the hosted service: %+v", doc.Servers)
	}
	for _, path := range []string{
		"/v2/agent/{projectId}/job",
		"/v2/agent/{projectId}/job/{id}",
		"/v2/agent/{projectId}/job/{id}/message",
		"/v1/analytics/{projectId}/views",
		"/healthz",
		"/openapi.yaml",
	} {
		if doc.Paths.Value(path) == nil {
			t.Errorf("path %s is missing", path)
		}
	}
}

// TestOpenAPIExamplesAreValidated proves that the validation above would
// catch an example that contradicts its schema, so a passing run means the
// examples are right rather than unchecked.
func TestOpenAPIExamplesAreValidated(t *testing.T) {
	data := OpenAPI()
	const good, bad = "            ai: 10\n", "            ai: ten\n"
	if bytes.Count(data, []byte(good)) != 1 {
		t.Fatalf("the document no longer has exactly one %q to break; update this test", strings.TrimSpace(good))
	}
	broken := bytes.Replace(data, []byte(good), []byte(bad), 1)
	if _, err := loadAndValidate(t, broken); err == nil {
		t.Error("a views example with a string count validated; examples are not being checked")
	}
}

func TestOpenAPIReturnsACopy(t *testing.T) {
	first := OpenAPI()
	if len(first) == 0 {
		t.Fatal("OpenAPI() is empty")
	}
	want := string(first)
	for i := range first {
		first[i] = 'x'
	}
	if got := string(OpenAPI()); got != want {
		t.Error("changing the returned slice changed the document returned later")
	}
	if a, b := OpenAPI(), OpenAPI(); &a[0] == &b[0] {
		t.Error("two calls share one backing array")
	}
}
