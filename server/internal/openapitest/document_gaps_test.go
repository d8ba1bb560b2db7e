package openapitest

import (
	"slices"
	"strings"
	"testing"
)

// The content gaps' operations (issue #33), with their statuses, for
// TestDocumentOperationsAndStatuses.
var gapsOperations = map[string][]string{
	"GET /v1/gaps/{projectId}":      {"200", "400", "401", "403", "404", "429", "500"},
	"POST /v1/gaps/{projectId}/job": {"201", "400", "401", "403", "404", "409", "413", "429", "500", "503"},
}

// The gaps' operations, their own parameters and their schemas are marked
// as self-hosted additions, and the schemas require what the server
// always sends.
func TestDocumentGapsAdditions(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for op := range gapsOperations {
		method, path, _ := strings.Cut(op, " ")
		o := doc.Paths.Value(path).GetOperation(method)
		requireSelfHosted(t, op, o.Extensions, o.Description)
		for _, p := range o.Parameters {
			if p.Value.In == "query" && !slices.Contains(hostedParameters, p.Ref) {
				requireSelfHosted(t, op+" "+p.Value.Name, p.Value.Extensions, p.Value.Description)
			}
		}
	}
	for name, want := range map[string][]string{
		"GapsReport":     {"dateFrom", "dateTo", "groups", "truncated"},
		"GapGroup":       {"page", "topic", "score", "gaps"},
		"Gap":            {"kind", "key", "count", "lastSeen", "examples", "thumbsUp", "jobs", "retrieval"},
		"GapJob":         {"id", "status", "prLink", "linkedAt"},
		"GapRetrieval":   {"found", "path", "anchor", "heading", "score", "indexCommit", "indexUpdatedAt"},
		"GapsJobRequest": {"gaps"},
	} {
		s := doc.Components.Schemas[name].Value
		requireSelfHosted(t, name, s.Extensions, s.Description)
		if !slices.Equal(s.Required, want) {
			t.Errorf("%s requires %v, want %v", name, s.Required, want)
		}
	}
}
