package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func jobsFailureCommand() *command {
	return &command{
		name:    "jobs failure",
		args:    "ID",
		summary: "print why a job failed, from the server's storage",
		help: `Prints the status of the job with this ID and, if it failed, why: the reason
the server recorded, which the API keeps from its clients (a failed job shows
them only its status). A job that did not fail is said to have no failure
reason; a job archived after it failed keeps its reason.

A table-like text, or one JSON object with --format json:
{"id","project","status","failureReason","attempts","updatedAt"}, with
failureReason null for a job that did not fail.` + storageHelp,
		examples: `docsapi jobs failure --project handbook job_Q2x8mV1cT7kLp0ZsW4aN
docsapi jobs list --status failed --format json | jq -r .id | xargs -n1 docsapi jobs failure --project handbook`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			var project projectFlag
			project.register(fs, "project `ID`")
			format := fs.String("format", "text", "output `FORMAT`: text or json")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args, "ID"); err != nil {
					return err
				}
				if *format != "text" && *format != "json" {
					return usagef("unknown format %q: use text or json", *format)
				}
				projectID, err := project.get(s)
				if err != nil {
					return err
				}
				_, st, _, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				job, err := st.Job(ctx, projectID, args[0])
				if errors.Is(err, store.ErrNotFound) {
					return &hintError{
						err:  fmt.Errorf("no job %q in project %q", args[0], projectID),
						hint: "check the ID and --project (or DOCSAPI_PROJECT); 'docsapi jobs list --status failed' lists a project's failed jobs through the API",
					}
				}
				if err != nil {
					return err
				}
				if *format == "json" {
					return json.NewEncoder(s.stdout).Encode(newJobFailureJSON(job))
				}
				return printJobFailure(s, job)
			}
		},
	}
}

// printJobFailure writes the job's status line, then its failure reason as
// recorded, or that it has none.
func printJobFailure(s *stdio, j store.Job) error {
	attempts := "attempts"
	if j.Attempts == 1 {
		attempts = "attempt"
	}
	fmt.Fprintf(s.stdout, "job %s in project %s: %s (last change %s, %d %s)\n",
		j.ID, j.ProjectID, j.Status, timeOrDash(j.UpdatedAt), j.Attempts, attempts)
	switch {
	case j.FailureReason != "":
		_, err := fmt.Fprintf(s.stdout, "reason: %s\n", j.FailureReason)
		return err
	case j.Status == store.JobStatusFailed:
		_, err := fmt.Fprintln(s.stdout, "reason: none was recorded")
		return err
	}
	_, err := fmt.Fprintf(s.stdout, "it did not fail: no failure reason\n")
	return err
}

// jobFailureJSON is a job as jobs failure --format json prints it.
type jobFailureJSON struct {
	ID            string    `json:"id"`
	Project       string    `json:"project"`
	Status        string    `json:"status"`
	FailureReason *string   `json:"failureReason"`
	Attempts      int       `json:"attempts"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

func newJobFailureJSON(j store.Job) jobFailureJSON {
	out := jobFailureJSON{ID: j.ID, Project: j.ProjectID, Status: string(j.Status), Attempts: j.Attempts, UpdatedAt: j.UpdatedAt.UTC()}
	if j.FailureReason != "" {
		out.FailureReason = &j.FailureReason
	}
	return out
}
