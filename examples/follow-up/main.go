// Command follow-up gives an existing agent job a further instruction and
// waits for the agent to carry it out on the same branch, so that the job's
// pull request is updated rather than a second one opened.
//
// It shows AgentJobs.Get, SendMessage and Wait, and the errors a follow-up
// meets: no such job (ErrNotFound), an archived job that takes no more
// messages (ErrBadRequest, with the server's reason), a failed run
// (*docsapi.JobFailedError), a timeout (*docsapi.WaitTimeoutError) and a
// rate limit (RetryAfter on 429).
//
// Run it against the hosted service, or a self-hosted server with
// DOCSAPI_BASE_URL:
//
//	export DOCSAPI_KEY=mint_...                         # an admin key that may write
//	export DOCSAPI_PROJECT=handbook                     # the job's project
//	export DOCSAPI_BASE_URL=http://localhost:8080/api   # optional: a self-hosted server
//	go run ./examples/follow-up -job JOB_ID -prompt "Also add an example to the quickstart" [-timeout 30m]
//
// For a self-hosted server on this machine, run from the repository root
//
//	go run ./server/examples/embed-server   # serves the API above and prints a key
//
// whose jobs run once it is given a repository and an agent (-repo, see its
// doc comment; without, they stay active), or see server/examples/quickstart,
// which runs the whole product once, offline, in one command.
//
// It prints the job's state before the message, a line each time its status
// changes, then the pull request, for example
//
//	pull request updated: https://github.com/acme/handbook/pull/42
//
// ("opened" when the job had none before, "completed without a pull request"
// when nothing changed or the project pushes its branch directly). Errors end
// it with a message on standard error and exit status 1.
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
	jobID, prompt         string
	wait                  docsapi.WaitParams // Timeout from -timeout; OnUpdate is set by run
}

func main() {
	jobID := flag.String("job", "", "the ID of the job to continue (required)")
	prompt := flag.String("prompt", "", "the further instruction (required)")
	timeout := flag.Duration("timeout", docsapi.DefaultWaitTimeout, "how long to wait for the job")
	flag.Parse()
	cfg := config{
		key:     os.Getenv("DOCSAPI_KEY"),
		baseURL: os.Getenv("DOCSAPI_BASE_URL"),
		project: os.Getenv("DOCSAPI_PROJECT"),
		jobID:   *jobID,
		prompt:  *prompt,
		wait:    docsapi.WaitParams{Timeout: *timeout},
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "follow-up:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	switch {
	case cfg.jobID == "":
		return errors.New("-job is required: the ID of the job to continue")
	case strings.TrimSpace(cfg.prompt) == "":
		return errors.New("-prompt is required: the further instruction")
	}
	client, err := newClient(cfg)
	if err != nil {
		return err
	}

	// The job as it is now, to compare its pull request with the one after.
	before, err := client.AgentJobs.Get(ctx, "", cfg.jobID)
	if err != nil {
		return explain(err, cfg)
	}
	fmt.Fprintf(stdout, "job %s is %s; pull request: %s\n", before.ID, before.Status, orNone(before.PRLink))

	start := time.Now()
	var last docsapi.JobStatus
	wait := cfg.wait
	wait.OnUpdate = func(job *docsapi.Job) { // every job seen; print the changes
		if job.Status != last {
			fmt.Fprintf(stdout, "%6s  job %s: %s\n", time.Since(start).Round(time.Second), job.ID, job.Status)
			last = job.Status
		}
	}

	job, err := client.AgentJobs.SendMessage(ctx, "", cfg.jobID, docsapi.SendMessageParams{Prompt: cfg.prompt})
	if err != nil {
		return explain(err, cfg)
	}
	// The job as the message left it (active again) is the first status
	// shown: Wait's first poll may already find the new run finished.
	wait.OnUpdate(job)
	after, err := client.AgentJobs.Wait(ctx, "", cfg.jobID, wait)
	if err != nil {
		return explain(err, cfg)
	}
	switch {
	case after.Status == docsapi.JobStatusArchived:
		return fmt.Errorf("job %s was archived before it finished", after.ID)
	case after.PRLink == "":
		fmt.Fprintln(stdout, "completed without a pull request")
	case after.PRLink == before.PRLink:
		fmt.Fprintln(stdout, "pull request updated:", after.PRLink)
	case before.PRLink == "":
		fmt.Fprintln(stdout, "pull request opened:", after.PRLink)
	default: // the earlier one was closed or merged meanwhile
		fmt.Fprintf(stdout, "pull request opened: %s (the job's earlier one was %s)\n", after.PRLink, before.PRLink)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// newClient builds the client from the environment's values. The SDK never
// reads the environment itself.
func newClient(cfg config) (*docsapi.Client, error) {
	if cfg.key == "" {
		return nil, errors.New("DOCSAPI_KEY is not set: export an admin API key (mint_...)")
	}
	if cfg.project == "" {
		return nil, errors.New("DOCSAPI_PROJECT is not set: export the ID of the job's project")
	}
	opts := []docsapi.Option{
		docsapi.WithProjectID(cfg.project),
		docsapi.WithUserAgent("follow-up-example"),
	}
	if cfg.baseURL != "" {
		opts = append(opts, docsapi.WithBaseURL(cfg.baseURL))
	}
	return docsapi.NewClient(cfg.key, opts...)
}

// explain turns an error into a message that says what happened and what to
// do. The original error stays wrapped.
func explain(err error, cfg config) error {
	var (
		failed   *docsapi.JobFailedError
		timedOut *docsapi.WaitTimeoutError
		apiErr   *docsapi.APIError
	)
	switch {
	case errors.As(err, &failed):
		// The API does not say why; the server's operator can.
		return fmt.Errorf("the agent could not carry out the follow-up: %w", err)
	case errors.As(err, &timedOut) && errors.Is(err, context.Canceled):
		return fmt.Errorf("interrupted: job %s goes on running on the server", cfg.jobID)
	case errors.As(err, &timedOut):
		// The message names the job, its last status and the time waited.
		return fmt.Errorf("gave up; the job goes on running on the server: %w", err)
	case errors.Is(err, docsapi.ErrNotFound):
		return fmt.Errorf("no job %s in project %q: %w", cfg.jobID, cfg.project, err)
	case errors.Is(err, docsapi.ErrBadRequest) && errors.As(err, &apiErr):
		// For example an archived job, which takes no more messages.
		return fmt.Errorf("the server refused the message: %s: %w", apiErr.Message, err)
	case errors.Is(err, docsapi.ErrRateLimited):
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			return fmt.Errorf("rate limited: try again in %s: %w", apiErr.RetryAfter, err)
		}
		return fmt.Errorf("rate limited: try again later: %w", err)
	case errors.Is(err, docsapi.ErrUnauthorized):
		return fmt.Errorf("the key was refused (invalid, revoked or expired): %w", err)
	case errors.Is(err, docsapi.ErrForbidden):
		return fmt.Errorf("the key may not use project %q (another project's key, or read-only): %w", cfg.project, err)
	}
	return err
}
