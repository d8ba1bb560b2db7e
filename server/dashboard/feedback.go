package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// Feedback is what the pages read and do of a project's feedback: what
// the API's feedback endpoints do (package server implements it), so that
// a page shows and allows what the API does.
type Feedback interface {
	// Sources and Statuses are the values of the source and status
	// filters, in order; Statuses are also those an entry may move to.
	Sources() []store.FeedbackSource
	Statuses() []store.FeedbackStatus
	// List reads the page of a project's feedback that query, the query
	// string of GET .../feedback, asks for, and the cursor of the page
	// after it ("" on the last). problems says what is wrong with the
	// query (a 400); err is the store's.
	List(ctx context.Context, projectID, query string) (page store.FeedbackPage, next, problems string, err error)
	// ByPage counts a project's feedback per page as GET
	// .../feedback/by-page does with query.
	ByPage(ctx context.Context, projectID, query string) (res store.FeedbackByPage, problems string, err error)
	// SetStatus moves an entry to status, as PATCH .../feedback/{id}
	// does.
	SetStatus(ctx context.Context, projectID, id string, status store.FeedbackStatus) (store.Feedback, error)
}

// The feedback page's entries per page, and the pages its thumbs list.
const (
	dashFeedbackEntries = 25
	dashThumbsPages     = 20
)

// dashFeedbackFilters are the parameters of the feedback page that select
// entries, kept in the links and the forms that come back to it.
var dashFeedbackFilters = []string{"status", "source", "path"}

// dashFeedback: GET /dashboard/projects/{projectId}/feedback, a page of
// the project's feedback, newest first, read as GET .../feedback reads it
// (Feedback.List: the same filters, the same sealed cursors), and the
// thumbs of the pages with the most feedback under the same filters, as
// GET .../feedback/by-page counts them. A key that may write gets a form
// per entry to change its status.
func (s *Dashboard) dashFeedback(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	fb := s.cfg.Feedback
	page := pages.FeedbackPage{Frame: d.frame, Statuses: fb.Statuses(), Sources: fb.Sources(), CanWrite: keyauth.HasScope(d.Key.Scopes, store.ScopeWrite)}
	page.Title, page.Section = "Feedback of "+d.Project.ID, "feedback"
	filters, cursor := dashFeedbackQuery(r.URL.Query())
	page.Status, page.Source, page.Path = filters.Get("status"), filters.Get("source"), filters.Get("path")
	self := page.Base + "/projects/" + url.PathEscape(d.Project.ID) + "/feedback"

	list := dashWith(filters, "limit", strconv.Itoa(dashFeedbackEntries))
	if cursor != "" {
		list.Set("cursor", cursor)
	}
	ctx, subject := r.Context(), "project "+respond.Quote(d.Project.ID)
	entries, next, problems, err := fb.List(ctx, d.Project.ID, list.Encode())
	if err == nil && problems == "" {
		var thumbs store.FeedbackByPage
		thumbs, problems, err = fb.ByPage(ctx, d.Project.ID, dashWith(filters, "limit", strconv.Itoa(dashThumbsPages)).Encode())
		page.Thumbs, page.ThumbsMore = thumbs.Rows, thumbs.HasMore
	}
	switch {
	case problems != "":
		page.Problem, page.Thumbs = problems, nil
		s.dashRender(w, r, http.StatusBadRequest, page)
		return
	case err != nil:
		s.dashStoreError(w, r, page.Frame, err, subject, "reading feedback")
		return
	}
	page.Entries = entries.Entries
	back := url.Values{}
	for k, v := range filters {
		back[k] = v
	}
	if cursor != "" {
		back.Set("cursor", cursor)
		page.First = dashLink(self, filters)
	}
	page.Return = back.Encode()
	if next != "" {
		page.Next = dashLink(self, dashWith(filters, "cursor", next))
	}
	s.dashRender(w, r, http.StatusOK, page)
}

// dashFeedbackStatus: POST /dashboard/projects/{projectId}/feedback/{id}/status,
// admitted as PATCH .../feedback/{id} is (write scope, the analytics
// budget) and done as it does (Feedback.SetStatus, which allows the same
// changes); then back to the feedback page the form was on.
func (s *Dashboard) dashFeedbackStatus(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	id := r.PathValue("id")
	status := store.FeedbackStatus(r.PostForm.Get("status"))
	if statuses := s.cfg.Feedback.Statuses(); !slices.Contains(statuses, status) {
		s.dashError(w, r, d.frame, http.StatusBadRequest, "the status must be one of "+joinStatuses(statuses)+", not "+respond.Quote(string(status)))
		return
	}
	if _, err := s.cfg.Feedback.SetStatus(r.Context(), d.Project.ID, id, status); err != nil {
		s.dashStoreError(w, r, d.frame, err, "feedback "+respond.Quote(id), "changing a feedback status")
		return
	}
	// The page to go back to is rebuilt from the filters alone, so that
	// the form cannot send the browser anywhere else.
	back, _ := url.ParseQuery(r.PostForm.Get("return"))
	filters, cursor := dashFeedbackQuery(back)
	if cursor != "" {
		filters.Set("cursor", cursor)
	}
	dashHeaders(w.Header())
	http.Redirect(w, r, dashLink(d.frame.Base+"/projects/"+url.PathEscape(d.Project.ID)+"/feedback", filters)+"#entry-"+url.PathEscape(id), http.StatusSeeOther)
}

// dashFeedbackQuery reads the feedback page's filters and cursor from q:
// the first value of each, empty ones left out (the filter form sends
// "any" as an empty value).
func dashFeedbackQuery(q url.Values) (filters url.Values, cursor string) {
	filters = url.Values{}
	for _, name := range dashFeedbackFilters {
		if v := q.Get(name); v != "" {
			filters.Set(name, v)
		}
	}
	return filters, q.Get("cursor")
}

// dashWith returns a copy of q with name set to value.
func dashWith(q url.Values, name, value string) url.Values {
	out := url.Values{name: {value}}
	for k, v := range q {
		if k != name {
			out[k] = v
		}
	}
	return out
}

// dashLink is the URL of path with the query q, if any.
func dashLink(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

func joinStatuses(statuses []store.FeedbackStatus) string {
	out := ""
	for i, st := range statuses {
		if i > 0 {
			out += ", "
		}
		out += string(st)
	}
	return out
}
