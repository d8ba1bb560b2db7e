package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

func updateCommand() *command {
	return &command{
		name:    "update",
		summary: "update a project's docs from its repository, optionally waiting for it (client)",
		help: `Triggers an update of the project (POST /v1/project/update/{projectId}): on a
self-hosted server, a re-read of the project's repository at its ref into the
documentation index that search answers from, reading only the files that
changed. Prints {"statusId": ...} on stdout; with --wait, waits until the
update ends and prints its status as JSON (summary, logs, commit and the files
changed), progress going to stderr. A trigger while an update is queued joins
it. A failed update leaves the previous index serving.` + clientHelp + `

Exit codes:
  0    success
  1    failure, including an error answered by the API
  2    usage error: a bad flag, argument or setting
  3    with --wait: the update ended failure
  4    with --wait: waiting timed out; the update is still running
  130  interrupted (Ctrl-C or SIGTERM) while waiting
`,
		examples: `docsapi update --project handbook
docsapi update --wait --timeout 10m | jq -r .summary`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			wait := fs.Bool("wait", false, "wait until the update ends (success or failure)")
			timeout := fs.Duration("timeout", docsapi.DefaultWaitTimeout, "how long to wait before giving up (exit code 4)")
			poll := fs.Duration("poll-interval", docsapi.DefaultWaitMinInterval, "the first interval between polls; later ones grow up to 30s")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				if *timeout <= 0 || *poll <= 0 {
					return usagef("--timeout and --poll-interval must be positive")
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				trig, err := c.Deployments.TriggerUpdate(ctx, "")
				if err != nil {
					return c.explain(err)
				}
				if !*wait {
					return printJSON(s.stdout, map[string]string{"statusId": trig.StatusID})
				}
				start := time.Now()
				var last docsapi.UpdateState
				params := docsapi.UpdateWaitParams{
					MinInterval: *poll, MaxInterval: max(docsapi.DefaultWaitMaxInterval, *poll), Timeout: *timeout,
					OnUpdate: func(u *docsapi.UpdateStatus) {
						if u.Status == last {
							return
						}
						last = u.Status
						fmt.Fprintf(s.stderr, "update %s: %s [%s]\n", u.ID, u.Status, time.Since(start).Round(time.Second))
					},
				}
				st, err := c.Deployments.WaitUpdate(ctx, trig.StatusID, params)
				return finishUpdateWait(s, c, trig.StatusID, st, err)
			}
		},
	}
}

// updateJSON is an update's status as the command prints it.
type updateJSON struct {
	StatusID  string   `json:"statusId"`
	ProjectID string   `json:"projectId"`
	Status    string   `json:"status"`
	Summary   string   `json:"summary"`
	Logs      []string `json:"logs"`
	CreatedAt string   `json:"createdAt"`
	EndedAt   *string  `json:"endedAt"`
	Commit    *struct {
		SHA          string              `json:"sha"`
		Ref          string              `json:"ref"`
		Message      string              `json:"message"`
		FilesChanged map[string][]string `json:"filesChanged"`
	} `json:"commit"`
}

func printUpdate(w io.Writer, u *docsapi.UpdateStatus) error {
	out := updateJSON{StatusID: u.ID, ProjectID: u.ProjectID, Status: string(u.Status), Summary: u.Summary,
		Logs: append([]string{}, u.Logs...), CreatedAt: u.CreatedAt.Format(time.RFC3339Nano)}
	if !u.EndedAt.IsZero() {
		e := u.EndedAt.Format(time.RFC3339Nano)
		out.EndedAt = &e
	}
	if u.Commit.SHA != "" {
		out.Commit = &struct {
			SHA          string              `json:"sha"`
			Ref          string              `json:"ref"`
			Message      string              `json:"message"`
			FilesChanged map[string][]string `json:"filesChanged"`
		}{u.Commit.SHA, u.Commit.Ref, u.Commit.Message, map[string][]string{
			"added":    append([]string{}, u.Commit.FilesChanged.Added...),
			"modified": append([]string{}, u.Commit.FilesChanged.Modified...),
			"removed":  append([]string{}, u.Commit.FilesChanged.Removed...),
		}}
	}
	return printJSON(w, out)
}

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// finishUpdateWait prints the status a wait ended with and turns the way
// it ended into the exit code: failure 3, timeout 4, interrupted 130.
func finishUpdateWait(s *stdio, c *apiClient, statusID string, st *docsapi.UpdateStatus, err error) error {
	if st != nil {
		if perr := printUpdate(s.stdout, st); perr != nil {
			return perr
		}
	}
	var (
		failed  *docsapi.UpdateFailedError
		timeout *docsapi.UpdateWaitTimeoutError
	)
	switch {
	case err == nil:
		fmt.Fprintf(s.stderr, "update %s: %s\n", st.ID, st.Summary)
		return nil
	case errors.As(err, &failed):
		return &exitError{code: exitJobFailed, msg: fmt.Sprintf("update %s failed: %s", failed.Status.ID, failed.Status.Summary)}
	case errors.As(err, &timeout):
		again := fmt.Sprintf("; update %s goes on: follow it with GET /v1/project/update-status/%s", statusID, statusID)
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitInterrupted, msg: "interrupted" + again}
		}
		return &exitError{code: exitWaitTimeout, msg: fmt.Sprintf("stopped waiting after %s%s", timeout.Waited.Round(time.Second), again)}
	}
	return c.explain(err)
}
