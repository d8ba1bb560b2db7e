package dashboard

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/ulid"
	"github.com/docsapi/docsapi-go/server/store"
)

// dashConversationRows is how many questions a page of the conversations
// page lists.
const dashConversationRows = 50

// dashConversations: GET /dashboard/projects/{projectId}/conversations,
// the questions readers asked the assistant over a period of UTC days
// (period.go, as the analytics pages'), newest first, since operators
// read what was asked today before last month's, a page at a time back to
// earlier ones; unanswered=1 keeps those it could not answer. The rows
// are the conversations export's read the other way (QueryConversations
// with Newest; the cursor is the last row's ID, and the next page holds
// the questions asked before it), the counts its caller statistics' over
// the period and the one before.
func (s *Dashboard) dashConversations(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.ConversationsPage{Frame: d.frame}
	page.Title, page.Section = "Conversations of "+d.Project.ID, "conversations"
	status := http.StatusOK
	q := r.URL.Query()
	span, problem := dashPeriod(q, s.now())
	page.Unanswered = q.Get("unanswered") != ""
	cursor := q.Get("cursor")
	if cursor != "" && !ulid.Valid(cursor) {
		page.Problem = fmt.Sprintf("cursor must be the ID of a question (a ULID), got %q", cursor)
		cursor = ""
	}
	if problem != "" || page.Problem != "" {
		status = http.StatusBadRequest
	}
	filter := ""
	if page.Unanswered {
		filter = "1"
	}
	page.Period = dashPicker(&page.Frame, "conversations", span, problem, "unanswered", filter)

	ctx, subject := r.Context(), "project "+respond.Quote(d.Project.ID)
	callers, err := s.cfg.Store.CallerStats(ctx, d.Project.ID, span.From, span.To)
	if err == nil {
		prev := span.Previous()
		var before store.CallerCounts
		before, err = s.cfg.Store.CallerStats(ctx, d.Project.ID, prev.From, prev.To)
		page.Callers, page.Before = callers, before.Total()
	}
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "counting assistant callers")
		return
	}
	cq := store.ConversationsQuery{ProjectID: d.Project.ID, From: span.From, To: span.To, After: cursor, Limit: dashConversationRows, Newest: true}
	if page.Unanswered {
		cq.Resolution = store.Unanswered
	}
	res, err := s.cfg.Store.QueryConversations(ctx, cq)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "reading assistant conversations")
		return
	}
	threads := page.Base + "/projects/" + url.PathEscape(d.Project.ID) + "/conversations/"
	for _, x := range res.Exchanges {
		page.Rows = append(page.Rows, pages.Conversation{Exchange: x, ThreadURL: threads + url.PathEscape(x.ThreadID) + "#x-" + url.PathEscape(x.ID)})
	}
	keep := []string{"unanswered", filter}
	if cursor != "" {
		page.First = dashPeriodURL(page.Frame, "conversations", span, keep...)
	}
	if res.HasMore && len(res.Exchanges) > 0 {
		page.Next = dashPeriodURL(page.Frame, "conversations", span, append(keep, "cursor", res.Exchanges[len(res.Exchanges)-1].ID)...)
	}
	s.dashRender(w, r, status, page)
}

// dashThread: GET /dashboard/projects/{projectId}/conversations/{threadId},
// one thread, exchange by exchange, as the thread export reads it (Thread,
// ThreadExchanges): a thread of another project is not found.
func (s *Dashboard) dashThread(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	id := r.PathValue("threadId")
	page := pages.ThreadPage{Frame: d.frame, Back: d.frame.SectionURL("conversations")}
	page.Title, page.Section = "Thread "+id, "conversations"
	if !ulid.Valid(id) {
		s.dashError(w, r, page.Frame, http.StatusBadRequest, "a thread's ID is a ULID (26 characters of Crockford's base 32, upper case), not "+respond.Quote(id))
		return
	}
	ctx, subject := r.Context(), "thread "+respond.Quote(id)
	th, err := s.cfg.Store.Thread(ctx, d.Project.ID, id)
	if err == nil {
		page.Exchanges, err = s.cfg.Store.ThreadExchanges(ctx, d.Project.ID, id)
	}
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "reading an assistant thread")
		return
	}
	page.Thread = th
	s.dashRender(w, r, http.StatusOK, page)
}
