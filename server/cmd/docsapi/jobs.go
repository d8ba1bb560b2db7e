package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// maxPromptBytes bounds a prompt read from a file or stdin: far above any
// server's limit, low enough that a wrong file fails fast.
const maxPromptBytes = 1 << 20

const waitHelp = `
Waiting polls the job at growing intervals (from --poll-interval up to 30s)
and prints each status change on stderr; the final job goes to stdout, also
when it failed or the wait timed out.

` + exitCodesHelp

func jobsCreateCommand() *command {
	return &command{
		name:    "jobs create",
		summary: "start an agent job, optionally waiting for it",
		help: `Starts an agent job: the agent edits the project's documentation as the
prompt says and proposes the change as a pull request. Prints the job as JSON
on stdout; with --wait, waits until it is completed, archived or failed.` + clientHelp + "\n" + waitHelp,
		examples: `docsapi jobs create --prompt "Document the new --verbose flag"
docsapi jobs create --prompt-file release-notes.md --wait --timeout 1h | jq -r .prLink
git log -1 --format=%B | docsapi jobs create --prompt - --wait
docsapi jobs create --prompt "Fix typos" --idempotency-key "$CI_PIPELINE_ID"   # self-hosted: safe to retry`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			var pf promptFlags
			pf.register(fs)
			var wf waitFlags
			wf.register(fs, true)
			idem := fs.String("idempotency-key", "", "`KEY` that makes retrying this request safe: the same key and prompt\ngive the same job (honoured by self-hosted servers, not by the hosted service)")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				prompt, err := pf.read(s.stdin)
				if err != nil {
					return err
				}
				if err := wf.check(); err != nil {
					return err
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				opts := requestOptions(*idem)
				params := docsapi.CreateJobParams{Prompt: prompt}
				if !wf.wait {
					job, err := c.AgentJobs.Create(ctx, "", params, opts...)
					if err != nil {
						return c.explain(err)
					}
					return printJob(s.stdout, job)
				}
				job, err := c.AgentJobs.CreateAndWait(ctx, "", params, wf.params(s.stderr), opts...)
				return finishWait(s, c, "", job, err)
			}
		},
	}
}

func jobsGetCommand() *command {
	return &command{
		name:    "jobs get",
		args:    "ID",
		summary: "print a job",
		help:    `Prints the job as JSON on stdout.` + clientHelp,
		examples: `docsapi jobs get job_8fK2mQ --project handbook
docsapi jobs get job_8fK2mQ | jq -r .status`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args, "ID"); err != nil {
					return err
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				job, err := c.AgentJobs.Get(ctx, "", args[0])
				if err != nil {
					return c.explain(err)
				}
				return printJob(s.stdout, job)
			}
		},
	}
}

func jobsWaitCommand() *command {
	return &command{
		name:     "jobs wait",
		args:     "ID",
		summary:  "wait until a job is completed, archived or failed",
		help:     `Waits for an existing job, for example one whose earlier wait timed out.` + clientHelp + "\n" + waitHelp,
		examples: `docsapi jobs wait job_8fK2mQ --timeout 2h`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			var wf waitFlags
			wf.register(fs, false)
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args, "ID"); err != nil {
					return err
				}
				if err := wf.check(); err != nil {
					return err
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				job, err := c.AgentJobs.Wait(ctx, "", args[0], wf.params(s.stderr))
				return finishWait(s, c, args[0], job, err)
			}
		},
	}
}

