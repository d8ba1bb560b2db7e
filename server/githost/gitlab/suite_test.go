package gitlab

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

func TestConformance(t *testing.T) {
	hosttest.Run(t, func(t *testing.T) hosttest.Fake { return newFakeGitLab(t, "") },
		// A refused create says why, in GitLab's list of messages.
		hosttest.Failure{Name: "422 refused", Permanent: true, Mention: "Source branch does not exist", Answer: hosttest.Answer{Op: hosttest.Create, Status: 422,
			Body: map[string]any{"message": []any{"Source branch does not exist"}}}},
		// A conflict that is not "already exists" passes.
		hosttest.Failure{Name: "409 other conflict", Mention: "409", Answer: hosttest.Answer{Op: hosttest.Create, Status: 409,
			Body: map[string]any{"message": "Resource lock"}}},
	)
}
