// Package pushonly is the pull-request host for repositories that have none:
// plain git remotes (a bare repository over SSH, a git daemon, a mirror) and
// projects whose changes are meant to land by a push alone.
//
// The engine always calls PullRequests.Ensure after it pushed a job's
// branch; with this host the job then completes with the branch pushed and
// its prLink null, which is what the hosted service reports for projects
// that push directly. Having a real, named host for that case keeps the
// engine free of a "no pull requests" special case and makes the choice
// explicit in a project's configuration instead of a nil that could also be
// a mistake.
package pushonly

import (
	"context"

	"github.com/docsapi/docsapi-go/server/engine"
)

// Host is an engine.PullRequests that opens nothing. Its zero value is ready
// to use and safe for concurrent use.
type Host struct{}

var _ engine.PullRequests = Host{}

// Ensure returns "" and nil: the branch is already pushed, and there is no
// pull request to open or to find. It does no I/O, so it has nothing to
// cancel and never fails.
func (Host) Ensure(context.Context, engine.PullRequestSpec) (string, error) {
	return "", nil
}
