package docsapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// StaticExportsService makes static exports of the documentation site: a
// job pre-renders the site into static files, and a bundle packs them into
// one archive behind a presigned download link. It needs an admin key;
// the hosted service offers it on enterprise plans (403 otherwise).
//
// The SDK never downloads a bundle. StaticExportBundle.URL is a presigned
// link to another host that carries its own signature: fetch it with a
// plain HTTP client and no Authorization header, for the API key must
// never reach that host. The client's own requests go to its base URL
// alone, and its redirect policy drops the key on any other host.
type StaticExportsService struct {
	client *Client
}

// StaticExportParams is the body of Start.
type StaticExportParams struct {
	// Domain is the primary domain of the deployment to export: its custom
	// domain (docs.example.com) or, without one, its platform subdomain
	// (acme.mintlify.app). Required; the hostname alone, without scheme,
	// port, path or trailing slash or dot.
	Domain string `json:"domain"`
	// Version labels the export; empty means the latest published version.
	Version string `json:"version,omitempty"`
	// Paths are the pages to export ("index", "guides/getting-started");
	// empty means every published page.
	Paths []string `json:"paths,omitempty"`
}

func (p StaticExportParams) validate() error {
	if err := checkHostname("domain", p.Domain); err != nil {
		return err
	}
	for i, path := range p.Paths {
		if strings.TrimSpace(path) == "" {
			return invalid("paths", "entry %d is empty", i)
		}
	}
	return nil
}

// StaticExportStatus is the state of a static export job. The service may
// add states: an unknown one is kept as sent and is not terminal.
type StaticExportStatus string

// The states the API reference documents.
const (
	StaticExportQueued    StaticExportStatus = "queued"
	StaticExportRunning   StaticExportStatus = "running"
	StaticExportCompleted StaticExportStatus = "completed" // ready for Bundle
	StaticExportFailed    StaticExportStatus = "failed"    // see StaticExportJob.Error
)

// Terminal reports whether the state is final: completed or failed.
func (s StaticExportStatus) Terminal() bool {
	return s == StaticExportCompleted || s == StaticExportFailed
}

// Known reports whether the state is one the API reference documents.
func (s StaticExportStatus) Known() bool {
	return s == StaticExportQueued || s == StaticExportRunning || s.Terminal()
}

// StaticExportJob is a static export job. jobId and status are required;
// other fields absent or null are zero values.
type StaticExportJob struct {
	// ID identifies the job (jobId on the wire).
	ID string
	// Status is the job's state; see StaticExportStatus.
	Status StaticExportStatus
	// Progress is the share done, from 0 to 100.
	Progress float64
	// PageCount is how many pages are exported so far.
	PageCount int64
	// CreatedAt is when the job was created, in UTC.
	CreatedAt time.Time
	// UpdatedAt is when the job last changed, in UTC.
	UpdatedAt time.Time
	// Error says why the job failed; empty unless it did.
	Error string
}

// StaticExportBundle is the archive of a completed export.
type StaticExportBundle struct {
	// JobID is the job the bundle packs.
	JobID string
	// URL is the presigned link to the archive (bundleUrl on the wire). It
	// needs no key, and must not be sent one: download it with a plain
	// HTTP request, before ExpiresAt. Call Bundle again for a new link.
	URL string
	// SizeBytes is the archive's size.
	SizeBytes int64
	// ExpiresAt is when URL stops working, in UTC.
	ExpiresAt time.Time
}

// StaticExportWaitParams tunes StaticExports.Wait. The zero value uses the
// defaults of WaitParams: polls start 2 s apart and grow towards 30 s, for
// at most 30 minutes.
type StaticExportWaitParams struct {
	// MinInterval is the shortest wait between two polls.
	MinInterval time.Duration
	// MaxInterval bounds the wait between two polls.
	MaxInterval time.Duration
	// Timeout bounds the whole wait. The context's deadline, if earlier,
	// also ends it.
	Timeout time.Duration
	// OnUpdate, if set, is called with every job read (its Progress and
	// PageCount suit a progress bar), in order and on the waiting
	// goroutine, including the final one. It must not block for long.
	OnUpdate func(job *StaticExportJob)
}

func (p StaticExportWaitParams) schedule() pollSchedule {
	return pollSchedule{minInterval: p.MinInterval, maxInterval: p.MaxInterval, timeout: p.Timeout}
}

// StaticExportFailedError is returned by StaticExports.Wait when the job
// ended with the state failed.
type StaticExportFailedError struct {
	// Job is the job as last read; its Error says why.
	Job *StaticExportJob
}

