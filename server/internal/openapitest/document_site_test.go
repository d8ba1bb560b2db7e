package openapitest

import (
	"slices"
	"testing"
)

// The operations of readers' feedback and searches (CONTRACT.md D, and the
// self-hosted site endpoints), with their statuses, for
// TestDocumentOperationsAndStatuses.
var feedbackSearchesOperations = map[string][]string{
	"GET /v1/analytics/{projectId}/feedback":                     {"200", "400", "401", "403", "404", "429", "500"},
	"GET /v1/analytics/{projectId}/feedback/by-page":             {"200", "400", "401", "403", "404", "429", "500"},
	"PATCH /v1/analytics/{projectId}/feedback/{feedbackId}":      {"200", "400", "401", "403", "404", "413", "429", "500"},
	"GET /v1/analytics/{projectId}/searches":                     {"200", "400", "401", "403", "404", "429", "500"},
	"GET /v1/analytics/{projectId}/assistant":                    {"200", "400", "401", "403", "404", "429", "500"},
	"GET /v1/analytics/{projectId}/assistant/threads/{threadId}": {"200", "400", "401", "403", "404", "429", "500"},
	"GET /v1/analytics/{projectId}/assistant/caller-stats":       {"200", "400", "401", "403", "404", "429", "500"},
	"POST /v1/site/{projectId}/feedback":                         {"202", "400", "401", "403", "413", "429", "500", "503"},
	"OPTIONS /v1/site/{projectId}/feedback":                      {"204", "403", "429", "500", "503"},
	"POST /v1/site/{projectId}/searches":                         {"202", "400", "401", "403", "413", "429", "500", "503"},
	"OPTIONS /v1/site/{projectId}/searches":                      {"204", "403", "429", "500", "503"},
	"GET /v1/site/{projectId}/docsapi.js":                        {"200", "503"},
	"GET /v1/site/{projectId}/docsapi.css":                       {"200", "503"},
}

// openSiteOperations are the operations a request makes without any key,
// for TestDocumentSecurity: the preflights and the script. The site POSTs
// take a site token, not an admin key.
var openSiteOperations = map[string]bool{
	"OPTIONS /v1/site/{projectId}/feedback": true,
	"OPTIONS /v1/site/{projectId}/searches": true,
	"GET /v1/site/{projectId}/docsapi.js":   true,
	"GET /v1/site/{projectId}/docsapi.css":  true,
	// The /discovery endpoints' preflights carry no key (browsers send
	// none with a preflight).
	"OPTIONS /discovery/v1/search/{domain}":            true,
	"OPTIONS /discovery/v1/page/{domain}":              true,
	"OPTIONS /discovery/v2/assistant/{domain}/message": true,
}

// TestDocumentFeedbackAndSearches checks the document against CONTRACT.md
// D: the limits and defaults, the required fields, the cursors, and the
// site endpoints' own security and marks.
func TestDocumentFeedbackAndSearches(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	params := doc.Components.Parameters
	for name, want := range map[string][3]float64{
		"FeedbackLimit": {1, 100, 50}, "FeedbackByPageLimit": {1, 100, 10}, "SearchesLimit": {1, 100, 50}, "AssistantLimit": {1, 1000, 100},
	} {
		s := params[name].Value.Schema.Value
		if *s.Min != want[0] || *s.Max != want[1] || s.Default != want[2] {
			t.Errorf("%s: min %v max %v default %v, want %v", name, *s.Min, *s.Max, s.Default, want)
		}
	}
	schemas := doc.Components.Schemas
	for name, want := range map[string][]string{
		"FeedbackPage":   {"feedback", "nextCursor", "hasMore"},
		"FeedbackEntry":  {"id", "path", "comment", "createdAt", "source", "status"},
		"FeedbackByPage": {"feedback", "hasMore"},
		"PageFeedback":   {"path", "thumbsUp", "thumbsDown", "code", "total"},
		"SearchesPage":   {"searches", "totalSearches", "nextCursor"},
		"Search":         {"searchQuery", "hits", "ctr", "topClickedPage", "lastSearchedAt"},
	} {
		if got := schemas[name].Value.Required; !slices.Equal(got, want) {
			t.Errorf("%s requires %v, want %v", name, got, want)
		}
	}
	entry := schemas["FeedbackEntry"].Value.Properties
	for _, f := range []string{"comment", "createdAt", "contact", "filename", "lang"} {
		if !entry[f].Value.Nullable {
			t.Errorf("FeedbackEntry.%s is not nullable", f)
		}
	}
	for _, f := range []string{"nextCursor"} {
		for _, page := range []string{"FeedbackPage", "SearchesPage"} {
			if !schemas[page].Value.Properties[f].Value.Nullable {
				t.Errorf("%s.%s is not nullable", page, f)
			}
		}
	}
	if got := schemas["FeedbackSource"].Value.Enum; len(got) != 4 {
		t.Errorf("FeedbackSource enum = %v, want the four documented sources", got)
	}
	if got := schemas["FeedbackStatus"].Value.Enum; len(got) != 4 {
		t.Errorf("FeedbackStatus enum = %v, want the four documented statuses", got)
	}
	for _, path := range []string{"/v1/site/{projectId}/feedback", "/v1/site/{projectId}/searches"} {
		post := doc.Paths.Value(path).Post
		requireSelfHosted(t, "POST "+path, post.Extensions, post.Description)
		if post.Security == nil || len(*post.Security) != 2 || (*post.Security)[0]["siteTokenHeader"] == nil || (*post.Security)[1]["siteTokenQuery"] == nil {
			t.Errorf("POST %s: security %v, want the site token by header or by query", path, post.Security)
		}
	}
	patch := doc.Paths.Value("/v1/analytics/{projectId}/feedback/{feedbackId}").Patch
	requireSelfHosted(t, "PATCH feedback", patch.Extensions, patch.Description)
	for _, name := range []string{"siteTokenHeader", "siteTokenQuery"} {
		s := doc.Components.SecuritySchemes[name].Value
		requireSelfHosted(t, name, s.Extensions, s.Description)
	}
}
