package pushonly

import (
	"context"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
)

func TestEnsureOpensNothing(t *testing.T) {
	var prs engine.PullRequests = Host{}
	url, err := prs.Ensure(context.Background(), engine.PullRequestSpec{
		Repository: "ssh://git@git.example.com/srv/git/docs.git",
		Branch:     "docsapi/job_123",
		Title:      "Docs: update",
	})
	if url != "" || err != nil {
		t.Errorf("Ensure = %q, %v; want \"\", nil", url, err)
	}
}
