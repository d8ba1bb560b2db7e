// Command export-static-site makes a static copy of the documentation site,
// as a job that archives the docs would: it starts a static export of a
// deployment, waits for it with its progress shown, and prints the link to
// its bundle, an archive of the pre-rendered site.
//
// It shows StaticExports.Start, Wait with an OnUpdate callback and Bundle,
// and how a program tells the ways it can end apart: a failed export
// (*docsapi.StaticExportFailedError, with the service's reason), a wait that
// ran out of time or was interrupted (*docsapi.StaticExportWaitTimeoutError),
// a bundle refused as not ready (409, docsapi.ErrConflict) and a refused
// request (errors.Is with the sentinels, the service's reason in the
// *docsapi.APIError).
//
// Run it against the hosted service, where static export is on enterprise
// plans:
//
//	export DOCSAPI_KEY=mint_...   # an admin key
//	go run ./examples/export-static-site -domain docs.example.com \
//	    [-version 2024-06-01] [-path index -path guides/quickstart] \
//	    [-timeout 30m] [-download site.tar.gz]
//
// -domain is the deployment's hostname alone (its custom domain, or
// acme.mintlify.app without one); -path, repeated, exports those pages
// only. -job ID follows an export already started instead of starting
// one: the way back after a timeout or Ctrl-C, for the export goes on on
// the server. DOCSAPI_BASE_URL points it at another server that serves the
// static export API. The start is sent once: when its outcome is unknown
// the program stops rather than risk a second export, and says so.
//
// It prints a line each time the export's state, percentage or page count
// changes, then
//
//	bundle: https://...the presigned link...
//	size: 18432000 bytes (17.6 MiB)
//	expires: 2026-08-14T10:22:30Z
//
// The link needs no key: whoever holds it may download the bundle until it
// expires. With -download FILE the program downloads it with a plain HTTP
// client that never sends the API key, into a temporary file renamed to
// FILE once all of it arrived (an error or Ctrl-C leaves no file, and an
// older FILE as it was), and prints "wrote FILE (N bytes)". Every error ends
// it with a message on standard error and exit status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// sizeMargin is how far a download may run past the bundle's advertised
// size before it is cut off: room for a size the service rounded, while a
// host that sends without end cannot fill the disk.
const sizeMargin = 1 << 20

type config struct {
	key, baseURL string // from the environment
	params       docsapi.StaticExportParams
	jobID        string // follow this export instead of starting one
	download     string // "" prints the link alone
	wait         docsapi.StaticExportWaitParams
}

// pathList collects the repeated -path flag.
type pathList []string

func (p *pathList) String() string     { return strings.Join(*p, " ") }
func (p *pathList) Set(s string) error { *p = append(*p, s); return nil }