func jobsMessageCommand() *command {
	return &command{
		name:    "jobs message",
		args:    "ID",
		summary: "give a job a follow-up instruction",
		help: `Sends a follow-up instruction to an existing job: the agent works on the same
branch again, so the same pull request is updated. Prints the job as JSON;
with --wait, waits for it as jobs wait does.` + clientHelp + "\n" + waitHelp,
		examples: `docsapi jobs message job_8fK2mQ --prompt "Also update the FAQ" --wait`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			var pf promptFlags
			pf.register(fs)
			var wf waitFlags
			wf.register(fs, true)
			idem := fs.String("idempotency-key", "", "`KEY` that makes retrying this request safe (self-hosted servers)")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args, "ID"); err != nil {
					return err
				}
				prompt, err := pf.read(s.stdin)
				if err != nil {
					return err
				}
				if err := wf.check(); err != nil {
					return err
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				job, err := c.AgentJobs.SendMessage(ctx, "", args[0], docsapi.SendMessageParams{Prompt: prompt}, requestOptions(*idem)...)
				if err != nil {
					return c.explain(err)
				}
				if !wf.wait {
					return printJob(s.stdout, job)
				}
				p := wf.params(s.stderr)
				p.OnUpdate(job)
				id := job.ID
				job, err = c.AgentJobs.Wait(ctx, "", id, p)
				return finishWait(s, c, id, job, err)
			}
		},
	}
}

func requestOptions(idempotencyKey string) []docsapi.RequestOption {
	if idempotencyKey == "" {
		return nil
	}
	return []docsapi.RequestOption{docsapi.WithIdempotencyKey(idempotencyKey)}
}

// promptFlags read the prompt from exactly one source.
type promptFlags struct {
	fs         *flag.FlagSet
	text, file string
}

func (p *promptFlags) register(fs *flag.FlagSet) {
	p.fs = fs
	fs.StringVar(&p.text, "prompt", "", "the instruction `TEXT`; \"-\" reads it from stdin")
	fs.StringVar(&p.file, "prompt-file", "", "read the instruction from `FILE` (\"-\": stdin)")
}

