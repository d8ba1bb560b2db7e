package dashboard

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/gaps"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// Gaps is what the content gaps page reads and does: what the API's gaps
// endpoints do (package server implements it), so that the page shows
// and allows what the API does.
type Gaps interface {
	// View reads the first limit groups of a project's gaps over the
	// days [from, to), as GET /v1/gaps/{projectId} does.
	View(ctx context.Context, projectID string, from, to time.Time, limit int) (gaps.View, error)
	// CreateJob makes a job of project p from the gaps selected, looked
	// up in [from, to), as POST /v1/gaps/{projectId}/job does with
	// idempotencyKey as its Idempotency-Key ("" for none); problems say
	// what is wrong with the selection (a 400), and nothing is then
	// stored.
	CreateJob(ctx context.Context, p store.Project, selected []gaps.Ref, instructions string, from, to time.Time, idempotencyKey string) (job store.Job, problems []string, err error)
	// JobGaps returns the gaps a job was made from.
	JobGaps(ctx context.Context, projectID, jobID string) ([]gaps.Ref, error)
	// MaxSelected is the most gaps one job is made from.
	MaxSelected() int
}

// dashGapGroups is the most groups the page lists.
const dashGapGroups = 50

// maxDashGapsFormBytes bounds the gaps form's body: up to MaxSelected
// keys and the instructions, percent-encoded.
const maxDashGapsFormBytes = 256 << 10

// dashGaps: GET /dashboard/projects/{projectId}/gaps, the content gaps of
// a period of UTC days (period.go), read as GET /v1/gaps/{projectId}
// reads them (Gaps.View). A key that may write gets checkboxes and the
// form that makes a job from the selection.
func (s *Dashboard) dashGaps(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.GapsPage{Frame: d.frame, CanWrite: keyauth.HasScope(d.Key.Scopes, store.ScopeWrite), MaxSelected: s.cfg.Gaps.MaxSelected()}
	if page.CanWrite {
		// A new key for each rendering of the form: a double submit, or
		// a retry after a lost answer, sends the same one and gets the
		// same job.
		page.IdempotencyKey = rand.Text()
	}
	page.Title, page.Section = "Content gaps of "+d.Project.ID, "gaps"
	status := http.StatusOK
	span, problem := dashPeriod(r.URL.Query(), s.now())
	if problem != "" {
		status = http.StatusBadRequest
	}
	page.Period = dashPicker(&page.Frame, "gaps", span, problem)
	view, err := s.cfg.Gaps.View(r.Context(), d.Project.ID, span.From, span.To, dashGapGroups)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, "project "+respond.Quote(d.Project.ID), "reading content gaps")
		return
	}
	page.More, page.Truncated = view.More, view.Truncated
	project := page.Base + "/projects/" + url.PathEscape(d.Project.ID)
	for _, g := range view.Groups {
		pg := pages.GapGroup{Page: g.Page, Topic: g.Topic, Score: g.Score}
		if g.Page != "" {
			pg.PageURL = dashPeriodURL(page.Frame, "overview", span, "path", g.Page)
		}
		for _, e := range g.Gaps {
			row := pages.GapRow{Entry: e, ID: pages.GapID(e.Kind, e.Key), Value: pages.GapValue(e.Kind, e.Key)}
			for _, j := range e.Jobs {
				row.Jobs = append(row.Jobs, pages.GapJob{LinkedJob: j, URL: project + "/jobs/" + url.PathEscape(j.ID)})
			}
			pg.Gaps = append(pg.Gaps, row)
		}
		page.Groups = append(page.Groups, pg)
	}
	s.dashRender(w, r, status, page)
}

// dashGapsJob: POST /dashboard/projects/{projectId}/gaps/job, admitted as
// POST /v1/gaps/{projectId}/job is (write scope, the agent budget) and
// done as it does (Gaps.CreateJob) for the gaps checked, looked up in the
// period the form was on; then to the new job's page.
func (s *Dashboard) dashGapsJob(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	span, problem := dashPeriod(r.PostForm, s.now())
	idem := r.PostForm.Get("idempotency-key")
	if idem != "" && !validIdempotencyKey(idem) {
		problem = "the form's idempotency key is malformed: reload the page"
	}
	var selected []gaps.Ref
	seen := map[gaps.Ref]bool{}
	for _, v := range r.PostForm["gap"] {
		kind, key, _ := strings.Cut(v, ":")
		ref := gaps.Ref{Kind: store.GapKind(kind), Key: key}
		switch {
		case !gaps.Known(ref.Kind) || key == "":
			problem = "a selected gap is malformed: " + respond.Quote(v)
		case !seen[ref]:
			seen[ref] = true
			selected = append(selected, ref)
		}
	}
	switch max := s.cfg.Gaps.MaxSelected(); {
	case problem != "":
	case len(selected) == 0:
		problem = "select at least one gap"
	case len(selected) > max:
		problem = fmt.Sprintf("at most %d gaps make one job; %d were selected", max, len(selected))
	}
	if problem != "" {
		s.dashError(w, r, d.frame, http.StatusBadRequest, problem)
		return
	}
	job, problems, err := s.cfg.Gaps.CreateJob(r.Context(), d.Project, selected, r.PostForm.Get("instructions"), span.From, span.To, idem)
	switch {
	case len(problems) > 0:
		s.dashError(w, r, d.frame, http.StatusBadRequest, strings.Join(problems, "; "))
		return
	case err != nil:
		s.dashStoreError(w, r, d.frame, err, "project "+respond.Quote(d.Project.ID), "making a job from gaps")
		return
	}
	dashHeaders(w.Header())
	http.Redirect(w, r, d.frame.Base+"/projects/"+url.PathEscape(d.Project.ID)+"/jobs/"+url.PathEscape(job.ID), http.StatusSeeOther)
}

// validIdempotencyKey reports whether a form's idempotency key is one the
// API would take as an Idempotency-Key: 1 to 255 printable ASCII
// characters without spaces.
func validIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > 255 {
		return false
	}
	for _, c := range []byte(k) {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}
