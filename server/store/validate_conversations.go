package store

import (
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ulid"
)

// The checks of the inputs of ConversationStore, made as validate.go's
// are. Questions, answers and the pages they name come from readers and a
// model: they must be valid UTF-8 without NUL, which every backend can keep
// as it is, and what a reply lists is bounded, so that no request makes
// the store keep more than an export can show.

// The bounds of what an exchange lists.
const (
	// MaxExchangeSources is the most sources an exchange keeps: far more
	// than a retrieval page holds (the hosted assistant lists a handful).
	MaxExchangeSources = 20
	// MaxSourceTitle is the longest source title kept, in bytes.
	MaxSourceTitle = 1000
	// MaxURL is the longest URL kept (a source's, the page asked from),
	// in bytes: what browsers and proxies commonly carry.
	MaxURL = 2048
	// MaxThreadFp is the longest fp a thread keeps, in bytes.
	MaxThreadFp = 256
	// MaxGapKey is the longest key of a gap link, in bytes.
	MaxGapKey = 2000
)

// Known reports whether t is a response type of the hosted export.
func (t ResponseType) Known() bool { return t == ResponseAnswer || t == ResponseClarifyingQuestion }

// Known reports whether r is a resolution of the hosted export.
func (r Resolution) Known() bool { return r == Answered || r == Unanswered }

// Known reports whether c is a caller kind of the hosted statistics.
func (c CallerKind) Known() bool { return c == CallerWeb || c == CallerAPI || c == CallerOther }

// Known reports whether k is a kind of content gap.
func (k GapKind) Known() bool { return k == GapQuestion || k == GapSearch || k == GapPage }

// Validate returns what makes th unfit for AddExchange's thread, or nil.
// Exchanges is ignored: AddExchange counts them.
func (th Thread) Validate() error {
	switch {
	case th.ID == "":
		return Invalid("empty thread ID")
	case !ulid.Valid(th.ID):
		return Invalid("thread ID %s is not a ULID", quoteID(th.ID))
	case th.ProjectID == "":
		return Invalid("thread %q: empty project ID", th.ID)
	case len(th.KeyHash) == 0:
		return Invalid("thread %q: empty key hash", th.ID)
	case len(th.Fp) > MaxThreadFp:
		return Invalid("thread %q: fp of %d bytes, more than %d", th.ID, len(th.Fp), MaxThreadFp)
	case !th.Caller.Known():
		return Invalid("thread %q: unknown caller kind %q", th.ID, th.Caller)
	case th.CreatedAt.IsZero():
		return Invalid("thread %q: zero creation time", th.ID)
	}
	return textProblems("thread "+quoteID(th.ID), "project ID", th.ProjectID, "fp", th.Fp)
}

// Validate returns what makes e unfit for AddExchange, or nil. An answer
// may be empty (a stream cut before its first word is still recorded); a
// question may not.
func (e Exchange) Validate() error {
	switch {
	case e.ID == "":
		return Invalid("empty exchange ID")
	case !ulid.Valid(e.ID):
		return Invalid("exchange ID %s is not a ULID", quoteID(e.ID))
	case !ulid.Valid(e.QuestionID):
		return Invalid("exchange %q: question ID %s is not a ULID", e.ID, quoteID(e.QuestionID))
	case e.QuestionID == e.ID:
		return Invalid("exchange %q: the question's ID is the answer's", e.ID)
	case e.ProjectID == "":
		return Invalid("exchange %q: empty project ID", e.ID)
	case !ulid.Valid(e.ThreadID):
		return Invalid("exchange %q: thread ID %s is not a ULID", e.ID, quoteID(e.ThreadID))
	case e.Question == "":
		return Invalid("exchange %q: empty question", e.ID)
	case e.AskedAt.IsZero():
		return Invalid("exchange %q: zero time asked", e.ID)
	case !e.AnsweredAt.IsZero() && e.AnsweredAt.Before(e.AskedAt):
		return Invalid("exchange %q: answered at %v, before it was asked at %v", e.ID, e.AnsweredAt, e.AskedAt)
	case !e.ResponseType.Known():
		return Invalid("exchange %q: unknown response type %q", e.ID, e.ResponseType)
	case !e.Resolution.Known():
		return Invalid("exchange %q: unknown resolution %q", e.ID, e.Resolution)
	case !e.Caller.Known():
		return Invalid("exchange %q: unknown caller kind %q", e.ID, e.Caller)
	case len(e.Sources) > MaxExchangeSources:
		return Invalid("exchange %q: %d sources, more than %d", e.ID, len(e.Sources), MaxExchangeSources)
	case len(e.PageURL) > MaxURL:
		return Invalid("exchange %q: page URL of %d bytes, more than %d", e.ID, len(e.PageURL), MaxURL)
	case e.ThreadCap < 0 || e.DailyCap < 0:
		return Invalid("exchange %q: negative cap (thread %d, daily %d)", e.ID, e.ThreadCap, e.DailyCap)
	}
	what := "exchange " + quoteID(e.ID)
	for i, s := range e.Sources {
		switch {
		case s.URL == "":
			return Invalid("%s: source %d has no URL", what, i)
		case len(s.URL) > MaxURL:
			return Invalid("%s: source %d: URL of %d bytes, more than %d", what, i, len(s.URL), MaxURL)
		case len(s.Title) > MaxSourceTitle:
			return Invalid("%s: source %d: title of %d bytes, more than %d", what, i, len(s.Title), MaxSourceTitle)
		}
		if err := textProblems(what, "a source's title", s.Title, "a source's URL", s.URL); err != nil {
			return err
		}
	}
	return textProblems(what, "project ID", e.ProjectID, "question", e.Question, "answer", e.Answer, "page URL", e.PageURL)
}