// Error names the job and gives the service's reason.
func (e *StaticExportFailedError) Error() string {
	msg := "docsapi: static export " + e.Job.ID + " failed"
	if e.Job.Error != "" {
		msg += ": " + e.Job.Error
	}
	return msg
}

// StaticExportWaitTimeoutError is returned by StaticExports.Wait when it
// stopped before the job ended: its Timeout elapsed or its context ended.
// It unwraps to the context error (context.DeadlineExceeded or
// context.Canceled). The job goes on on the server.
type StaticExportWaitTimeoutError struct {
	// Job is the last job read, or nil if no poll succeeded.
	Job *StaticExportJob
	// Waited is how long Wait ran.
	Waited time.Duration
	// LastErr is the error of the last poll, if it failed.
	LastErr error

	cause error
}

// Error says how long Wait ran and what it last saw.
func (e *StaticExportWaitTimeoutError) Error() string {
	var id, status string
	if e.Job != nil {
		id, status = e.Job.ID, string(e.Job.Status)
	}
	return stoppedWaiting("static export", e.Job != nil, id, status, e.Waited, e.cause, e.LastErr)
}

// Unwrap returns the context error that ended the wait.
func (e *StaticExportWaitTimeoutError) Unwrap() error { return e.cause }

// Start starts a static export of a deployment: POST /v1/static-export/jobs
// with {"domain", "version", "paths"}, answered 202 with the queued job.
// Follow it with Wait or Get. Like every trigger, Start is not sent again
// after an error whose outcome is unknown (see DeploymentsService).
func (s *StaticExportsService) Start(ctx context.Context, params StaticExportParams, opts ...RequestOption) (*StaticExportJob, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	job := new(StaticExportJob)
	req := apiRequest{method: http.MethodPost, path: "/v1/static-export/jobs", body: params}
	if err := s.client.do(ctx, req, opts, job); err != nil {
		return nil, err
	}
	return job, nil
}

// Get reads a static export job: GET /v1/static-export/jobs/{jobId}. An
// unknown job yields an error matching ErrNotFound.
func (s *StaticExportsService) Get(ctx context.Context, jobID string, opts ...RequestOption) (*StaticExportJob, error) {
	path, err := staticExportPath(jobID)
	if err != nil {
		return nil, err
	}
	job := new(StaticExportJob)
	if err := s.client.do(ctx, apiRequest{method: http.MethodGet, path: path}, opts, job); err != nil {
		return nil, err
	}
	return job, nil
}

// Wait polls a static export job until it is completed or failed, and
// returns it; then Bundle packs it. A failed job is returned together with
// a *StaticExportFailedError. It polls as AgentJobs.Wait does: at once,
// then at growing intervals with jitter; errors that can heal (network
// failures, 429, 5xx, a garbled body) do not stop it, others are returned
// at once; an unknown state counts as still running. When Timeout passes
// or ctx ends first, it returns a *StaticExportWaitTimeoutError. In every
// case the returned job is the last one read, or nil if no poll succeeded.
func (s *StaticExportsService) Wait(ctx context.Context, jobID string, params StaticExportWaitParams, opts ...RequestOption) (*StaticExportJob, error) {
	if err := params.schedule().validate(); err != nil {
		return nil, err
	}
	if _, err := staticExportPath(jobID); err != nil {
		return nil, err
	}
	return poll(ctx, s.client.cfg, params.schedule(), poller[StaticExportJob]{
		what: "static export", idKey: "job_id", id: jobID,
		get: func(ctx context.Context) (*StaticExportJob, error) {
			return s.Get(ctx, jobID, opts...)
		},
		status: func(j *StaticExportJob) string { return string(j.Status) },
		end: func(j *StaticExportJob) (bool, error) {
			if j.Status == StaticExportFailed {
				return true, &StaticExportFailedError{Job: j}
			}
			return j.Status.Terminal(), nil
		},
		onUpdate: params.OnUpdate,
		timedOut: func(last *StaticExportJob, waited time.Duration, lastErr, cause error) error {
			return &StaticExportWaitTimeoutError{Job: last, Waited: waited, LastErr: lastErr, cause: cause}
		},
	}, nil)
}

// Bundle packs a completed job into one archive and returns its download
// link: POST /v1/static-export/jobs/{jobId}/bundle. A job not completed yet
// is answered 409 (ErrConflict), an unknown one 404 (ErrNotFound). The SDK
// does not follow the link (see StaticExportsService). Not sent again
// after an error whose outcome is unknown: call it again yourself, since
// a second bundle only makes a new link.
func (s *StaticExportsService) Bundle(ctx context.Context, jobID string, opts ...RequestOption) (*StaticExportBundle, error) {
	path, err := staticExportPath(jobID)
	if err != nil {
		return nil, err
	}
	bundle := new(StaticExportBundle)
	if err := s.client.do(ctx, apiRequest{method: http.MethodPost, path: path + "/bundle"}, opts, bundle); err != nil {
		return nil, err
	}
	return bundle, nil
}

