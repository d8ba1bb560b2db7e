package store

import (
	"strings"
	"time"
	"unicode/utf8"
)

// The checks of the inputs of FeedbackStore, SearchStore and SiteStore,
// made as validate.go's are. Text that readers sent must be
// valid UTF-8 without NUL, which every backend can keep as it is.

// Validate returns what makes n unfit for AddFeedback, or nil. Each field
// of a source belongs to that source alone: a contact on a code snippet,
// say, is refused rather than stored where no export shows it.
func (n NewFeedback) Validate() error {
	switch {
	case n.ID == "":
		return Invalid("empty feedback ID")
	case n.ProjectID == "":
		return Invalid("feedback %q: empty project ID", n.ID)
	case !strings.HasPrefix(n.Path, "/"):
		return Invalid("feedback %q: path %q does not start with /", n.ID, n.Path)
	case !n.Source.Known():
		return Invalid("feedback %q: unknown source %q", n.ID, n.Source)
	case n.CreatedAt.IsZero():
		return Invalid("feedback %q: zero creation time", n.ID)
	case n.DailyCap < 0:
		return Invalid("feedback %q: negative daily cap %d", n.ID, n.DailyCap)
	case n.Source == FeedbackSourceCodeSnippet && n.Code == "":
		return Invalid("feedback %q: a code snippet needs its code", n.ID)
	case n.Source != FeedbackSourceCodeSnippet && (n.Code != "" || n.Filename != "" || n.Lang != ""):
		return Invalid("feedback %q: code, filename and lang belong to code_snippet feedback, not %s", n.ID, n.Source)
	case n.Source != FeedbackSourceContextual && n.Contact != "":
		return Invalid("feedback %q: a contact belongs to contextual feedback, not %s", n.ID, n.Source)
	case n.Helpful && n.Source != FeedbackSourceContextual && n.Source != FeedbackSourceThumbsOnly:
		return Invalid("feedback %q: helpful belongs to contextual and thumbs_only feedback, not %s", n.ID, n.Source)
	}
	comment := ""
	if n.Comment != nil {
		comment = *n.Comment
	}
	return textProblems("feedback "+quoteID(n.ID),
		"path", n.Path, "comment", comment, "contact", n.Contact, "code", n.Code, "filename", n.Filename, "lang", n.Lang)
}

// Validate returns what makes f unfit to select feedback, or nil.
func (f FeedbackFilter) Validate() error {
	if f.ProjectID == "" {
		return Invalid("empty project ID")
	}
	if f.Source != "" && !f.Source.Known() {
		return Invalid("unknown source %q", f.Source)
	}
	return validateStatuses(f.Statuses)
}

// Validate returns what makes q unfit for QueryFeedback, or nil.
func (q FeedbackQuery) Validate() error {
	if err := q.FeedbackFilter.Validate(); err != nil {
		return err
	}
	if q.After == nil {
		return validatePage(q.Limit, nil, "")
	}
	return validatePage(q.Limit, &q.After.CreatedAt, q.After.ID)
}

// validateStatuses refuses a status the contract does not know.
func validateStatuses[S interface {
	~string
	Known() bool
}](statuses []S) error {
	for _, st := range statuses {
		if !st.Known() {
			return Invalid("unknown status %q", st)
		}
	}
	return nil
}

// validatePage returns what makes a page of a list newest first unfit: a
// limit below 1, or a place to start after (at, when not nil, and id)
// without a creation time or an ID.
func validatePage(limit int, at *time.Time, id string) error {
	switch {
	case limit < 1:
		return Invalid("limit %d: must be at least 1", limit)
	case at != nil && (id == "" || at.IsZero()):
		return Invalid("after: a place needs a creation time and an ID")
	}
	return nil
}

// Validate returns what makes q unfit for FeedbackByPage, or nil.
func (q FeedbackByPageQuery) Validate() error {
	if err := q.FeedbackFilter.Validate(); err != nil {
		return err
	}
	if q.Limit < 1 {
		return Invalid("limit %d: must be at least 1", q.Limit)
	}
	return nil
}

