package pageviews

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// visitorFlush writes the visitors of one Flush: each batch's right after
// its views were written, then those kept by earlier flushes. What is not
// written is kept pending (flushMu is held throughout).
type visitorFlush struct {
	r     *Recorder
	ctx   context.Context
	batch []store.VisitorCount
	keys  []key
	// failed holds the counts of batches AddVisitors refused, and those
	// whose views were not written, to keep.
	failed   []store.VisitorCount
	firstErr error
}

func (r *Recorder) newVisitorFlush(ctx context.Context) *visitorFlush {
	return &visitorFlush{r: r, ctx: ctx}
}

// take moves k's live sketches out of m (one of the maps a flush took) into
// the batch, if it has any.
func (vf *visitorFlush) take(k key, m map[key]*liveVisitors) {
	if v := m[k]; v != nil {
		delete(m, k)
		vf.add(k, v)
	}
}

// add encodes v, k's live sketches, into the batch. Their charge is given
// back: from now on they are bytes of the batch, then of the pending set
// (charged again there) or written.
func (vf *visitorFlush) add(k key, v *liveVisitors) {
	human, ai := v.encode()
	vf.r.visBytes.Add(-v.charged)
	if human == nil && ai == nil {
		return
	}
	vf.batch = append(vf.batch, store.VisitorCount{ProjectID: k.project, Path: k.path, Hour: time.Unix(k.hour, 0).UTC(), Human: human, AI: ai})
	vf.keys = append(vf.keys, k)
}

// write sends the batch; a refused batch is kept.
func (vf *visitorFlush) write() {
	if len(vf.batch) == 0 {
		return
	}
	if err := vf.r.visSink.AddVisitors(vf.ctx, vf.batch); err != nil {
		vf.fail(err)
		vf.failed = append(vf.failed, vf.batch...)
	}
	vf.batch, vf.keys = vf.batch[:0], vf.keys[:0]
}

func (vf *visitorFlush) fail(err error) {
	vf.r.stats.visitorFlushErrors.Add(1)
	if vf.firstErr == nil {
		vf.firstErr = err
	}
}

// keep moves what is in the batch, unwritten, and what failed into the
// pending sketches, folded past their bounds.
func (vf *visitorFlush) keep() {
	r := vf.r
	if r.visSink == nil {
		return
	}
	var folded int64
	for _, c := range append(vf.failed, vf.batch...) {
		k := key{project: c.ProjectID, path: c.Path, hour: c.Hour.Unix()}
		f, err := r.pendingVis.merge(k, c.Human, c.AI)
		if err != nil {
			// Sketches this process encoded: a bug, not the store's.
			r.cfg.Logger.ErrorContext(vf.ctx, "pageviews: cannot merge visitor sketches; these visitors are lost",
				slog.String("project", c.ProjectID), slog.String("path", c.Path), slog.Any("error", err))
			continue
		}
		if f {
			folded++
		}
	}
	r.pendingVis.seal()
	vf.failed, vf.batch, vf.keys = nil, vf.batch[:0], vf.keys[:0]
	if folded > 0 {
		r.stats.visitorsFolded.Add(folded)
		r.cfg.Logger.WarnContext(vf.ctx, "pageviews: too many pending visitor sketches while flushes fail; some were merged into the overflow path's",
			slog.Int64("sketches", folded), slog.Int("max_pending_keys", r.cfg.MaxPendingKeys), slog.Int64("max_visitor_bytes", r.cfg.MaxVisitorBytes))
	}
}

// writePending writes the pending sketches in batches, forgetting each
// batch written.
func (vf *visitorFlush) writePending() {
	r := vf.r
	if r.visSink == nil {
		return
	}
	var keys []key
	batch := make([]store.VisitorCount, 0, min(len(r.pendingVis.m), r.cfg.BatchSize))
	send := func() {
		if len(batch) == 0 {
			return
		}
		if err := r.visSink.AddVisitors(vf.ctx, batch); err != nil {
			vf.fail(err)
		} else {
			for _, k := range keys {
				r.pendingVis.remove(k)
			}
		}
		batch, keys = batch[:0], keys[:0]
	}
	for k, e := range r.pendingVis.m {
		batch = append(batch, store.VisitorCount{ProjectID: k.project, Path: k.path, Hour: time.Unix(k.hour, 0).UTC(), Human: e.human, AI: e.ai})
		keys = append(keys, k)
		if len(batch) == r.cfg.BatchSize {
			send()
		}
	}
	send()
}

// finish logs a failure to write visitors and returns it.
func (vf *visitorFlush) finish() error {
	if vf.firstErr == nil {
		return nil
	}
	vf.r.cfg.Logger.WarnContext(vf.ctx, "pageviews: writing visitors failed; their sketches are kept for the next flush",
		slog.Int("pending_sketches", len(vf.r.pendingVis.m)), slog.Any("error", vf.firstErr))
	return fmt.Errorf("pageviews: flush visitors: %w", vf.firstErr)
}
