package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/gaps"
	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/strictjson"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// Bounds of the gaps endpoints.
const (
	defaultGapGroups = 50
	maxGapGroups     = 200
	// GapsDefaultDays is the range the gaps endpoints read when none is
	// given: the UTC days up to and including today's.
	GapsDefaultDays = 30
	// MaxSelectedGaps bounds the gaps one job is made from.
	MaxSelectedGaps = 50
)

// GapsRange returns the range of whole UTC days the gaps endpoints read
// for dateFrom and dateTo (zero: not given) at now: the days they touch,
// an open side GapsDefaultDays from the other, or from tomorrow's
// midnight.
func GapsRange(from, to, now time.Time) (time.Time, time.Time) {
	from, to = dayRange(from, to)
	if to.IsZero() {
		to = now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		if !from.IsZero() && !to.After(from) {
			to = from
		}
	}
	if from.IsZero() {
		from = to.Add(-GapsDefaultDays * 24 * time.Hour)
	}
	return from, to
}

// Gaps returns the content gaps of a project's days [from, to) (see
// package gaps), the first limit groups, each gap with its linked jobs
// and, once the index was updated after one of them completed, what the
// index retrieves for it now. A job's change reaches the index only
// through an update after the job finished (its branch merged, then
// read), so an index older than every completed job cannot show it, and
// its answer would say the job did not help when it may have.
func (s *Server) Gaps(ctx context.Context, projectID string, from, to time.Time, limit int) (gaps.View, error) {
	in, err := gaps.Read(ctx, s.cfg.Store, projectID, from, to)
	if err != nil {
		return gaps.View{}, err
	}
	rep := gaps.Aggregate(in)
	view := gaps.View{From: from, To: to, Truncated: rep.Truncated}
	if len(rep.Groups) > limit {
		rep.Groups, view.More = rep.Groups[:limit], true
	}
	links, err := s.cfg.Store.GapLinks(ctx, projectID)
	if err != nil {
		return gaps.View{}, err
	}
	byGap := map[gaps.Ref][]store.GapLink{}
	for i := len(links) - 1; i >= 0; i-- { // the latest linked first
		l := links[i]
		ref := gaps.Ref{Kind: l.Kind, Key: l.Key}
		if len(byGap[ref]) < gaps.MaxJobsShown {
			byGap[ref] = append(byGap[ref], l)
		}
	}
	jobs := map[string]store.Job{}
	var index *store.DocsState
	for _, g := range rep.Groups {
		vg := gaps.ViewGroup{Page: g.Page, Topic: g.Topic, Score: g.Score}
		for _, gap := range g.Gaps {
			e := gaps.Entry{Gap: gap}
			// The earliest finish of the completed jobs shown: the index
			// must be newer than it. A completed job's UpdatedAt is its
			// finish, its last transition (a new prompt makes it active,
			// archiving archived).
			var finished time.Time
			for _, l := range byGap[gaps.RefOf(gap)] {
				job, seen := jobs[l.JobID]
				if !seen {
					if job, err = s.cfg.Store.Job(ctx, projectID, l.JobID); err != nil {
						return gaps.View{}, fmt.Errorf("job %s of gap %s %q: %w", l.JobID, l.Kind, l.Key, err)
					}
					jobs[l.JobID] = job
				}
				e.Jobs = append(e.Jobs, gaps.LinkedJob{ID: job.ID, Status: job.Status, PRLink: job.PRLink, LinkedAt: l.CreatedAt})
				if job.Status == store.JobStatusCompleted && (finished.IsZero() || job.UpdatedAt.Before(finished)) {
					finished = job.UpdatedAt
				}
			}
			if !finished.IsZero() && gap.Kind != store.GapPage {
				if index == nil {
					st, err := s.cfg.Store.DocsState(ctx, projectID)
					if err != nil {
						return gaps.View{}, err
					}
					index = &st
				}
				if index.Commit != "" && index.UpdatedAt.After(finished) {
					if e.Retrieval, err = s.retrieve(ctx, projectID, gap.Key, *index); err != nil {
						return gaps.View{}, err
					}
				}
			}
			vg.Gaps = append(vg.Gaps, e)
		}
		view.Groups = append(view.Groups, vg)
	}
	return view, nil
}

// retrieve asks the index, as it stands in index, for the best section
// for a gap's text, as the assistant's retrieval would.
func (s *Server) retrieve(ctx context.Context, projectID, text string, index store.DocsState) (*gaps.Retrieval, error) {
	r := &gaps.Retrieval{IndexCommit: index.Commit, IndexUpdatedAt: index.UpdatedAt}
	if len(store.DocQueryTerms(text)) == 0 {
		return r, nil
	}
	hits, err := s.cfg.Store.SearchDocs(ctx, store.DocsQuery{ProjectID: projectID, Query: text, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(hits) > 0 {
		r.Found, r.Hit = true, hits[0]
	}
	return r, nil
}

// gapsList: GET /v1/gaps/{projectId}, a self-hosted addition.
func (s *Server) gapsList(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	qs := newExportQuery(r.URL.RawQuery)
	from, to := qs.dates()
	limit := qs.limit(defaultGapGroups, maxGapGroups)
	if len(qs.details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", qs.details)
		return
	}
	from, to = GapsRange(from, to, s.now())
	view, err := s.Gaps(r.Context(), c.Project.ID, from, to, limit)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "reading content gaps")
		return
	}
	respond.JSON(w, http.StatusOK, wireGaps(view))
}

