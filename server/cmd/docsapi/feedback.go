package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func feedbackListCommand() *command {
	return &command{
		name:    "feedback list",
		summary: "list readers' feedback in the server's storage, newest first",
		help: `Lists the feedback entries of a project, newest first: a table (comments cut
to one line), or JSON lines with --format json (every field). --status and
--source select entries as the export's filters do.

It reads a self-hosted server's storage; 'feedback export' exports the same
entries through the API, with an API key, from any server.` + storageHelp,
		examples: `docsapi feedback list --project handbook --status pending,in_progress
docsapi feedback list --project handbook --source code_snippet --format json --limit 0`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			var project projectFlag
			project.register(fs, "project `ID`")
			source := fs.String("source", "", "only this `SOURCE`: code_snippet, contextual, agent or thumbs_only")
			var statuses listFlag
			fs.Var(&statuses, "status", "only these `STATUSES`: pending, in_progress, resolved, dismissed;\nrepeat or separate with commas")
			limit := fs.Int("limit", 50, "at most `N` entries; 0 lists all")
			format := fs.String("format", "table", "output `FORMAT`: table or json (one object a line)")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				if err := checkListFormat(*format); err != nil {
					return err
				}
				projectID, err := project.get(s)
				if err != nil {
					return err
				}
				f := store.FeedbackFilter{ProjectID: projectID, Source: store.FeedbackSource(*source)}
				for _, st := range statuses {
					f.Statuses = append(f.Statuses, store.FeedbackStatus(st))
				}
				switch {
				case *limit < 0:
					return usagef("--limit %d: must be 0 (all) or more", *limit)
				case f.Source != "" && !f.Source.Known():
					return usagef("unknown --source %q: use code_snippet, contextual, agent or thumbs_only", *source)
				}
				for _, st := range f.Statuses {
					if !st.Known() {
						return usagef("unknown --status %q: use pending, in_progress, resolved or dismissed", st)
					}
				}
				_, st, _, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				var tw *tabwriter.Writer
				enc := json.NewEncoder(s.stdout)
				if *format == "table" {
					tw = tabwriter.NewWriter(s.stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tCREATED\tSTATUS\tSOURCE\tPATH\tHELPFUL\tCOMMENT")
				}
				err = eachFeedback(ctx, st, f, *limit, func(e store.Feedback) error {
					if tw == nil {
						return enc.Encode(newFeedbackJSON(e))
					}
					_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, timeOrDash(e.CreatedAt), e.Status, e.Source, e.Path,
						helpfulText(e), oneLine(e))
					return err
				})
				if err == nil && tw != nil {
					err = tw.Flush()
				}
				return err
			}
		},
	}
}

// eachFeedback calls fn with the entries f selects, newest first, at most
// limit of them (0: all), a page of the store at a time.
func eachFeedback(ctx context.Context, st store.Store, f store.FeedbackFilter, limit int, fn func(store.Feedback) error) error {
	q := store.FeedbackQuery{FeedbackFilter: f, Limit: 500}
	for n := 0; ; {
		page, err := st.QueryFeedback(ctx, q)
		if err != nil {
			return err
		}
		for _, e := range page.Entries {
			if limit > 0 && n == limit {
				return nil
			}
			if err := fn(e); err != nil {
				return err
			}
			n++
		}
		if !page.HasMore || len(page.Entries) == 0 {
			return nil
		}
		k := page.Entries[len(page.Entries)-1].Key()
		q.After = &k
	}
}

// helpfulText is the vote of a page's feedback, or "-".
func helpfulText(e store.Feedback) string {
	switch {
	case e.Source != store.FeedbackSourceContextual && e.Source != store.FeedbackSourceThumbsOnly:
		return "-"
	case e.Helpful:
		return "yes"
	}
	return "no"
}

// oneLine is the entry's comment on one line, cut to 60 characters, for
// the table ("-" for none).
func oneLine(e store.Feedback) string {
	if e.Comment == nil {
		return "-"
	}
	c := strings.Join(strings.Fields(*e.Comment), " ")
	if r := []rune(c); len(r) > 60 {
		c = string(r[:59]) + "…"
	}
	return fmt.Sprintf("%q", c)
}

// feedbackJSON is an entry as feedback list --format json prints it: every
// field, whatever its source.
type feedbackJSON struct {
	ID        string    `json:"id"`
	Project   string    `json:"project"`
	Path      string    `json:"path"`
	Source    string    `json:"source"`
	Status    string    `json:"status"`
	Helpful   bool      `json:"helpful"`
	Comment   *string   `json:"comment"`
	Contact   string    `json:"contact"`
	Code      string    `json:"code"`
	Filename  string    `json:"filename"`
	Lang      string    `json:"lang"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func newFeedbackJSON(e store.Feedback) feedbackJSON {
	return feedbackJSON{ID: e.ID, Project: e.ProjectID, Path: e.Path, Source: string(e.Source), Status: string(e.Status),
		Helpful: e.Helpful, Comment: e.Comment, Contact: e.Contact, Code: e.Code, Filename: e.Filename, Lang: e.Lang,
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC()}
}

func feedbackSetStatusCommand() *command {
	return &command{
		name:    "feedback set-status",
		args:    "ID STATUS",
		summary: "move a feedback entry in the server's storage to another status",
		help: `Moves the feedback entry with this ID (as 'feedback list' shows it) to
STATUS: pending, in_progress, resolved or dismissed. Setting the status it
has changes nothing.` + storageHelp,
		examples: `docsapi feedback set-status --project handbook fb_Q2x8mV1cT7kLp0ZsW4aN resolved`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			var project projectFlag
			project.register(fs, "project `ID`")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args, "ID", "STATUS"); err != nil {
					return err
				}
				projectID, err := project.get(s)
				if err != nil {
					return err
				}
				status := store.FeedbackStatus(args[1])
				if !status.Known() {
					return usagef("unknown status %q: use pending, in_progress, resolved or dismissed", args[1])
				}
				srv, st, _, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				e, err := srv.SetFeedbackStatus(ctx, projectID, args[0], status)
				if errors.Is(err, store.ErrNotFound) {
					return &hintError{err: fmt.Errorf("no feedback %q in project %q", args[0], projectID), hint: "list the entries with 'docsapi feedback list --project " + projectID + "'"}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(s.stderr, "feedback %s is %s\n", e.ID, e.Status)
				return st.Close()
			}
		},
	}
}