func main() {
	var cfg config
	flag.StringVar(&cfg.params.Domain, "domain", "", "the deployment's hostname alone, e.g. docs.example.com (required)")
	flag.StringVar(&cfg.params.Version, "version", "", "a label for the export; default the latest published version")
	flag.Var((*pathList)(&cfg.params.Paths), "path", "a page to export (repeat it); default every published page")
	flag.StringVar(&cfg.jobID, "job", "", "follow this export, already started, instead of starting one")
	flag.StringVar(&cfg.download, "download", "", "download the bundle to this file")
	flag.DurationVar(&cfg.wait.Timeout, "timeout", 30*time.Minute, "how long to wait for the export")
	flag.Parse()
	cfg.key, cfg.baseURL = os.Getenv("DOCSAPI_KEY"), os.Getenv("DOCSAPI_BASE_URL")

	// Ctrl-C ends the wait or the download (not the export) through the context.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "export-static-site:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	client, err := newClient(cfg)
	if err != nil {
		return err
	}

	jobID := cfg.jobID
	if jobID == "" {
		job, err := client.StaticExports.Start(ctx, cfg.params)
		if err != nil {
			return explain(err, "")
		}
		jobID = job.ID
		fmt.Fprintf(stdout, "started a static export of %s: %s\n", cfg.params.Domain, jobID)
	} else {
		fmt.Fprintf(stdout, "following static export %s\n", jobID)
	}

	start := time.Now()
	var last string
	wait := cfg.wait
	wait.OnUpdate = func(j *docsapi.StaticExportJob) { // every job read; print the changes
		progress := fmt.Sprintf("%s %.0f%%, %d pages", j.Status, j.Progress, j.PageCount)
		if progress != last {
			fmt.Fprintf(stdout, "%6s  export %s: %s\n", time.Since(start).Round(time.Second), jobID, progress)
			last = progress
		}
	}
	if _, err := client.StaticExports.Wait(ctx, jobID, wait); err != nil {
		return explain(err, jobID)
	}
	bundle, err := client.StaticExports.Bundle(ctx, jobID)
	if err != nil {
		return explain(err, jobID)
	}
	fmt.Fprintln(stdout, "bundle:", bundle.URL)
	fmt.Fprintf(stdout, "size: %d bytes (%.1f MiB)\n", bundle.SizeBytes, float64(bundle.SizeBytes)/(1<<20))
	fmt.Fprintln(stdout, "expires:", bundle.ExpiresAt.Format(time.RFC3339))

	if cfg.download == "" {
		return nil
	}
	n, err := download(ctx, bundle, cfg.download)
	if err != nil {
		return fmt.Errorf("downloading the bundle: %w (nothing written; the link works until it expires, and -job %s gives a new one)", err, jobID)
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", cfg.download, n)
	return nil
}

// newClient builds the client from the environment's values and checks the
// flags. The SDK never reads the environment itself.
func newClient(cfg config) (*docsapi.Client, error) {
	switch {
	case cfg.key == "":
		return nil, errors.New("DOCSAPI_KEY is not set: export an admin API key (mint_...)")
	case cfg.jobID == "" && cfg.params.Domain == "":
		return nil, errors.New("-domain is required: the deployment's hostname, such as docs.example.com")
	case cfg.jobID != "" && (cfg.params.Domain != "" || cfg.params.Version != "" || len(cfg.params.Paths) > 0):
		return nil, errors.New("-job follows an export already started: give it without -domain, -version and -path")
	}
	opts := []docsapi.Option{docsapi.WithUserAgent("export-static-site-example")}
	if cfg.baseURL != "" {
		opts = append(opts, docsapi.WithBaseURL(cfg.baseURL))
	}
	return docsapi.NewClient(cfg.key, opts...)
}

// download fetches the bundle's presigned link into path, and returns the
// bytes written. It uses a plain http.Client, not the SDK's: the link
// carries its own signature, and the API key must never reach the storage
// host. The body goes to a temporary file next to path, renamed to path only
// when all of it arrived; on an error the temporary file is removed, and a
// file already at path is left as it was.
func download(ctx context.Context, bundle *docsapi.StaticExportBundle, path string) (n int64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, bundle.URL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	limit := bundle.SizeBytes + sizeMargin
	switch {
	case resp.StatusCode != http.StatusOK:
		// The storage host answers an expired link 403.
		return 0, fmt.Errorf("the storage host answered %s", resp.Status)
	case resp.ContentLength > limit:
		return 0, fmt.Errorf("the storage host offers %d bytes; the bundle has %d", resp.ContentLength, bundle.SizeBytes)
	}

	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	n, err = io.Copy(f, io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return n, fmt.Errorf("after %d bytes: %w", n, err)
	case n > limit:
		return n, fmt.Errorf("the storage host sent more than the %d bytes of the bundle; stopped", bundle.SizeBytes)
	case n < bundle.SizeBytes:
		return n, fmt.Errorf("%d of the bundle's %d bytes arrived: cut short", n, bundle.SizeBytes)
	}
	// CreateTemp makes the file readable by its owner only; a copy of
	// published documentation is an ordinary file.
	if err := f.Chmod(0o644); err != nil {
		return n, err
	}
	if err := f.Sync(); err != nil {
		return n, err
	}
	if err := f.Close(); err != nil {
		return n, err
	}
	return n, os.Rename(f.Name(), path)
}

// explain turns an error of the API into a message that says what happened
// and what to do; jobID is "" before the export started. The original
// error stays wrapped.
func explain(err error, jobID string) error {
	var (
		failed   *docsapi.StaticExportFailedError
		timedOut *docsapi.StaticExportWaitTimeoutError
		apiErr   *docsapi.APIError
	)
	switch {
	case errors.As(err, &failed):
		return fmt.Errorf("the export failed: %w", err)
	case errors.As(err, &timedOut) && errors.Is(err, context.Canceled):
		return fmt.Errorf("interrupted: the export goes on on the server; follow it with -job %s: %w", jobID, err)
	case errors.As(err, &timedOut):
		return fmt.Errorf("gave up waiting: the export goes on on the server; follow it with -job %s: %w", jobID, err)
	case errors.Is(err, docsapi.ErrConflict) && jobID != "":
		// Wait saw the job completed, yet the service does not bundle it.
		return fmt.Errorf("the service has no bundle of export %s yet; try again later with -job %s: %w", jobID, jobID, err)
	case errors.Is(err, docsapi.ErrConflict):
		return fmt.Errorf("another static export of this deployment is under way: %w", err)
	case errors.Is(err, docsapi.ErrRateLimited):
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			return fmt.Errorf("rate limited: try again in %s: %w", apiErr.RetryAfter, err)
		}
		return fmt.Errorf("rate limited: try again later: %w", err)
	case errors.Is(err, docsapi.ErrUnauthorized):
		return fmt.Errorf("the key was refused (invalid, revoked or expired): %w", err)
	case errors.Is(err, docsapi.ErrForbidden):
		// The service says why: most often a plan without static export.
		return fmt.Errorf("static export is not allowed with this key: %w", err)
	case errors.Is(err, docsapi.ErrBadRequest):
		return fmt.Errorf("the service refused the export's parameters: %w", err)
	case errors.Is(err, docsapi.ErrNotFound):
		return fmt.Errorf("the service knows no static export %s: %w", jobID, err)
	case errors.Is(err, docsapi.ErrInvalidParam) || errors.As(err, &apiErr) && !errors.Is(err, docsapi.ErrServer):
		return err
	case jobID == "":
		// A start is never sent twice by the SDK: this one may or may not
		// have been accepted.
		return fmt.Errorf("the outcome is unknown; check the dashboard for an export under way before running again: %w", err)
	default:
		return fmt.Errorf("asking for the bundle failed; try again with -job %s: %w", jobID, err)
	}
}
