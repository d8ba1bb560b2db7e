package openapitest

import (
	"slices"
	"strings"
	"testing"
)

// The operations operators read (issue #17: the job list, the views over
// time), with their statuses, for TestDocumentOperationsAndStatuses.
var operatorOperations = map[string][]string{
	"GET /v2/agent/{projectId}/jobs":             {"200", "400", "401", "403", "404", "429", "500"},
	"GET /v1/analytics/{projectId}/views/series": {"200", "400", "401", "403", "404", "429", "500"},
	"GET /v1/analytics/{projectId}/agents":       {"200", "400", "401", "403", "404", "429", "500"},
}

// hostedParameters are the parameters of the hosted contract that
// operator additions reuse unchanged, and so are not marked self-hosted.
var hostedParameters = []string{
	"#/components/parameters/DateFrom", "#/components/parameters/DateTo", "#/components/parameters/Cursor",
	"#/components/parameters/Limit", "#/components/parameters/Offset",
}

// TestDocumentOperatorAdditions checks that the job list and the views
// series are marked as self-hosted additions, as are their parameters and
// schemas, and that their pages require what the server always sends.
func TestDocumentOperatorAdditions(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for op := range operatorOperations {
		method, path, _ := strings.Cut(op, " ")
		o := doc.Paths.Value(path).GetOperation(method)
		requireSelfHosted(t, op, o.Extensions, o.Description)
		for _, p := range o.Parameters {
			if p.Value.In == "query" && !slices.Contains(hostedParameters, p.Ref) {
				requireSelfHosted(t, op+" "+p.Value.Name, p.Value.Extensions, p.Value.Description)
			}
		}
	}
	schemas := doc.Components.Schemas
	for name, want := range map[string][]string{
		"JobsPage":    {"jobs", "nextCursor", "hasMore"},
		"ViewsSeries": {"interval", "dateFrom", "dateTo", "path", "points"},
		"ViewsPoint":  {"at", "human", "ai", "total", "bots"},
		"AgentsPage":  {"dateFrom", "dateTo", "path", "class", "agents", "pages", "hasMore"},
		"AgentViews":  {"name", "class", "views"},
		"AgentPage":   {"path", "name", "class", "views"},
	} {
		s := schemas[name].Value
		requireSelfHosted(t, name, s.Extensions, s.Description)
		if !slices.Equal(s.Required, want) {
			t.Errorf("%s requires %v, want %v", name, s.Required, want)
		}
	}
	limit := doc.Components.Parameters["JobsLimit"].Value.Schema.Value
	if *limit.Min != 1 || *limit.Max != 100 || limit.Default != 50.0 {
		t.Errorf("the job list's limit: min %v max %v default %v, want 1, 100, 50", *limit.Min, *limit.Max, limit.Default)
	}
}
