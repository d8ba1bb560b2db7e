package github

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

func TestConformance(t *testing.T) {
	reset := fmt.Sprint(time.Now().Add(time.Hour).Unix())
	hosttest.Run(t, func(t *testing.T) hosttest.Fake { return newFakeGitHub(t) },
		// GitHub answers its rate limits with 403 too; they pass.
		hosttest.Failure{Name: "403 rate limit", Answer: hosttest.Answer{Op: hosttest.List, Status: 403,
			Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {reset}},
			Body:   map[string]any{"message": "API rate limit exceeded for user ID 424242.", "status": "403"}}},
		hosttest.Failure{Name: "429 secondary rate limit", Answer: hosttest.Answer{Op: hosttest.Create, Status: 429,
			Header: http.Header{"Retry-After": {"60"}},
			Body: map[string]any{"message": "You have exceeded a secondary rate limit.",
				"documentation_url": "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"}}},
		// A refused create says why.
		hosttest.Failure{Name: "422 validation", Permanent: true, Mention: "No commits between", Answer: hosttest.Answer{Op: hosttest.Create, Status: 422,
			Body: map[string]any{"message": "Validation Failed", "status": "422",
				"errors": []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "No commits between main and docsapi/job_123"}}}}},
	)
}