func wireGaps(v gaps.View) wire.GapsReport {
	out := wire.GapsReport{DateFrom: wire.Time(v.From), DateTo: wire.Time(v.To), Groups: []wire.GapGroup{}, Truncated: v.Truncated}
	for _, g := range v.Groups {
		wg := wire.GapGroup{Page: wire.NullString(g.Page), Score: g.Score, Gaps: []wire.Gap{}}
		if g.Page == "" {
			wg.Topic = wire.NullString(g.Topic)
		}
		for _, e := range g.Gaps {
			wg.Gaps = append(wg.Gaps, wireGap(e))
		}
		out.Groups = append(out.Groups, wg)
	}
	return out
}

func wireGap(e gaps.Entry) wire.Gap {
	g := wire.Gap{
		Kind: string(e.Kind), Key: e.Key, Count: e.Count, LastSeen: wire.NullTime(e.LastSeen),
		Examples: append([]string{}, e.Examples...), Jobs: []wire.GapJob{},
	}
	if e.Kind == store.GapPage {
		up := e.ThumbsUp
		g.ThumbsUp = &up
	}
	for _, j := range e.Jobs {
		g.Jobs = append(g.Jobs, wire.GapJob{ID: j.ID, Status: string(j.Status), PRLink: wire.NullString(j.PRLink), LinkedAt: wire.Time(j.LinkedAt)})
	}
	if rt := e.Retrieval; rt != nil {
		g.Retrieval = &wire.GapRetrieval{Found: rt.Found, IndexCommit: rt.IndexCommit, IndexUpdatedAt: wire.Time(rt.IndexUpdatedAt)}
		if rt.Found {
			score := rt.Hit.Score
			g.Retrieval.Path, g.Retrieval.Anchor, g.Retrieval.Heading, g.Retrieval.Score = &rt.Hit.Path, wire.NullString(rt.Hit.Anchor), wire.NullString(rt.Hit.Heading), &score
		}
	}
	return g
}

// GapsJobRequest is what a job is made from: the gaps selected, by kind
// and key, and the operator's instructions, if any.
type GapsJobRequest struct {
	Gaps         []gaps.Ref
	Instructions string
	// From and To are the range the gaps are looked up in (GapsRange).
	From, To time.Time
}

// gapsJobBody is the body of POST /v1/gaps/{projectId}/job.
type gapsJobBody struct {
	Gaps []struct {
		Kind *string `json:"kind"`
		Key  *string `json:"key"`
	} `json:"gaps"`
	Instructions *string `json:"instructions"`
}

// gapsJob: POST /v1/gaps/{projectId}/job, a self-hosted addition: an
// agent job made from a selection of gaps, created as POST
// /v2/agent/{projectId}/job creates one (its checks, its Idempotency-Key,
// its answer), then linked to the gaps.
func (s *Server) gapsJob(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	qs := newExportQuery(r.URL.RawQuery)
	from, to := qs.dates()
	if len(qs.details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", qs.details)
		return
	}
	body, bad := input.ReadBody(w, r, s.cfg.MaxBodyBytes)
	var req GapsJobRequest
	if bad == nil {
		req, bad = parseGapsJob(body)
	}
	if bad == nil {
		bad = checkIdempotencyKey(r)
	}
	if bad != nil {
		respond.Error(w, bad.Status, bad.Message)
		return
	}
	if !s.canRun(w, r, c.Project) {
		return
	}
	req.From, req.To = GapsRange(from, to, s.now())
	var idem *store.Idempotency
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		idem = &store.Idempotency{Key: key, RequestHash: gapsRequestHash(c.Project.ID, req)}
	}
	job, problems, err := s.CreateGapsJob(r.Context(), c.Project, req, idem)
	switch {
	case len(problems) > 0:
		details := make([]wire.ErrorDetail, len(problems))
		for i, p := range problems {
			details[i] = wire.ErrorDetail{Message: p}
		}
		respond.ErrorDetails(w, http.StatusBadRequest, "the selection names gaps the range does not hold", details)
		return
	case err != nil:
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "making a job from gaps")
		return
	}
	respond.JSON(w, http.StatusCreated, publicJob(job))
}

