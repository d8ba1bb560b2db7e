package pushonly_test

import (
	"context"
	"fmt"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/pushonly"
)

// A project on a plain git remote: the job's branch is pushed and the job
// completes without a pull request.
func Example() {
	parts := engine.Parts{PullRequests: pushonly.Host{}}
	url, err := parts.PullRequests.Ensure(context.Background(), engine.PullRequestSpec{
		Repository: "git@git.example.com:docs.git",
		Branch:     "docsapi/job_123",
		Title:      "Docs: update",
	})
	fmt.Printf("%q %v\n", url, err)
	// Output: "" <nil>
}
