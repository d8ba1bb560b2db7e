package server

import (
	"context"
	"time"

	"github.com/docsapi/docsapi-go/server/gaps"
	"github.com/docsapi/docsapi-go/server/store"
)

// dashGaps is what the dashboard reads and does of content gaps
// (dashboard.Gaps): what the API's gaps endpoints do.
type dashGaps struct{ s *Server }

// View reads gaps as GET /v1/gaps/{projectId} does.
func (g dashGaps) View(ctx context.Context, projectID string, from, to time.Time, limit int) (gaps.View, error) {
	return g.s.Gaps(ctx, projectID, from, to, limit)
}

// CreateJob makes a job from gaps as POST /v1/gaps/{projectId}/job does,
// with the form's idempotency key as its Idempotency-Key, the request
// hashed alike; a project this server cannot run is a problem of the
// request, as the API's 503 says.
func (g dashGaps) CreateJob(ctx context.Context, p store.Project, selected []gaps.Ref, instructions string, from, to time.Time, idempotencyKey string) (store.Job, []string, error) {
	if g.s.cfg.Runs != nil {
		if err := g.s.cfg.Runs(ctx, p); err != nil {
			return store.Job{}, []string{"this server cannot run jobs of project " + p.ID + ": " + err.Error()}, nil
		}
	}
	req := GapsJobRequest{Gaps: selected, Instructions: instructions, From: from, To: to}
	var idem *store.Idempotency
	if idempotencyKey != "" {
		idem = &store.Idempotency{Key: idempotencyKey, RequestHash: gapsRequestHash(p.ID, req)}
	}
	return g.s.CreateGapsJob(ctx, p, req, idem)
}

// JobGaps returns the gaps a job was made from (Server.JobGaps).
func (g dashGaps) JobGaps(ctx context.Context, projectID, jobID string) ([]gaps.Ref, error) {
	return g.s.JobGaps(ctx, projectID, jobID)
}

// MaxSelected is MaxSelectedGaps.
func (dashGaps) MaxSelected() int { return MaxSelectedGaps }
