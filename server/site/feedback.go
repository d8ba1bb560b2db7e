package site

import (
	"errors"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/base62"
	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// Bounds of a feedback submission, in characters.
const (
	maxFeedbackComment  = 2000
	maxFeedbackCode     = 10000
	maxFeedbackFilename = 255
	maxFeedbackLang     = 64
	maxFeedbackContact  = 254 // the longest e-mail address SMTP carries
)

// feedbackBody is a submission of POST /v1/site/{projectId}/feedback: page
// feedback (helpful, with an optional comment and contact) or feedback on a
// code block (code, with an optional filename, lang and comment).
type feedbackBody struct {
	Path     *string `json:"path"`
	Helpful  *bool   `json:"helpful"`
	Comment  *string `json:"comment"`
	Contact  *string `json:"contact"`
	Code     *string `json:"code"`
	Filename *string `json:"filename"`
	Lang     *string `json:"lang"`
	// Website is the honeypot: a form field hidden from people, which
	// only a bot filling in every field fills in.
	Website *string `json:"website"`
}

// recordFeedback: POST /v1/site/{projectId}/feedback. 202 means stored
// (or caught by the honeypot, which answers alike); 400 names the field.
func (s *Endpoints) recordFeedback(w http.ResponseWriter, r *http.Request, tok store.SiteToken) string {
	var in feedbackBody
	if answered := s.readSubmission(w, r, &in, func() *string { return in.Website }); answered != "" {
		return answered
	}
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	n, bad := parseFeedback(in)
	if bad != nil {
		respond.Error(w, bad.Status, bad.Message)
		return badBody(bad)
	}
	n.ID, n.ProjectID, n.CreatedAt, n.DailyCap = "fb_"+base62.Random(20), tok.ProjectID, now, s.cfg.Limits.MaxFeedbackPerDay
	addr := s.cfg.Proxies.Addr(r)
	hold, refused := s.shares.take(tok.ProjectID, shareFeedback, addr, now)
	if refused != shareTaken {
		s.counters.feedbackShare.Add(1)
		s.limited(r, tok.ProjectID, shareFeedback, ReasonShare, now)
		w.Header().Set("Retry-After", untilTomorrow(now))
		respond.Error(w, http.StatusTooManyRequests, feedbackShareMessage(refused, addr, s.cfg.Limits))
		return public.Share
	}
	_, err := s.cfg.Store.AddFeedback(r.Context(), n)
	if err != nil {
		s.shares.release(hold) // nothing stored: nothing taken
	}
	switch {
	case err == nil:
		writeAccepted(w)
		return public.Accepted
	case errors.Is(err, store.ErrFull):
		s.counters.feedbackFull.Add(1)
		s.limited(r, tok.ProjectID, shareFeedback, ReasonCap, now)
		w.Header().Set("Retry-After", untilTomorrow(now))
		respond.Error(w, http.StatusTooManyRequests, "this site has sent as much feedback as the server keeps in a day; nothing was stored")
		return public.Cap
	default:
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(tok.ProjectID), "recording feedback")
		return public.Error
	}
}

// parseFeedback checks a submission and returns the entry it makes, all
// but its ID, project, time and cap. Page feedback with a comment or a
// contact is contextual; without either, a vote alone, thumbs_only.
func parseFeedback(in feedbackBody) (store.NewFeedback, *input.Problem) {
	var n store.NewFeedback
	if in.Path == nil {
		return n, input.Invalid(`field "path" is required: the page's path, such as /quickstart`)
	}
	path, bad := sitePath("path", *in.Path)
	if bad != nil {
		return n, bad
	}
	n.Path = path
	if in.Comment != nil {
		if p := input.TextProblem("comment", *in.Comment, maxFeedbackComment, true); p != "" {
			return n, input.Invalid("%s", p)
		}
		n.Comment = in.Comment
	}
	switch {
	case in.Code != nil && in.Helpful != nil:
		return n, input.Invalid(`fields "code" and "helpful" exclude each other: send "helpful" for the page, or "code" for a code block`)
	case in.Code != nil:
		return codeFeedback(n, in)
	case in.Helpful != nil:
		return pageFeedback(n, in)
	}
	return n, input.Invalid(`field "helpful" (the page) or "code" (a code block) is required`)
}

// pageFeedback completes n, a vote on a page.
func pageFeedback(n store.NewFeedback, in feedbackBody) (store.NewFeedback, *input.Problem) {
	for field, v := range map[string]*string{"filename": in.Filename, "lang": in.Lang} {
		if v != nil {
			return n, input.Invalid(`field %q belongs to feedback on a code block (with "code"), not on a page`, field)
		}
	}
	n.Helpful = *in.Helpful
	n.Source = store.FeedbackSourceThumbsOnly
	if in.Contact != nil {
		contact, bad := parseContact(*in.Contact)
		if bad != nil {
			return n, bad
		}
		n.Contact = contact
	}
	if n.Comment != nil || n.Contact != "" {
		n.Source = store.FeedbackSourceContextual
	}
	return n, nil
}

// codeFeedback completes n, feedback on a code block.
func codeFeedback(n store.NewFeedback, in feedbackBody) (store.NewFeedback, *input.Problem) {
	if in.Contact != nil {
		return n, input.Invalid(`field "contact" belongs to feedback on a page (with "helpful"), not on a code block`)
	}
	if strings.TrimSpace(*in.Code) == "" {
		return n, input.Invalid(`field "code" must not be empty`)
	}
	if p := input.TextProblem("code", *in.Code, maxFeedbackCode, true); p != "" {
		return n, input.Invalid("%s", p)
	}
	n.Source, n.Code = store.FeedbackSourceCodeSnippet, *in.Code
	for _, f := range []struct {
		field string
		v     *string
		max   int
		dst   *string
	}{{"filename", in.Filename, maxFeedbackFilename, &n.Filename}, {"lang", in.Lang, maxFeedbackLang, &n.Lang}} {
		if f.v == nil {
			continue
		}
		if p := input.TextProblem(f.field, *f.v, f.max, false); p != "" {
			return n, input.Invalid("%s", p)
		}
		*f.dst = strings.TrimSpace(*f.v)
	}
	return n, nil
}

// parseContact checks the reader's e-mail address: a bare address (no
// display name), as the export shows it. An empty one is no contact.
func parseContact(v string) (string, *input.Problem) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if p := input.TextProblem("contact", v, maxFeedbackContact, false); p != "" {
		return "", input.Invalid("%s", p)
	}
	a, err := mail.ParseAddress(v)
	if err != nil || a.Name != "" || a.Address != v || !strings.Contains(v[strings.LastIndexByte(v, '@')+1:], ".") {
		return "", input.Invalid(`field "contact" must be an e-mail address, such as reader@example.com`)
	}
	return v, nil
}
