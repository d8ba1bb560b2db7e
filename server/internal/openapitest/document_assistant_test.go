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
