// Command redeploy-and-wait deploys the documentation site and waits for the
// deployment to end, as a CI step after a merge would: an update from the
// project's deployment branch, or with -branch a preview deployment of
// another branch.
//
// It shows Deployments.TriggerUpdate, TriggerPreview and WaitUpdate with an
// OnUpdate callback, and how a program tells the ways it can end apart: a
// failed deployment (*docsapi.UpdateFailedError, whose status carries the
// build's summary and logs), a wait that ran out of time or was interrupted
// (*docsapi.UpdateWaitTimeoutError), and a refused request (errors.Is with
// the sentinels, the service's reason in the *docsapi.APIError).
//
// Run it against the hosted service:
//
//	export DOCSAPI_KEY=mint_...          # an admin key that may write
//	export DOCSAPI_PROJECT=handbook      # the project to deploy
//	go run ./examples/redeploy-and-wait [-branch feature/x] [-timeout 15m]
//
// DOCSAPI_BASE_URL points it at another server that serves the deployment
// API. The trigger is sent once: when its outcome is unknown (a 5xx, a
// connection lost after sending) the program stops rather than risk a
// second deployment, and says so.
//
// It prints a line each time the deployment's status changes, then
//
//	deployed 9f2c1e0 "Document the --verbose flag" (3 files changed)
//
// and for a preview also "preview: https://...". A failed deployment prints
// the end of its build log; it, a timeout, Ctrl-C and a refused request end
// the program with a message on standard error and exit status 1. A
// deployment that was triggered goes on on the server, and its status ID
// is printed.
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

// logTail is how many of a failed build's last log lines are printed.
const logTail = 10

type config struct {
	key, baseURL, project string // from the environment
	branch                string // "" deploys the deployment branch
	wait                  docsapi.UpdateWaitParams
}

func main() {
	branch := flag.String("branch", "", "deploy a preview of this branch instead of the deployment branch")
	timeout := flag.Duration("timeout", 15*time.Minute, "how long to wait for the deployment")
	flag.Parse()
	cfg := config{
		key:     os.Getenv("DOCSAPI_KEY"),
		baseURL: os.Getenv("DOCSAPI_BASE_URL"),
		project: os.Getenv("DOCSAPI_PROJECT"),
		branch:  *branch,
		wait:    docsapi.UpdateWaitParams{Timeout: *timeout},
	}

	// Ctrl-C ends the wait (not the deployment) through the context.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "redeploy-and-wait:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	client, err := newClient(cfg)
	if err != nil {
		return err
	}

	var statusID, previewURL string
	if cfg.branch == "" {
		trigger, err := client.Deployments.TriggerUpdate(ctx, "")
		if err != nil {
			return explain(err, cfg.project)
		}
		statusID = trigger.StatusID
		fmt.Fprintf(stdout, "queued an update of %s: %s\n", cfg.project, statusID)
	} else {
		trigger, err := client.Deployments.TriggerPreview(ctx, "", cfg.branch)
		if err != nil {
			return explain(err, cfg.project)
		}
		statusID, previewURL = trigger.StatusID, trigger.PreviewURL
		fmt.Fprintf(stdout, "queued a preview of %s: %s\n", cfg.branch, statusID)
	}

	start := time.Now()
	var last docsapi.UpdateState
	wait := cfg.wait
	wait.OnUpdate = func(u *docsapi.UpdateStatus) { // every status read; print the changes
		if u.Status != last {
			fmt.Fprintf(stdout, "%6s  deployment %s: %s\n", time.Since(start).Round(time.Second), statusID, u.Status)
			last = u.Status
		}
	}
	status, err := client.Deployments.WaitUpdate(ctx, statusID, wait)
	var failed *docsapi.UpdateFailedError
	if errors.As(err, &failed) {
		logs := failed.Status.Logs
		for _, line := range logs[max(0, len(logs)-logTail):] {
			fmt.Fprintln(stdout, "  | "+line)
		}
	}
	if err != nil {
		return explain(err, cfg.project)
	}

	c := status.Commit
	files := len(c.FilesChanged.Added) + len(c.FilesChanged.Modified) + len(c.FilesChanged.Removed)
	subject, _, _ := strings.Cut(c.Message, "\n")
	fmt.Fprintf(stdout, "deployed %.7s %q (%d files changed)\n", c.SHA, subject, files)
	if previewURL != "" {
		fmt.Fprintln(stdout, "preview:", previewURL)
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
		return nil, errors.New("DOCSAPI_PROJECT is not set: export the ID of the project to deploy")
	}
	opts := []docsapi.Option{
		docsapi.WithProjectID(cfg.project),
		docsapi.WithUserAgent("redeploy-and-wait-example"),
	}
	if cfg.baseURL != "" {
		opts = append(opts, docsapi.WithBaseURL(cfg.baseURL))
	}
	return docsapi.NewClient(cfg.key, opts...)
}

// explain turns an error into a message that says what happened and what
// to do. The original error stays wrapped.
func explain(err error, project string) error {
	var (
		failed   *docsapi.UpdateFailedError
		timedOut *docsapi.UpdateWaitTimeoutError
		apiErr   *docsapi.APIError
	)
	switch {
	case errors.As(err, &failed):
		return fmt.Errorf("the deployment failed (its log ends above): %w", err)
	case errors.As(err, &timedOut) && errors.Is(err, context.Canceled):
		return fmt.Errorf("interrupted: the deployment goes on on the server: %w", err)
	case errors.As(err, &timedOut):
		return fmt.Errorf("gave up; the deployment goes on on the server: %w", err)
	case errors.Is(err, docsapi.ErrRateLimited):
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			return fmt.Errorf("rate limited: try again in %s: %w", apiErr.RetryAfter, err)
		}
		return fmt.Errorf("rate limited: try again later: %w", err)
	case errors.Is(err, docsapi.ErrUnauthorized):
		return fmt.Errorf("the key was refused (invalid, revoked or expired): %w", err)
	case errors.Is(err, docsapi.ErrForbidden):
		// The service says why: a read-only key, or a plan without previews.
		return fmt.Errorf("not allowed to deploy project %q: %w", project, err)
	case errors.Is(err, docsapi.ErrServer) || !errors.Is(err, docsapi.ErrInvalidParam) && !errors.As(err, &apiErr):
		// A trigger is never sent twice by the SDK: this one may or may
		// not have been queued.
		return fmt.Errorf("the outcome is unknown; check the dashboard before running again: %w", err)
	}
	return err
}
