package github_test

import (
	"context"
	"log"
	"log/slog"
	"os"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/github"
)

// A GitHub Enterprise Server host whose token the program reads from its
// environment (the library itself never does).
func ExampleNew() {
	prs, err := github.New(github.Config{
		Token:   os.Getenv("GITHUB_TOKEN"),
		BaseURL: "https://ghe.example.com/api/v3/", // leave empty for GitHub.com
		Draft:   true,
		Logger:  slog.Default(),
	})
	if err != nil {
		log.Fatal(err)
	}
	// The engine calls Ensure once the job's branch is pushed.
	_ = engine.Parts{PullRequests: prs}
}

// A token that must be renewed while the server runs, such as a GitHub App
// installation token, comes from a function called before every request.
func ExampleNew_tokenFunc() {
	var installationToken func(ctx context.Context) (string, error) // your token minter
	prs, err := github.New(github.Config{TokenFunc: installationToken})
	if err != nil {
		log.Fatal(err)
	}
	_ = prs
}
