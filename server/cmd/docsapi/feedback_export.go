package main

import (
	"context"
	"flag"
	"fmt"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

func feedbackExportCommand() *command {
	return &command{
		name:    "feedback export",
		summary: "export readers' feedback through the API as JSON lines or CSV",
		help: `Exports the project's feedback entries through the API, newest first, every
page of results: JSON lines (each entry in the API's shape, one a line) or CSV
with the header
id,created_at,path,source,status,comment,helpful,contact,code,filename,lang.

It is a client command, like 'views export': it needs an API key and works
with the hosted service too. 'feedback list' and 'feedback set-status' read
and change the feedback on a self-hosted server's storage instead.

Every entry has id, created_at (RFC 3339, UTC), path, source (contextual,
code_snippet, agent, thumbs_only) and status (pending, in_progress, resolved,
dismissed); the other columns stay empty where the source has no such field.
comment is empty both for no comment and an empty one (JSON keeps null apart
from ""). helpful is yes or no, as the reader voted, on contextual and
thumbs-only feedback, and empty where the server sent no vote: the hosted
service sends none on thumbs-only entries. contact is the e-mail address a
reader left on contextual feedback; code, filename and lang describe the code
block of code_snippet feedback.

--source and --status select entries as the API's filters do, and are sent
as given: a server refuses values it does not know.` + exportHelp + clientHelp,
		examples: `docsapi feedback export --status pending,in_progress --format csv --output triage.csv
docsapi feedback export --source thumbs_only --from 2026-10-01 | jq -s 'group_by(.helpful) | map({helpful: .[0].helpful, n: length})'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var f exportFlags
			f.register(fs)
			source := fs.String("source", "", "only this `SOURCE`: code_snippet, contextual, agent or thumbs_only")
			var statuses listFlag
			fs.Var(&statuses, "status", "only these `STATUSES`: pending, in_progress, resolved, dismissed;\nrepeat or separate with commas")
			return exportRun(&f, func(ctx context.Context, c *apiClient, from, to docsapi.DateBound) export[docsapi.FeedbackEntry] {
				params := docsapi.FeedbackParams{Source: docsapi.FeedbackSource(*source), DateFrom: from, DateTo: to}
				for _, st := range statuses {
					params.Status = append(params.Status, docsapi.FeedbackStatus(st))
				}
				return exportFeedback(ctx, c, params)
			})
		},
	}
}

// exportFeedback is the feedback export; its closing line counts the
// votes, which feedback by-page counts per path.
func exportFeedback(ctx context.Context, c *apiClient, params docsapi.FeedbackParams) export[docsapi.FeedbackEntry] {
	var yes, no int
	return export[docsapi.FeedbackEntry]{
		rows:   c.Analytics.AllFeedback(ctx, "", params),
		noun:   "entries",
		header: []string{"id", "created_at", "path", "source", "status", "comment", "helpful", "contact", "code", "filename", "lang"},
		record: func(e docsapi.FeedbackEntry, rec []string) {
			comment, helpful := "", ""
			if e.Comment != nil {
				comment = *e.Comment
			}
			if e.Helpful != docsapi.VoteUnknown {
				helpful = e.Helpful.String()
			}
			rec[0], rec[1], rec[2], rec[3], rec[4] = e.ID, csvTime(e.CreatedAt), e.Path, string(e.Source), string(e.Status)
			rec[5], rec[6], rec[7], rec[8], rec[9], rec[10] = comment, helpful, e.Contact, e.Code, e.Filename, e.Lang
		},
		line: feedbackLine,
		tally: func(e docsapi.FeedbackEntry) {
			switch e.Helpful {
			case docsapi.VoteYes:
				yes++
			case docsapi.VoteNo:
				no++
			}
		},
		totals: func() string { return fmt.Sprintf(": votes %d yes, %d no", yes, no) },
	}
}

// feedbackLine is an entry in the API's shape (the FeedbackEntry schema):
// the base fields, the vote when one was sent, and a source's fields for
// an entry of that source, or of another source that has them (the SDK
// keeps what a server sent, whatever the source).
func feedbackLine(e docsapi.FeedbackEntry) any {
	w := wire.FeedbackEntry{ID: e.ID, Path: e.Path, Comment: e.Comment, CreatedAt: wire.NullTime(e.CreatedAt),
		Source: string(e.Source), Status: string(e.Status)}
	if e.Helpful != docsapi.VoteUnknown {
		w.Vote = &wire.Vote{Helpful: e.Helpful == docsapi.VoteYes}
	}
	if e.Source == docsapi.FeedbackSourceContextual || e.Contact != "" {
		w.Contextual = &wire.Contextual{Contact: wire.NullString(e.Contact)}
	}
	if e.Source == docsapi.FeedbackSourceCodeSnippet || e.Code != "" || e.Filename != "" || e.Lang != "" {
		w.CodeSnippet = &wire.CodeSnippet{Code: e.Code, Filename: wire.NullString(e.Filename), Lang: wire.NullString(e.Lang)}
	}
	return w
}