func (p *promptFlags) read(stdin io.Reader) (string, error) {
	text, file := given(p.fs, "prompt"), given(p.fs, "prompt-file")
	var from io.Reader
	switch {
	case text && file:
		return "", usagef("give the prompt once: --prompt or --prompt-file, not both")
	case !text && !file:
		return "", usagef("a prompt is required: --prompt TEXT, --prompt-file FILE, or --prompt - to read stdin")
	case text && p.text != "-":
		if strings.TrimSpace(p.text) == "" {
			return "", usagef("the prompt is empty")
		}
		return p.text, nil
	case text || p.file == "-":
		from = stdin
	default:
		f, err := os.Open(p.file)
		if err != nil {
			return "", usagef("--prompt-file: %v", err)
		}
		defer f.Close()
		from = f
	}
	b, err := io.ReadAll(io.LimitReader(from, maxPromptBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading the prompt: %w", err)
	}
	if len(b) > maxPromptBytes {
		return "", usagef("the prompt is longer than %d bytes", maxPromptBytes)
	}
	prompt := strings.TrimSpace(string(b))
	if prompt == "" {
		return "", usagef("the prompt read is empty")
	}
	return prompt, nil
}

// waitFlags configure waiting for a job.
type waitFlags struct {
	wait          bool
	timeout, poll time.Duration
}

func (w *waitFlags) register(fs *flag.FlagSet, optional bool) {
	if optional {
		fs.BoolVar(&w.wait, "wait", false, "wait until the job is completed, archived or failed")
	} else {
		w.wait = true
	}
	fs.DurationVar(&w.timeout, "timeout", docsapi.DefaultWaitTimeout, "how long to wait before giving up (exit code 4)")
	fs.DurationVar(&w.poll, "poll-interval", docsapi.DefaultWaitMinInterval, "the first interval between polls; later ones grow up to 30s")
}

func (w *waitFlags) check() error {
	switch {
	case w.timeout <= 0:
		return usagef("--timeout must be positive, got %s", w.timeout)
	case w.poll <= 0:
		return usagef("--poll-interval must be positive, got %s", w.poll)
	}
	return nil
}

// params returns the SDK's wait parameters, with progress lines on w: one
// per status change, so a long wait shows life without flooding the log.
func (w *waitFlags) params(out io.Writer) docsapi.WaitParams {
	start := time.Now()
	var last docsapi.JobStatus
	return docsapi.WaitParams{
		MinInterval: w.poll,
		MaxInterval: max(docsapi.DefaultWaitMaxInterval, w.poll),
		Timeout:     w.timeout,
		OnUpdate: func(job *docsapi.Job) {
			if job.Status == last {
				return
			}
			last = job.Status
			detail := ""
			switch {
			case job.Status == docsapi.JobStatusCompleted && job.PRLink != "":
				detail = ", pull request " + job.PRLink
			case job.Status == docsapi.JobStatusCompleted:
				detail = ", no pull request (nothing changed, or the project pushes its branch only)"
			case !job.Status.Known():
				detail = " (a status this program does not know; still waiting)"
			}
			fmt.Fprintf(out, "job %s: %s%s [%s]\n", job.ID, job.Status, detail, time.Since(start).Round(time.Second))
		},
	}
}

// finishWait prints the job a wait ended with and turns the way it ended
// into the documented exit code. jobID is the job waited for, if known
// before any poll answered.
func finishWait(s *stdio, c *apiClient, jobID string, job *docsapi.Job, err error) error {
	if job != nil {
		if perr := printJob(s.stdout, job); perr != nil {
			return perr
		}
	}
	var (
		failed  *docsapi.JobFailedError
		timeout *docsapi.WaitTimeoutError
	)
	switch {
	case err == nil:
		if job.Status == docsapi.JobStatusArchived {
			fmt.Fprintf(s.stderr, "job %s was archived before it completed\n", job.ID)
		}
		return nil
	case errors.As(err, &failed):
		// The API keeps the reason from its clients; on a self-hosted
		// server, its operator reads it from the storage.
		return &exitError{code: exitJobFailed, msg: fmt.Sprintf("job %s failed; the API does not say why: a self-hosted server's operator reads the reason with 'docsapi jobs failure --project %s %s'",
			failed.Job.ID, c.project, failed.Job.ID)}
	case errors.As(err, &timeout):
		again := ""
		switch {
		case timeout.Job != nil:
			again = fmt.Sprintf("; job %s is still %s: wait again with 'docsapi jobs wait %s'", timeout.Job.ID, timeout.Job.Status, timeout.Job.ID)
		case jobID != "":
			again = fmt.Sprintf("; wait again with 'docsapi jobs wait %s'", jobID)
		}
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitInterrupted, msg: "interrupted" + again}
		}
		msg := fmt.Sprintf("stopped waiting after %s%s", timeout.Waited.Round(time.Second), again)
		if timeout.LastErr != nil {
			msg += fmt.Sprintf(" (last poll: %v)", timeout.LastErr)
		}
		return &exitError{code: exitWaitTimeout, msg: msg}
	}
	return c.explain(err)
}

func printJob(w io.Writer, job *docsapi.Job) error {
	b, err := json.MarshalIndent(newJobJSON(*job), "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// jobJSON is a job as the command prints it: in the API's shape (the Job
// schema), null for what the job lacks. createdAt is nullable here, unlike
// in the server's answers, since the hosted service may leave it out.
type jobJSON struct {
	ID         string         `json:"id"`
	Status     string         `json:"status"`
	Source     wire.JobSource `json:"source"`
	Model      string         `json:"model"`
	PRLink     *string        `json:"prLink"`
	CreatedAt  *string        `json:"createdAt"`
	ArchivedAt *string        `json:"archivedAt"`
}

func newJobJSON(j docsapi.Job) jobJSON {
	return jobJSON{
		ID:         j.ID,
		Status:     string(j.Status),
		Source:     wire.JobSource{Repository: j.Source.Repository, Ref: wire.NullString(j.Source.Ref)},
		Model:      j.Model,
		PRLink:     wire.NullString(j.PRLink),
		CreatedAt:  wire.NullTime(j.CreatedAt),
		ArchivedAt: wire.NullTime(j.ArchivedAt),
	}
}