// ValidateAddExchange returns what makes e and thread (nil: e continues a
// stored thread) unfit for AddExchange, or nil: each must be valid, and a
// new thread must be e's, of e's project.
func ValidateAddExchange(e Exchange, thread *Thread) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if thread == nil {
		return nil
	}
	if err := thread.Validate(); err != nil {
		return err
	}
	switch {
	case thread.ID != e.ThreadID:
		return Invalid("exchange %q: new thread %q is not its thread %q", e.ID, thread.ID, e.ThreadID)
	case thread.ProjectID != e.ProjectID:
		return Invalid("exchange %q: new thread %q is of project %q, not %q", e.ID, thread.ID, thread.ProjectID, e.ProjectID)
	}
	return nil
}

// Validate returns what makes q unfit for QueryConversations, or nil. A
// zero bound leaves that side of the range open.
func (q ConversationsQuery) Validate() error {
	switch {
	case q.ProjectID == "":
		return Invalid("empty project ID")
	case q.Limit < 1 || q.Limit > MaxConversationsLimit:
		return Invalid("limit %d: must be 1 to %d", q.Limit, MaxConversationsLimit)
	case q.After != "" && !ulid.Valid(q.After):
		return Invalid("after %s is not a ULID", quoteID(q.After))
	case q.Resolution != "" && !q.Resolution.Known():
		return Invalid("unknown resolution %q", q.Resolution)
	}
	return validateRange(q.From, q.To)
}

// ValidateCallerStats returns what makes its arguments unfit for
// CallerStats, or nil. A zero bound leaves that side open.
func ValidateCallerStats(projectID string, from, to time.Time) error {
	if projectID == "" {
		return Invalid("empty project ID")
	}
	return validateRange(from, to)
}

// validateRange refuses a range [from, to) that holds nothing: both
// bounds set, and to not after from.
func validateRange(from, to time.Time) error {
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return Invalid("range [%v, %v) is empty: from must be before to", from, to)
	}
	return nil
}

// ValidateAddAssistantTokens returns what makes its arguments unfit for
// AddAssistantTokens, or nil.
func ValidateAddAssistantTokens(projectID string, at time.Time, n int64) error {
	switch {
	case projectID == "":
		return Invalid("empty project ID")
	case at.IsZero():
		return Invalid("project %q: zero time of the tokens", projectID)
	case n <= 0:
		return Invalid("project %q: %d tokens: must be more than 0", projectID, n)
	}
	return nil
}

// ValidateAssistantTokens returns what makes its arguments unfit for
// AssistantTokens, or nil.
func ValidateAssistantTokens(projectID string, day time.Time) error {
	switch {
	case projectID == "":
		return Invalid("empty project ID")
	case day.IsZero():
		return Invalid("project %q: zero day", projectID)
	}
	return nil
}

// ValidateDeleteConversationsBefore returns what makes t unfit for
// DeleteConversationsBefore, or nil: a zero t would delete nothing, which
// is not what a caller who forgot to set it meant.
func ValidateDeleteConversationsBefore(t time.Time) error {
	if t.IsZero() {
		return Invalid("zero time to delete conversations before")
	}
	return nil
}

// Validate returns what makes l unfit for LinkGaps, or nil.
func (l GapLink) Validate() error {
	switch {
	case l.ProjectID == "":
		return Invalid("gap link: empty project ID")
	case !l.Kind.Known():
		return Invalid("gap link: unknown kind %q", l.Kind)
	case l.Key == "":
		return Invalid("gap link: empty %s key", l.Kind)
	case len(l.Key) > MaxGapKey:
		return Invalid("gap link: %s key of %d bytes, more than %d", l.Kind, len(l.Key), MaxGapKey)
	case l.JobID == "":
		return Invalid("gap link: empty job ID")
	case l.CreatedAt.IsZero():
		return Invalid("gap link: zero creation time")
	}
	return textProblems("gap link", "project ID", l.ProjectID, "key", l.Key, "job ID", l.JobID)
}

// ValidateLinkGaps returns what makes ls unfit for LinkGaps, or nil: at
// least one link, each valid, all of one project.
func ValidateLinkGaps(ls []GapLink) error {
	if len(ls) == 0 {
		return Invalid("no gap links")
	}
	for i, l := range ls {
		if err := l.Validate(); err != nil {
			return Invalid("link %d: %s", i, problemOf(err))
		}
		if l.ProjectID != ls[0].ProjectID {
			return Invalid("link %d: project %q, not %q as link 0's", i, l.ProjectID, ls[0].ProjectID)
		}
	}
	return nil
}

// TokenDay returns the UTC day (its midnight) whose tokens t counts among.
func TokenDay(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }
