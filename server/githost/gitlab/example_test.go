package gitlab_test

import (
	"log"
	"log/slog"
	"os"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/gitlab"
)

// A self-managed GitLab whose token the program reads from its environment
// (the library itself never does).
func ExampleNew() {
	mrs, err := gitlab.New(gitlab.Config{
		Token:   os.Getenv("GITLAB_TOKEN"),
		BaseURL: "https://gitlab.example.com/api/v4", // leave empty for GitLab.com
		Draft:   true,
		Logger:  slog.Default(),
	})
	if err != nil {
		log.Fatal(err)
	}
	// The engine calls Ensure once the job's branch is pushed.
	_ = engine.Parts{PullRequests: mrs}
}
