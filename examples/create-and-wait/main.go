// Command create-and-wait starts an agent job from a prompt, waits for it to
// finish while printing its progress, and prints its pull request.
//
// It shows AgentJobs.CreateAndWait with an OnUpdate callback, and how a
// program tells the ways it can end apart: a failed job
// (*docsapi.JobFailedError), a wait that ran out of time or was interrupted
// (*docsapi.WaitTimeoutError), and a refused request (errors.Is with the
// sentinels; RetryAfter on 429).
//
// Run it against the hosted service, or a self-hosted server with
// DOCSAPI_BASE_URL:
//
//	export DOCSAPI_KEY=mint_...                         # an admin key that may write
//	export DOCSAPI_PROJECT=handbook                     # the project to work on
//	export DOCSAPI_BASE_URL=http://localhost:8080/api   # optional: a self-hosted server
//	go run ./examples/create-and-wait -prompt "Document the new --verbose flag" [-timeout 30m]
//
// For a self-hosted server on this machine, run from the repository root
//
//	go run ./server/examples/embed-server   # serves the API above and prints a key
//
// whose jobs run once it is given a repository and an agent (-repo, see its
// doc comment; without, they stay active), or see server/examples/quickstart,
// which runs the whole product once, offline, in one command.
//
// It prints a line each time the job's status changes, then
//
//	pull request: https://github.com/acme/handbook/pull/42
//
// or "completed without a pull request" (nothing changed, or the project
// pushes its branch directly). A failed job, a timeout, Ctrl-C and a refused
// request end it with a message on standard error and exit status 1; a job
// that was created goes on running on the server, and its ID is printed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

type config struct {
	key, baseURL, project string // from the environment
	prompt                string
	wait                  docsapi.WaitParams // Timeout from -timeout; OnUpdate is set by run
}

func main() {
	prompt := flag.String("prompt", "", "what the agent should change in the docs (required)")
	timeout := flag.Duration("timeout", docsapi.DefaultWaitTimeout, "how long to wait for the job")
	flag.Parse()
	cfg := config{
		key:     os.Getenv("DOCSAPI_KEY"),
		baseURL: os.Getenv("DOCSAPI_BASE_URL"),
		project: os.Getenv("DOCSAPI_PROJECT"),
		prompt:  *prompt,
		wait:    docsapi.WaitParams{Timeout: *timeout},
	}

	// Ctrl-C ends the wait (not the job) through the context.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "create-and-wait:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	if strings.TrimSpace(cfg.prompt) == "" {
		return errors.New("-prompt is required: say what the agent should change")
	}
	client, err := newClient(cfg)
	if err != nil {
		return err
	}

	start := time.Now()
	var last docsapi.JobStatus
	wait := cfg.wait
	wait.OnUpdate = func(job *docsapi.Job) { // every job seen; print the changes
		if job.Status != last {
			fmt.Fprintf(stdout, "%6s  job %s: %s\n", time.Since(start).Round(time.Second), job.ID, job.Status)
			last = job.Status
		}
	}
	job, err := client.AgentJobs.CreateAndWait(ctx, "", docsapi.CreateJobParams{Prompt: cfg.prompt}, wait)
	if err != nil {
		return explain(err, cfg.project)
	}
	switch {
	case job.Status == docsapi.JobStatusArchived:
		return fmt.Errorf("job %s was archived before it finished", job.ID)
	case job.PRLink == "":
		fmt.Fprintln(stdout, "completed without a pull request")
	default:
		fmt.Fprintln(stdout, "pull request:", job.PRLink)
	}
	return nil
}

// newClient builds the client from the environment's values. The SDK never
// reads the environment itself.
func newClient(cfg config) (*docsapi.Client, error) {
	if cfg.key == "" {
		return nil, errors.New("DOCSAPI_KEY is not set: export an admin API key (mint_...)")
	}
	if cfg.project == "" {
		return nil, errors.New("DOCSAPI_PROJECT is not set: export the ID of the project to work on")
	}
	opts := []docsapi.Option{
		docsapi.WithProjectID(cfg.project),
		docsapi.WithUserAgent("create-and-wait-example"),
	}
	if cfg.baseURL != "" {
		opts = append(opts, docsapi.WithBaseURL(cfg.baseURL))
	}
	return docsapi.NewClient(cfg.key, opts...)
}

// explain turns an error of CreateAndWait into a message that says what
// happened and what to do. The original error stays wrapped.
func explain(err error, project string) error {
	var (
		failed   *docsapi.JobFailedError
		timedOut *docsapi.WaitTimeoutError
		apiErr   *docsapi.APIError
	)
	switch {
	case errors.As(err, &failed):
		// The API does not say why; the server's operator can.
		return fmt.Errorf("the agent could not carry out the prompt: %w", err)
	case errors.As(err, &timedOut) && errors.Is(err, context.Canceled):
		// Job is the one Create returned, or a later one: never nil here.
		return fmt.Errorf("interrupted: job %s goes on running on the server", timedOut.Job.ID)
	case errors.As(err, &timedOut):
		// The message names the job, its last status and the time waited.
		return fmt.Errorf("gave up; the job goes on running on the server: %w", err)
	case errors.Is(err, docsapi.ErrRateLimited):
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			return fmt.Errorf("rate limited: try again in %s: %w", apiErr.RetryAfter, err)
		}
		return fmt.Errorf("rate limited: try again later: %w", err)
	case errors.Is(err, docsapi.ErrUnauthorized):
		return fmt.Errorf("the key was refused (invalid, revoked or expired): %w", err)
	case errors.Is(err, docsapi.ErrForbidden):
		return fmt.Errorf("the key may not create jobs in project %q (another project's key, or read-only): %w", project, err)
	case errors.Is(err, docsapi.ErrNotFound):
		return fmt.Errorf("no project %q: %w", project, err)
	}
	return err
}
