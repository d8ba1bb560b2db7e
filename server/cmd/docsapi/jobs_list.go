package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"

	docsapi "github.com/docsapi/docsapi-go"
)

func jobsListCommand() *command {
	return &command{
		name:    "jobs list",
		summary: "list a project's jobs, newest first (self-hosted servers)",
		help: `Lists the project's agent jobs, newest first: a table, or JSON lines with
--format json (each job as 'jobs get' prints it, on one line). --status keeps
the jobs in the statuses given; --from and --to keep those created in a range
(a date, midnight UTC, or an ISO 8601 time; --to is exclusive), which finds a
job whose create answer was lost.

Only self-hosted servers list jobs: the hosted service has no job list.` + clientHelp,
		examples: `docsapi jobs list --status active
docsapi jobs list --from 2026-10-01T12:00:00Z --to 2026-10-01T12:05:00Z
docsapi jobs list --status failed --limit 0 --format json | jq -r .id`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			var statuses listFlag
			fs.Var(&statuses, "status", "only these `STATUSES`: active, completed, archived, failed;\nrepeat or separate with commas")
			from := fs.String("from", "", "only jobs created at or after `DATE` (or time), such as 2026-10-01")
			to := fs.String("to", "", "only jobs created before `DATE` (or time), such as 2026-11-01")
			limit := fs.Int("limit", 50, "at most `N` jobs; 0 lists all")
			format := fs.String("format", "table", "output `FORMAT`: table or json (one object a line)")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				if err := checkListFormat(*format); err != nil {
					return err
				}
				if *limit < 0 {
					return usagef("--limit %d: must be 0 (all) or more", *limit)
				}
				var params docsapi.JobsParams
				for _, st := range statuses {
					if !docsapi.JobStatus(st).Known() {
						return usagef("unknown --status %q: use active, completed, archived or failed", st)
					}
					params.Status = append(params.Status, docsapi.JobStatus(st))
				}
				var err error
				if params.DateFrom, params.DateTo, err = dateFlags(*from, *to); err != nil {
					return err
				}
				if *limit > 0 {
					params.Limit = min(*limit, docsapi.MaxJobsLimit)
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				var tw *tabwriter.Writer
				enc := json.NewEncoder(s.stdout)
				if *format == "table" {
					tw = tabwriter.NewWriter(s.stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tCREATED\tSTATUS\tMODEL\tPULL REQUEST\tARCHIVED")
				}
				n := 0
				for job, err := range c.AgentJobs.All(ctx, "", params) {
					if err != nil {
						return c.explain(err)
					}
					if tw == nil {
						err = enc.Encode(newJobJSON(job))
					} else {
						_, err = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", job.ID, timeOrDash(job.CreatedAt), job.Status,
							dash(job.Model), dash(job.PRLink), timeOrDash(job.ArchivedAt))
					}
					if err != nil {
						return err
					}
					// Stop at once: another turn would ask for a page
					// that is not printed.
					if n++; n == *limit {
						break
					}
				}
				if tw != nil {
					return tw.Flush()
				}
				return nil
			}
		},
	}
}

// dateFlags reads --from and --to, each a date or an ISO 8601 time, or
// empty for an open side.
func dateFlags(from, to string) (docsapi.DateBound, docsapi.DateBound, error) {
	f, err := docsapi.ParseDateBound(from)
	if err != nil {
		return f, docsapi.DateBound{}, usagef("--from %q: use a date such as 2026-10-01 or a time such as 2026-10-01T12:00:00Z", from)
	}
	t, err := docsapi.ParseDateBound(to)
	if err != nil {
		return f, t, usagef("--to %q: use a date such as 2026-11-01 or a time such as 2026-11-01T00:00:00Z", to)
	}
	return f, t, nil
}