// Validate returns what makes c unfit for SetFeedbackStatus, or nil.
func (c FeedbackStatusChange) Validate() error {
	switch {
	case c.ProjectID == "":
		return Invalid("empty project ID")
	case c.ID == "":
		return Invalid("empty feedback ID")
	case !c.Status.Known():
		return Invalid("feedback %q: unknown status %q", c.ID, c.Status)
	case c.At.IsZero():
		return Invalid("feedback %q: zero change time", c.ID)
	}
	return nil
}

// Validate returns what makes s unfit for AddSearches, or nil.
func (s Search) Validate() error {
	switch {
	case s.ProjectID == "":
		return Invalid("empty project ID")
	case s.Query == "":
		return Invalid("empty query")
	case NormaliseQuery(s.Query) != s.Query:
		return Invalid("query %q is not normalised (want %q)", s.Query, NormaliseQuery(s.Query))
	case utf8.RuneCountInString(s.Query) > MaxQueryLength:
		return Invalid("query has %d characters; at most %d are kept", utf8.RuneCountInString(s.Query), MaxQueryLength)
	case s.ClickOnly && s.ClickedPath == "":
		return Invalid("an opening alone (ClickOnly) without a clicked path")
	case s.ClickedPath != "" && !strings.HasPrefix(s.ClickedPath, "/"):
		return Invalid("clicked path %q does not start with /", s.ClickedPath)
	case s.At.IsZero():
		return Invalid("zero search time")
	}
	return textProblems("search", "query", s.Query, "clicked path", s.ClickedPath)
}

// Validate returns what makes b unfit for AddSearches, or nil: the cap,
// then each search, named by its index.
func (b SearchBatch) Validate() error {
	if b.DailyQueryCap < 1 {
		return Invalid("daily query cap %d: must be at least 1", b.DailyQueryCap)
	}
	for i, s := range b.Searches {
		if p := problemOf(s.Validate()); p != "" {
			return Invalid("search %d: %s", i, p)
		}
	}
	return nil
}

// Validate returns what makes q unfit for QuerySearches, or nil.
func (q SearchesQuery) Validate() error {
	switch {
	case q.ProjectID == "":
		return Invalid("empty project ID")
	case q.Limit < 1:
		return Invalid("limit %d: must be at least 1", q.Limit)
	case !q.From.IsZero() && !wholeDay(q.From):
		return Invalid("from %v is not a whole UTC day", q.From)
	case !q.To.IsZero() && !wholeDay(q.To):
		return Invalid("to %v is not a whole UTC day", q.To)
	case q.After != nil && q.After.Hits < 0:
		return Invalid("after: negative hits %d", q.After.Hits)
	}
	return nil
}

// Validate returns what makes t unfit for CreateSiteToken, or nil.
func (t SiteToken) Validate() error {
	switch {
	case t.Token == "":
		return Invalid("empty site token")
	case t.ProjectID == "":
		return Invalid("site token %q: empty project ID", t.Token)
	}
	for _, o := range t.Origins {
		if o == "" || strings.ContainsFunc(o, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return Invalid("site token %q: origin %q is empty or holds a space or control character", t.Token, o)
		}
	}
	return textProblems("site token "+quoteID(t.Token), "token", t.Token, "name", t.Name, "origins", strings.Join(t.Origins, " "))
}

// ValidateRevokeSiteToken returns what makes token and at unfit for
// RevokeSiteToken, or nil.
func ValidateRevokeSiteToken(token string, at time.Time) error {
	switch {
	case token == "":
		return Invalid("empty site token")
	case at.IsZero():
		return Invalid("site token %q: zero revocation time", token)
	}
	return nil
}

// textProblems refuses the first of the named texts (name, value, name,
// value, ...) that a backend could not keep as it is: invalid UTF-8, or NUL.
func textProblems(what string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		switch v := pairs[i+1]; {
		case !utf8.ValidString(v):
			return Invalid("%s: %s is not valid UTF-8", what, pairs[i])
		case strings.ContainsRune(v, 0):
			return Invalid("%s: %s holds NUL", what, pairs[i])
		}
	}
	return nil
}

// quoteID quotes an ID for a message.
func quoteID(id string) string { return `"` + strings.ToValidUTF8(id, "?") + `"` }

// wholeDay reports whether t is a UTC midnight.
func wholeDay(t time.Time) bool {
	return !t.IsZero() && t.Truncate(24*time.Hour).Equal(t)
}