// parseGapsJob reads and checks the body of POST .../job.
func parseGapsJob(body []byte) (GapsJobRequest, *input.Problem) {
	var b gapsJobBody
	if bad := input.DecodeJSON(body, &b, strictjson.Options{}); bad != nil {
		return GapsJobRequest{}, bad
	}
	var req GapsJobRequest
	switch {
	case len(b.Gaps) == 0:
		return req, input.Invalid(`field "gaps" must list at least one gap`)
	case len(b.Gaps) > MaxSelectedGaps:
		return req, input.Invalid(`field "gaps" lists %d gaps; at most %d make one job`, len(b.Gaps), MaxSelectedGaps)
	}
	seen := map[gaps.Ref]bool{}
	for i, g := range b.Gaps {
		if g.Kind == nil || g.Key == nil {
			return req, input.Invalid(`gaps[%d]: fields "kind" and "key" are required`, i)
		}
		ref := gaps.Ref{Kind: store.GapKind(*g.Kind), Key: *g.Key}
		switch {
		case !gaps.Known(ref.Kind):
			return req, input.Invalid(`gaps[%d]: kind must be question, search or page, got %s`, i, respond.Quote(*g.Kind))
		case ref.Key == "" || utf8.RuneCountInString(ref.Key) > input.MaxPathBytes:
			return req, input.Invalid(`gaps[%d]: key must be 1 to %d characters`, i, input.MaxPathBytes)
		case seen[ref]:
			return req, input.Invalid(`gaps[%d]: %s %s is selected twice`, i, ref.Kind, respond.Quote(ref.Key))
		}
		seen[ref] = true
		req.Gaps = append(req.Gaps, ref)
	}
	if b.Instructions != nil {
		req.Instructions = *b.Instructions
		if problem := instructionsProblem(req.Instructions); problem != "" {
			return req, input.Invalid(`field "instructions" %s`, problem)
		}
	}
	return req, nil
}

// instructionsProblem says what is wrong with an operator's instructions,
// or "".
func instructionsProblem(s string) string {
	if n := utf8.RuneCountInString(s); n > gaps.MaxInstructions {
		return fmt.Sprintf("is %d characters long; the limit is %d", n, gaps.MaxInstructions)
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Sprintf("contains the control character U+%04X", r)
	}
	return ""
}

// gapsRequestHash is what makes two requests for a job from gaps the same
// request, for the Idempotency-Key: the selection, the instructions and
// the range, not the prompt, whose counts move as readers go on asking.
func gapsRequestHash(projectID string, req GapsJobRequest) []byte {
	b, _ := json.Marshal(struct {
		Op, Project  string
		Gaps         []gaps.Ref
		Instructions string
		From, To     time.Time
	}{"gaps-job", projectID, req.Gaps, req.Instructions, req.From, req.To})
	sum := sha256.Sum256(b)
	return sum[:]
}

// CreateGapsJob makes an agent job of project p from the gaps req
// selects: each must be a gap of req's range (problems name those that
// are not, and nothing is stored); the prompt quotes them (gaps.Prompt,
// within Config.MaxPromptLength); the job is created as POST
// /v2/agent/{projectId}/job creates it, with idem; then it is linked to
// the gaps. A replay of idem links again, which keeps the links stored:
// a job whose links failed to be stored gets them on the retry.
func (s *Server) CreateGapsJob(ctx context.Context, p store.Project, req GapsJobRequest, idem *store.Idempotency) (store.Job, []string, error) {
	in, err := gaps.Read(ctx, s.cfg.Store, p.ID, req.From, req.To)
	if err != nil {
		return store.Job{}, nil, err
	}
	rep := gaps.Aggregate(in)
	var (
		selected []gaps.Gap
		problems []string
	)
	for _, ref := range req.Gaps {
		g, ok := rep.Find(ref.Kind, ref.Key)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s %s is not a gap of %s to %s", ref.Kind, respond.Quote(ref.Key), req.From.Format(time.DateOnly), req.To.Add(-24*time.Hour).Format(time.DateOnly)))
			continue
		}
		selected = append(selected, g)
	}
	if len(problems) > 0 {
		return store.Job{}, problems, nil
	}
	if problem := instructionsProblem(req.Instructions); problem != "" {
		return store.Job{}, []string{"the instructions " + problem}, nil
	}
	prompt := gaps.Prompt(selected, req.Instructions, s.cfg.MaxPromptLength)
	if n := utf8.RuneCountInString(prompt); n > s.cfg.MaxPromptLength {
		return store.Job{}, []string{fmt.Sprintf("the prompt would be %d characters long, past the limit of %d: shorten the instructions", n, s.cfg.MaxPromptLength)}, nil
	}
	job, err := s.newJob(ctx, p, prompt, idem)
	if err != nil {
		return store.Job{}, nil, err
	}
	now := s.now()
	links := make([]store.GapLink, len(selected))
	for i, g := range selected {
		links[i] = store.GapLink{ProjectID: p.ID, Kind: g.Kind, Key: g.Key, JobID: job.ID, CreatedAt: now}
	}
	if err := s.cfg.Store.LinkGaps(ctx, links); err != nil {
		return store.Job{}, nil, fmt.Errorf("linking job %s to its gaps: %w", job.ID, err)
	}
	return job, nil, nil
}

// JobGaps returns the gaps a job was made from, in the order linked.
func (s *Server) JobGaps(ctx context.Context, projectID, jobID string) ([]gaps.Ref, error) {
	links, err := s.cfg.Store.GapLinks(ctx, projectID)
	if err != nil {
		return nil, err
	}
	var out []gaps.Ref
	for _, l := range links {
		if l.JobID == jobID {
			out = append(out, gaps.Ref{Kind: l.Kind, Key: l.Key})
		}
	}
	return out, nil
}
