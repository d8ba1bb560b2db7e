package openapitest

import (
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/internal/assistantauth"
)

// The scheme of the /discovery endpoints is the hosted Assistant API's: an
// HTTP bearer whose keys have the prefix the server generates.
func TestDocumentAssistantKeyScheme(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	ref := doc.Components.SecuritySchemes["assistantKey"]
	if ref == nil {
		t.Fatal("no security scheme assistantKey")
	}
	s := ref.Value
	if s.Type != "http" || s.Scheme != "bearer" || s.BearerFormat != assistantauth.Prefix+"..." {
		t.Errorf("assistantKey: type %q, scheme %q, bearerFormat %q; want an HTTP bearer of %s...", s.Type, s.Scheme, s.BearerFormat, assistantauth.Prefix)
	}
	for _, want := range []string{"`Origin`", `{"message": string}`, "401", "403", "429"} {
		if !strings.Contains(s.Description, want) {
			t.Errorf("assistantKey's description does not say %s", want)
		}
	}
}

// discoveryOperations are the /discovery operations and their statuses.
var discoveryOperations = map[string][]string{
	"POST /discovery/v1/search/{domain}":               {"200", "400", "401", "403", "413", "429", "500", "503"},
	"POST /discovery/v1/page/{domain}":                 {"200", "400", "401", "403", "404", "413", "429", "500", "503"},
	"OPTIONS /discovery/v1/search/{domain}":            {"204", "403", "429", "500", "503"},
	"OPTIONS /discovery/v1/page/{domain}":              {"204", "403", "429", "500", "503"},
	"POST /discovery/v2/assistant/{domain}/message":    {"200", "400", "401", "403", "404", "413", "429", "500", "503"},
	"OPTIONS /discovery/v2/assistant/{domain}/message": {"204", "403", "429", "500", "503"},
}

// The /discovery operations are the hosted discovery-openapi.json's: under
// the assistant key alone, the bodies' required fields and bounds as it
// states them, and no object closed (the hosted document closes none, so
// a client may send fields it does not list).
func TestDocumentDiscoveryOperations(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, schema string
		required     []string
	}{
		{"/discovery/v1/search/{domain}", "DiscoverySearchRequest", []string{"query"}},
		{"/discovery/v1/page/{domain}", "DiscoveryPageRequest", []string{"path"}},
		{"/discovery/v2/assistant/{domain}/message", "AssistantMessageRequest", []string{"fp", "messages"}},
	} {
		item := doc.Paths.Value(tc.path)
		if item == nil || item.Post == nil || item.Options == nil {
			t.Errorf("%s: want POST and OPTIONS", tc.path)
			continue
		}
		op := item.Post
		if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0]["assistantKey"] == nil || len((*op.Security)[0]) != 1 {
			t.Errorf("POST %s: security %v, want assistantKey alone", tc.path, op.Security)
		}
		if op.Extensions["x-self-hosted"] != nil {
			t.Errorf("POST %s is the hosted API's, not marked x-self-hosted", tc.path)
		}
		schema := op.RequestBody.Value.Content["application/json"].Schema
		if schema.Ref != "#/components/schemas/"+tc.schema || strings.Join(schema.Value.Required, ",") != strings.Join(tc.required, ",") {
			t.Errorf("POST %s: body %s requiring %v, want %s requiring %v", tc.path, schema.Ref, schema.Value.Required, tc.schema, tc.required)
		}
		if ap := schema.Value.AdditionalProperties; ap.Has != nil && !*ap.Has {
			t.Errorf("%s is closed; the hosted document closes no body", tc.schema)
		}
	}
	body := doc.Components.Schemas["DiscoverySearchRequest"].Value.Properties
	size := body["pageSize"].Value
	if size.Min == nil || *size.Min != 1 || size.Max == nil || *size.Max != 50 || size.Default != float64(10) {
		t.Errorf("pageSize: min %v, max %v, default %v; want 1, 50, 10", size.Min, size.Max, size.Default)
	}
	threshold := body["scoreThreshold"].Value
	if threshold.Min == nil || *threshold.Min != 0 || threshold.Max == nil || *threshold.Max != 1 {
		t.Errorf("scoreThreshold: min %v, max %v; want 0 and 1", threshold.Min, threshold.Max)
	}
	for _, f := range []string{"version", "language", "tag", "groups"} {
		if body["filter"].Value.Properties[f] == nil {
			t.Errorf("filter has no %s", f)
		}
	}
	if doc.Paths.Value("/discovery/v1/page/{domain}").Post.Responses.Value("404") == nil {
		t.Errorf("the page endpoint documents no 404")
	}
}