func staticExportPath(jobID string) (string, error) {
	if err := checkID("jobID", jobID); err != nil {
		return "", err
	}
	return "/v1/static-export/jobs/" + url.PathEscape(jobID), nil
}

// checkHostname accepts a DNS hostname alone: letters, digits and hyphens
// in dot-separated labels of 1 to 63 characters, 253 at most. The service
// wants the hostname only, so a URL's other parts are refused by name,
// which says more than "invalid character".
func checkHostname(param, host string) error {
	switch {
	case host == "":
		return invalid(param, "is empty")
	case strings.Contains(host, "://"):
		return invalid(param, "must be a hostname alone, without a scheme such as https://: got %q", host)
	case strings.ContainsAny(host, "/?#"):
		return invalid(param, "must be a hostname alone, without a path, a query or a trailing slash: got %q", host)
	case strings.Contains(host, "@"):
		return invalid(param, "must be a hostname alone, without credentials")
	case strings.Contains(host, ":"):
		return invalid(param, "must be a hostname alone, without a port: got %q", host)
	case strings.HasSuffix(host, "."):
		return invalid(param, "must not end with a dot: got %q", host)
	case len(host) > 253:
		return invalid(param, "is %d characters long; a hostname has at most 253", len(host))
	}
	for label := range strings.SplitSeq(host, ".") {
		if len(label) == 0 || len(label) > 63 {
			return invalid(param, "has a label of %d characters in %q; each has 1 to 63", len(label), host)
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return invalid(param, "has a label starting or ending with a hyphen in %q", host)
		}
		for _, r := range label {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			case r > 0x7f:
				return invalid(param, "has a non-ASCII character in %q; give an internationalised name in its xn-- form", host)
			default:
				return invalid(param, "has the character %q in %q; a hostname has letters, digits, hyphens and dots", r, host)
			}
		}
	}
	return nil
}

type staticExportJobWire struct {
	JobID     *string             `json:"jobId"`
	Status    *StaticExportStatus `json:"status"`
	Progress  *float64            `json:"progress"`
	PageCount count               `json:"pageCount"`
	CreatedAt *string             `json:"createdAt"`
	UpdatedAt *string             `json:"updatedAt"`
	Error     string              `json:"error"`
}

// UnmarshalJSON decodes the API's shape. jobId and status are required: a
// job without them could be neither followed nor told finished.
func (j *StaticExportJob) UnmarshalJSON(b []byte) error { return j.decodeBody(b) }

func (j *StaticExportJob) decodeBody(b []byte) error {
	const what = "static export job"
	var w staticExportJobWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	switch {
	case w.JobID == nil:
		return missingField(what, "jobId")
	case w.Status == nil:
		return missingField(what, "status")
	}
	created, err := parseTimestamp(what, "createdAt", w.CreatedAt)
	if err != nil {
		return err
	}
	updated, err := parseTimestamp(what, "updatedAt", w.UpdatedAt)
	if err != nil {
		return err
	}
	job := StaticExportJob{ID: *w.JobID, Status: *w.Status, PageCount: w.PageCount.n,
		CreatedAt: created, UpdatedAt: updated, Error: w.Error}
	if w.Progress != nil {
		job.Progress = *w.Progress
	}
	*j = job
	return nil
}

type staticExportBundleWire struct {
	JobID     string  `json:"jobId"`
	BundleURL *string `json:"bundleUrl"`
	SizeBytes count   `json:"sizeBytes"`
	ExpiresAt *string `json:"expiresAt"`
}

// UnmarshalJSON decodes the API's shape. bundleUrl is required: a bundle
// without its link is of no use.
func (b *StaticExportBundle) UnmarshalJSON(data []byte) error { return b.decodeBody(data) }

func (b *StaticExportBundle) decodeBody(data []byte) error {
	const what = "static export bundle"
	var w staticExportBundleWire
	if err := decodeWire(what, data, &w); err != nil {
		return err
	}
	if w.BundleURL == nil || *w.BundleURL == "" {
		return missingField(what, "bundleUrl")
	}
	expires, err := parseTimestamp(what, "expiresAt", w.ExpiresAt)
	if err != nil {
		return err
	}
	*b = StaticExportBundle{JobID: w.JobID, URL: *w.BundleURL, SizeBytes: w.SizeBytes.n, ExpiresAt: expires}
	return nil
}
